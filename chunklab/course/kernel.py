"""One graded notebook's kernel: started in a sandbox, driven cell by cell, watched.

The kernel runs in a fresh scratch folder. Where ``bwrap`` (Debian's ``bubblewrap``) is
installed it runs in a bubblewrap sandbox: no network, its own process and IPC namespaces,
a read-only view of the system, the Python installation and the chunklab package only (not
the course folder, so not ``solutions/``), a private ``/tmp`` and write access to its scratch
folder alone; every process it starts dies with it. Its address space is capped
(``RLIMIT_AS``); it holds no capabilities, even when the grader runs as root. The grader talks to it over ZeroMQ IPC sockets in a folder bound into the
sandbox and reads every output from the messages, in its own process.
"""

from __future__ import annotations

import os
import queue
import shutil
import sys
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Execution", "Kernel", "bwrap_available", "kernel_env", "sandbox_command"]

#: default address-space limit of a graded kernel
DEFAULT_MEMORY = 8 * 1024**3
_SYSTEM_DIRS = ("/usr", "/bin", "/lib", "/lib64", "/lib32", "/sbin", "/etc")


def bwrap_available() -> str | None:
    """The path of ``bwrap`` when bubblewrap is installed (and usable), else None."""
    return shutil.which("bwrap")


def sandbox_command(scratch: Path, runtime: Path, *, bwrap: str, readonly: Sequence[Path] = ()) -> list[str]:
    """The bubblewrap prefix that confines a kernel to ``scratch`` (and ``runtime`` for its sockets).

    ``readonly`` adds folders the kernel may read (the shared parts of the embedding cache).
    """
    import chunklab

    package = Path(chunklab.__file__).resolve().parent
    readable = {Path(p) for p in _SYSTEM_DIRS if Path(p).exists()}
    readable |= {Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix), package}
    readable.add(Path(sys.executable).resolve().parent.parent)
    readable |= set(readonly)
    # sys.path entries inside the installation only: the script's folder or the working
    # directory (the course checkout, /tmp) must stay out of view
    roots = [Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()]
    readable |= {Path(p) for p in sys.path if p and any(Path(p).resolve().is_relative_to(r) for r in roots)}
    # --cap-drop ALL: run as root, bwrap would otherwise keep every capability (mount, raw devices)
    args = [bwrap, "--unshare-all", "--cap-drop", "ALL", "--die-with-parent", "--new-session", "--proc", "/proc",
            "--dev", "/dev", "--tmpfs", "/tmp"]
    for path in sorted(readable, key=lambda p: len(p.parts)):
        if path.exists():
            args += ["--ro-bind", str(path), str(path)]
    for path in (scratch, runtime):
        args += ["--bind", str(path), str(path)]
    # in its own PID namespace the kernel's parent is PID 1, which ipykernel would take for a dead parent
    return [*args, "--unsetenv", "JPY_PARENT_PID", "--chdir", str(scratch), "--"]


@dataclass
class Execution:
    """What running one piece of code produced."""

    status: str  # "ok", "error", "timeout", "interrupted" (past its limit, stopped) or "died"
    outputs: list[dict[str, Any]] = field(default_factory=list)
    ename: str = ""
    evalue: str = ""
    user_expressions: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    interrupted: bool = False  # an interrupt was sent when the limit was reached


class Kernel:
    """A Python kernel for one submission (use as a context manager)."""

    def __init__(self, scratch: Path, runtime: Path, *, sandbox: bool | None = None,
                 memory: int | None = DEFAULT_MEMORY, env: dict[str, str] | None = None,
                 readonly: Sequence[Path] = ()) -> None:
        bwrap = bwrap_available()
        if sandbox and not bwrap:
            raise RuntimeError("sandbox requested but bubblewrap is not installed (apt-get install bubblewrap)")
        if sandbox is None and not bwrap:
            warnings.warn(
                "bubblewrap (bwrap) is not installed: graded kernels run UNSANDBOXED and can read any file "
                "the grader can, solutions/ included. Install it: apt-get install bubblewrap",
                RuntimeWarning,
                stacklevel=2,
            )
        self.sandboxed = bool(bwrap) and sandbox is not False
        self.scratch, self.runtime = scratch, runtime
        prefix: list[str] = []
        if memory:
            prefix += [sys.executable, "-m", "chunklab.course.limits", str(int(memory)), "--"]
        if self.sandboxed:
            prefix += sandbox_command(scratch, runtime, bwrap=bwrap, readonly=readonly)
        self.prefix = prefix
        self.env = env or {}
        self.km: Any = None
        self.kc: Any = None
        self._log: Any = None
        self._started_at = 0

    def __enter__(self) -> Kernel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    def start(self, timeout: float = 60.0) -> None:
        """Start the kernel and wait until it answers (RuntimeError if it does not)."""
        from jupyter_client import KernelManager

        prefix = self.prefix

        class SandboxedKernelManager(KernelManager):
            def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
                return [*prefix, *super().format_kernel_cmd(extra_arguments)]

        km = SandboxedKernelManager(kernel_name="python3", transport="ipc", ip=str(self.runtime / "kernel"))
        km.connection_file = str(self.runtime / "kernel.json")
        self._log = (self.runtime / "kernel.log").open("wb")
        km.start_kernel(cwd=str(self.scratch), env=self.env, stdout=self._log, stderr=self._log)
        self.km = km
        kc = km.client()
        kc.start_channels()
        self.kc = kc
        try:
            kc.wait_for_ready(timeout=timeout)
        except RuntimeError as exc:
            raise RuntimeError(f"the kernel did not start within {timeout:g} s ({exc})") from exc
        self._log.flush()
        self._started_at = (self.runtime / "kernel.log").stat().st_size  # past ipykernel's start-up banner

    def alive(self) -> bool:
        """Whether the kernel process is still running."""
        return bool(self.km and self.km.is_alive())

    def run(self, code: str, timeout: float, *, silent: bool = False,
            user_expressions: dict[str, str] | None = None, interrupt: float = 0.0) -> Execution:
        """Execute ``code``; outputs as notebook output dicts. Stops at once if the kernel dies.

        Past ``timeout`` the status is ``"timeout"``; with ``interrupt`` > 0 the kernel is
        interrupted then (an ``interrupt_request`` on the control channel: a signal would
        not cross the sandbox) and, when the cell stops within ``interrupt`` more seconds,
        the status is ``"interrupted"`` and the kernel can run the next cell.
        """
        from nbformat.v4 import output_from_msg

        kc = self.kc
        t0 = time.monotonic()
        deadline = t0 + timeout
        msg_id = kc.execute(code, silent=silent, store_history=not silent, allow_stdin=False,
                            user_expressions=user_expressions or {}, stop_on_error=False)
        result = Execution("ok")
        idle = reply = interrupted = False
        while not (idle and reply):
            if time.monotonic() > deadline:
                if interrupt > 0 and not interrupted:
                    kc.control_channel.send(kc.session.msg("interrupt_request", {}))
                    interrupted = result.interrupted = True
                    deadline = time.monotonic() + interrupt
                    result.seconds = time.monotonic() - t0
                    continue
                result.status = "timeout"
                break
            if not self.alive():
                result.status = "died"
                break
            try:
                msg = kc.get_iopub_msg(timeout=0.05)
            except queue.Empty:
                msg = None
            if msg is not None and msg["parent_header"].get("msg_id") == msg_id:
                kind = msg["msg_type"]
                if kind == "status" and msg["content"]["execution_state"] == "idle":
                    idle = True
                elif kind == "clear_output":
                    result.outputs.clear()
                elif kind in ("stream", "display_data", "execute_result", "error"):
                    result.outputs.append(output_from_msg(msg))
                continue
            try:
                rep = kc.get_shell_msg(timeout=0.05)
            except queue.Empty:
                continue
            if rep["parent_header"].get("msg_id") == msg_id:
                reply = True
                content = rep["content"]
                if content.get("status") != "ok":
                    result.status = "error"
                    result.ename, result.evalue = content.get("ename", "Error"), content.get("evalue", "")
                result.user_expressions = content.get("user_expressions") or {}
        if interrupted:
            if result.status != "timeout" and idle and reply:
                result.status = "interrupted"
            return result  # seconds: when the limit was reached
        result.seconds = time.monotonic() - t0
        return result

    def shutdown(self) -> None:
        """Kill the kernel (and, in the sandbox, everything it started) and close the channels."""
        if self.kc is not None:
            self.kc.stop_channels()
            self.kc = None
        if self.km is not None:
            if self.km.has_kernel:
                self.km.shutdown_kernel(now=True)
            self.km.cleanup_resources()
            self.km = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def log_tail(self, lines: int = 3) -> str:
        """The last lines the kernel process wrote to its stdout/stderr (for a death's reason)."""
        path = self.runtime / "kernel.log"
        text = path.read_bytes()[self._started_at:].decode("utf-8", errors="replace") if path.exists() else ""
        return " | ".join(ln.strip() for ln in text.strip().splitlines()[-lines:] if ln.strip())

    def exit_code(self) -> int | None:
        """The kernel process's exit status once it has died (None while it runs)."""
        proc = getattr(getattr(self.km, "provisioner", None), "process", None)
        return proc.poll() if proc is not None else None


def kernel_env(scratch: Path, cache: Path | None) -> dict[str, str]:
    """The environment of a graded kernel: nothing of the grader's but what running needs."""
    keep = ("PATH", "LANG", "LC_ALL", "TZ", "CHUNKLAB_TORCH_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env.update(HOME=str(scratch), IPYTHONDIR=str(scratch / ".ipython"), MPLCONFIGDIR=str(scratch / ".matplotlib"),
               JUPYTER_PLATFORM_DIRS="1", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               TOKENIZERS_PARALLELISM="false", PYTHONWARNINGS="ignore", TMPDIR=str(scratch / ".tmp"))
    if cache is not None:
        env["CHUNKLAB_CACHE"] = str(cache)
    return env
