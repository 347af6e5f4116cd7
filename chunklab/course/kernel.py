"""One graded notebook's kernel: started in a sandbox, driven cell by cell, watched.

The kernel runs in a fresh scratch folder. Where ``bwrap`` (Debian's ``bubblewrap``) is
installed it runs in a bubblewrap sandbox: no network, its own process and IPC namespaces,
a read-only view of the system, the Python installation and the chunklab package only (not
the course folder, so not ``solutions/``), a private ``/tmp`` and a scratch folder that are
size-capped memory file systems, and a runtime folder for its sockets; every process it starts
dies with it. Its address space and the size of any file it writes are capped; when the grader
runs as root the kernel runs as an unprivileged user with no capabilities. The grader talks to
it over ZeroMQ IPC sockets, refuses messages past a size cap, keeps at most a capped amount of
output per cell and per notebook, and reads the kernel's own stdout/stderr from a file that
lives outside every folder the kernel can reach (opened before the kernel starts, read by
descriptor, never by path). Everything the kernel sends is data to validate, never trusted.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING

from chunklab.course.messages import (
    MalformedMessage,
    NotebookOutput,
    _content,
    _dropped,
    _output_size,
    _parent_id,
    _text,
    notebook_output,
)
from chunklab.course.sandbox import (
    DEFAULT_MEMORY,
    Limits,
    _size,
    bwrap_available,
    drops_to,
    sandbox_command,
    sandbox_line,
)
from chunklab.course.selfcheck import GRADING_ENV

if TYPE_CHECKING:
    import zmq
    from jupyter_client import KernelManager
    from jupyter_client.blocking.client import BlockingKernelClient

__all__ = [
    "Execution",
    "Kernel",
    "Limits",
    "MalformedMessage",
    "bwrap_available",
    "kernel_env",
    "sandbox_command",
    "sandbox_line",
]

#: default address-space limit of a graded kernel
_LOG_TAIL_BYTES = 8192
_QUEUED_MESSAGES = 128


@dataclass
class Execution:
    """What running one piece of code produced."""

    status: str  # "ok", "error", "timeout", "interrupted" (past its limit, stopped) or "died"
    outputs: list[NotebookOutput] = field(default_factory=list)
    ename: str = ""
    evalue: str = ""
    user_expressions: dict[str, object] = field(default_factory=dict)
    seconds: float = 0.0
    interrupted: bool = False  # an interrupt was sent when the limit was reached
    truncated: bool = False  # output past the per-cell or per-notebook cap was dropped


class Kernel:
    """A Python kernel for one submission (use as a context manager)."""

    def __init__(
        self,
        scratch: Path,
        runtime: Path,
        *,
        sandbox: bool | None = None,
        memory: int | None = DEFAULT_MEMORY,
        env: dict[str, str] | None = None,
        readonly: Sequence[Path] = (),
        limits: Limits | None = None,
        files: Sequence[tuple[Path, Path]] = (),
        package_view: Path | None = None,
    ) -> None:
        bwrap = bwrap_available()
        if sandbox and not bwrap:
            raise RuntimeError(
                "sandbox requested but bubblewrap is not installed (apt-get install bubblewrap)"
            )
        if sandbox is None and not bwrap:
            warnings.warn(
                "bubblewrap (bwrap) is not installed: graded kernels run UNSANDBOXED and can read any file "
                "the grader can, solutions/ included. Install it: apt-get install bubblewrap",
                RuntimeWarning,
                stacklevel=2,
            )
        self.limits = limits or Limits(memory=memory)
        self.sandboxed = bool(bwrap) and sandbox is not False
        self.scratch, self.runtime = scratch, runtime
        self.uid = drops_to() if self.sandboxed else None
        prefix: list[str] = []
        if self.sandboxed and bwrap:
            prefix += sandbox_command(
                scratch,
                runtime,
                bwrap=bwrap,
                readonly=readonly,
                limits=self.limits,
                files=files,
                package_view=package_view,
            )
        else:
            for host, inside in files:
                if not inside.exists():
                    shutil.copyfile(host, inside)
        helper = [sys.executable, "-m", "chunklab.course.limits", "--file-size", str(self.limits.scratch)]
        if self.limits.memory:
            helper += ["--memory", str(int(self.limits.memory))]
        if self.uid is not None:
            helper += ["--uid", str(self.uid), "--gid", str(self.uid)]
        self.prefix = [*prefix, *helper, "--"]
        self.env = dict(env or {})
        # the kernel must import the grader's own chunklab (an editable install may point at another checkout)
        self.env["PYTHONPATH"] = str(_package_parent())
        if package_view is not None and not self.sandboxed:  # first on the path (the files stay readable)
            self.env["PYTHONPATH"] = str(package_view.parent)
        self.km: KernelManager | None = None
        self.kc: BlockingKernelClient | None = None
        self._log: IO[bytes] | None = None
        self._started_at = 0
        self._stored = 0  # bytes of output kept so far in this notebook
        self._outputs = 0  # outputs kept so far in this notebook
        self._monitor: zmq.Socket | None = None  # reports a dropped output connection
        self._monitored: zmq.Socket | None = None
        self._poll: zmq.Poller | None = None
        self._unproven = False  # the output connection was renewed and has heard nothing since

    def describe(self) -> str:
        """One line: which sandbox and which limits."""
        return sandbox_line(self.sandboxed, self.limits)

    def __enter__(self) -> Kernel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    def start(self, timeout: float = 60.0) -> None:
        """Start the kernel and wait until it answers (RuntimeError if it does not)."""
        import zmq
        from jupyter_client import KernelManager

        prefix, uid, runtime = self.prefix, self.uid, self.runtime

        class SandboxedKernelManager(KernelManager):
            def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
                if uid is not None:  # the unprivileged kernel must read its connection file
                    os.chown(self.connection_file, uid, uid)
                command = super().format_kernel_cmd(extra_arguments)
                # ipykernel, with an output socket that queues for a slow grader instead of dropping
                command = ["chunklab.course.kernel_main" if c == "ipykernel_launcher" else c for c in command]
                return [*prefix, *command]

        if uid is not None:
            os.chown(runtime, uid, uid)
            for entry in runtime.rglob("*"):
                if not entry.is_symlink():
                    os.chown(entry, uid, uid)
        km = SandboxedKernelManager(kernel_name="python3", transport="ipc", ip=str(self.runtime / "kernel"))
        km.connection_file = str(self.runtime / "kernel.json")
        # the kernel's stdout/stderr: an unnamed file outside every folder the kernel can reach,
        # read by descriptor
        self._log = tempfile.TemporaryFile()
        km.start_kernel(cwd=str(self.scratch), env=self.env, stdout=self._log, stderr=self._log)
        self.km = km
        km.client_factory = _capped_client(self.limits)
        kc = km.client(context=zmq.Context())
        kc.start_channels()
        self.kc = kc
        try:
            kc.wait_for_ready(timeout=timeout)
        except RuntimeError as exc:
            raise RuntimeError(f"the kernel did not start within {timeout:g} s ({exc})") from exc
        self._watch_output()
        self._started_at = os.fstat(self._log.fileno()).st_size  # past ipykernel's start-up banner

    def alive(self) -> bool:
        """Whether the kernel process is still running."""
        return bool(self.km and self.km.is_alive())

    def run(
        self,
        code: str,
        timeout: float,
        *,
        silent: bool = False,
        user_expressions: dict[str, str] | None = None,
        interrupt: float = 0.0,
    ) -> Execution:
        """Execute ``code``; outputs as notebook output dicts. Stops at once if the kernel dies.

        Past ``timeout`` the status is ``"timeout"``; with ``interrupt`` > 0 the kernel is
        interrupted then (an ``interrupt_request`` on the control channel: a signal would
        not cross the sandbox) and, when the cell stops within ``interrupt`` more seconds,
        the status is ``"interrupted"`` and the kernel can run the next cell. A message that
        breaks the protocol raises :class:`MalformedMessage`; output past the caps is dropped.
        """
        kc = self.kc
        assert kc is not None, "the kernel is not started"
        t0 = time.monotonic()
        deadline = t0 + timeout
        msg_id = kc.execute(
            code,
            silent=silent,
            store_history=not silent,
            allow_stdin=False,
            user_expressions=user_expressions or {},
            stop_on_error=False,
        )
        result = Execution("ok")
        kept = count = 0  # bytes and outputs kept for this cell
        idle = reply = interrupted = False
        markers: set[str] = set()  # kernel_info requests sent after the output connection was renewed
        marked = False  # one of them came back on the new connection: it hears everything from then on
        marker_sent = 0.0
        renewed = self._unproven  # a connection renewed in an earlier cell that has heard nothing yet
        stream = _Stream()  # the stream output that the next message to the same stream continues
        while not (reply and (idle or marked)):
            if self._output_dropped():
                # a message past the cap dropped the output connection (and what it carried); connect
                # afresh, and ask the kernel something: its answer on the new connection comes after
                # this cell's idle status, so once it arrives nothing of this cell is still on its way
                if not result.truncated:
                    result.truncated = True
                    stream.close()
                    result.outputs.append(_dropped(f"output past {_size(self._iopub_cap)} in one message"))
                self._reconnect_output()
                renewed, marked, marker_sent = True, False, 0.0
            if renewed and not marked and (not markers or (reply and time.monotonic() - marker_sent > 1.0)):
                # the first at once; once the cell has replied, again each second: one answered before the
                # new subscription reached the kernel is lost (the kernel answers them after the cell)
                markers.add(kc.kernel_info())
                marker_sent = time.monotonic()
            if time.monotonic() > deadline:
                if interrupt > 0 and not interrupted:
                    kc.control_channel.send(kc.session.msg("interrupt_request", {}))
                    interrupted = result.interrupted = True
                    deadline = time.monotonic() + interrupt
                    result.seconds = time.monotonic() - t0
                    continue
                result.status = "timeout"
                break
            ready = dict(self._poller().poll(50))
            if not ready:
                if not self.alive():
                    result.status = "died"
                    break
                continue
            if ready.get(kc.iopub_channel.socket):
                msg = kc.iopub_channel.get_msg(timeout=0)
                self._unproven = False
                parent = _parent_id(msg)
                if parent in markers:
                    marked = True
                elif parent == msg_id:
                    kind = msg.get("msg_type")
                    content = _content(msg)
                    if kind == "status" and content.get("execution_state") == "idle":
                        idle = True
                    elif kind == "clear_output":
                        self._stored -= kept
                        self._outputs -= count
                        kept = count = 0
                        stream.close()
                        result.outputs[:] = result.outputs[-1:] if result.truncated else []  # the note stays
                    elif kind in ("stream", "display_data", "execute_result", "error"):
                        output = notebook_output(kind, content)
                        joins = stream.continued_by(output)
                        # a message that continues a stream costs its text and a slot, not a new output
                        size = len(output["text"]) + 8 if joins else _output_size(output)
                        new = 0 if joins else 1
                        past = self._past_caps(kept + size, self._stored + size, count + new)
                        if (
                            past or result.truncated
                        ):  # nothing is kept after the note saying output was dropped
                            if not result.truncated:
                                result.truncated = True
                                stream.close()
                                result.outputs.append(_dropped(past))
                        else:
                            kept += size
                            count += new
                            self._stored += size
                            self._outputs += new
                            if joins:
                                stream.parts.append(output["text"])
                            else:
                                stream.close()
                                result.outputs.append(output)
                                stream.open(output)
                continue  # every output message waiting is read before the next reply
            if ready.get(kc.shell_channel.socket):
                rep = kc.shell_channel.get_msg(timeout=0)
                if _parent_id(rep) == msg_id:
                    reply = True
                    content = _content(rep)
                    if content.get("status") != "ok":
                        result.status = "error"
                        result.ename = _text(content.get("ename", "Error"), "ename")[:200]
                        result.evalue = _text(content.get("evalue", ""), "evalue")[:2000]
                    expressions = content.get("user_expressions") or {}
                    if not isinstance(expressions, dict):
                        raise MalformedMessage(
                            f"user_expressions is a {type(expressions).__name__}, not a dict"
                        )
                    result.user_expressions = expressions
        stream.close()
        if interrupted:
            if result.status != "timeout" and reply and (idle or marked):
                result.status = "interrupted"
            return result  # seconds: when the limit was reached
        result.seconds = time.monotonic() - t0
        return result

    def _past_caps(self, cell_bytes: int, notebook_bytes: int, cell_outputs: int) -> str:
        """What an output would go past (``output past 1 MiB per cell``), or '' when it can be kept."""
        lim = self.limits
        if cell_bytes > lim.output_cell:
            return f"output past {_size(lim.output_cell)} per cell"
        if notebook_bytes > lim.output_notebook:
            return f"output past {_size(lim.output_notebook)} per notebook"
        if cell_outputs > lim.outputs_cell:
            return f"outputs past {lim.outputs_cell:,} per cell"
        if self._outputs + 1 > lim.outputs_notebook:
            return f"outputs past {lim.outputs_notebook:,} per notebook"
        return ""

    @property
    def _iopub_cap(self) -> int:
        return int(min(self.limits.message, self.limits.output_cell + 4096))

    def _reconnect_output(self) -> None:
        """A fresh connection to the kernel's output socket (ZeroMQ gives up after a refused message).

        Until a message arrives on it, the new subscription may not have reached the kernel yet:
        :meth:`run` asks the kernel something and waits for the answer there before it trusts it.
        """
        kc = self.kc
        assert kc is not None, "the kernel is not started"
        old = kc._iopub_channel
        kc._iopub_channel = None
        if old is not None:
            self._close_monitor()
            old.close()
        self._watch_output()
        self._unproven = True

    def _watch_output(self) -> None:
        """Connect the output channel with a monitor that reports when ZeroMQ drops the connection."""
        import zmq

        kc = self.kc
        assert kc is not None, "the kernel is not started"
        socket = kc.iopub_channel.socket
        self._monitor = socket.get_monitor_socket(zmq.EVENT_DISCONNECTED)
        self._monitored = socket
        self._poll = None

    def _close_monitor(self) -> None:
        if self._monitor is not None and self._monitored is not None:  # set and cleared together
            try:
                self._monitored.disable_monitor()
            finally:
                self._monitor.close(linger=0)
                self._monitor = self._monitored = None

    def _output_dropped(self) -> bool:
        """Whether the output connection was dropped (a message past the cap), read without waiting."""
        import zmq
        from zmq.utils.monitor import parse_monitor_message

        dropped = False
        while self._monitor is not None and self._monitor.poll(0):
            frames = self._monitor.recv_multipart()
            dropped = dropped or parse_monitor_message(frames)["event"] == zmq.EVENT_DISCONNECTED
        return dropped

    def _poller(self) -> zmq.Poller:
        """A poller on the output and reply sockets (made again when the output connection is renewed)."""
        import zmq

        if self._poll is None:
            kc = self.kc
            assert kc is not None, "the kernel is not started"
            self._poll = zmq.Poller()
            self._poll.register(kc.iopub_channel.socket, zmq.POLLIN)
            self._poll.register(kc.shell_channel.socket, zmq.POLLIN)
        return self._poll

    def shutdown(self) -> None:
        """Kill the kernel (and, in the sandbox, everything it started) and close the channels."""
        if self.kc is not None:
            self._close_monitor()
            context = self.kc.context
            self.kc.stop_channels()
            self.kc = None
            context.destroy(linger=0)
        if self.km is not None:
            if self.km.has_kernel:
                self.km.shutdown_kernel(now=True)
            self.km.cleanup_resources()
            self.km = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def log_tail(self, lines: int = 3) -> str:
        """The last lines the kernel process wrote to its stdout/stderr (for a death's reason), capped.

        Read through the descriptor opened before the kernel started: no path is opened, so
        nothing the kernel can create (a link, a FIFO) is ever followed.
        """
        if self._log is None:
            return ""
        fd = self._log.fileno()
        end = os.fstat(fd).st_size
        start = max(self._started_at, end - _LOG_TAIL_BYTES)
        text = os.pread(fd, max(0, end - start), start).decode("utf-8", errors="replace")
        return " | ".join(ln.strip()[:300] for ln in text.strip().splitlines()[-lines:] if ln.strip())

    def exit_code(self) -> int | None:
        """The kernel process's exit status once it has died (None while it runs)."""
        proc = getattr(getattr(self.km, "provisioner", None), "process", None)
        return proc.poll() if proc is not None else None


class _Stream:
    """The stream output a cell's next message to the same stream is joined to.

    How a cell's prints are cut into messages depends on the kernel's flush timer (on a loaded
    machine ``print('x')`` can arrive as ``'x'`` and ``'\\n'``); what is stored, and what counts as
    one output toward the caps, does not. The grader's own notes are never continued.
    """

    def __init__(self) -> None:
        self.output: NotebookOutput | None = None
        self.parts: list[str] = []

    def continued_by(self, output: NotebookOutput) -> bool:
        """Whether ``output`` is more of the open stream (same stream name)."""
        return (
            self.output is not None
            and output["output_type"] == "stream"
            and output["name"] == self.output["name"]
        )

    def open(self, output: NotebookOutput) -> None:
        """Make ``output`` the open stream when it is one."""
        if output["output_type"] == "stream":
            self.output, self.parts = output, [output["text"]]

    def close(self) -> None:
        """Join the open stream's parts into its text; nothing continues it any more."""
        if self.output is not None and len(self.parts) > 1:
            self.output["text"] = "".join(self.parts)
        self.output, self.parts = None, []


def _capped_client(limits: Limits) -> type:
    """A blocking kernel client whose sockets refuse messages past the caps and queue only a few.

    Output messages (iopub) may be as big as the per-cell output cap (bigger ones could not be
    kept anyway); replies (shell: the hidden checks' answers) as big as ``limits.message``. A
    bigger message drops the connection (ZeroMQ reconnects) and what it carried is lost; at
    most ``_QUEUED_MESSAGES`` wait in the grader's memory per socket.
    """
    import zmq
    from jupyter_client.blocking.client import BlockingKernelClient

    class CappedClient(BlockingKernelClient):
        def _create_connected_socket(self, channel: str, identity: bytes | None = None) -> zmq.Socket:
            size = (
                limits.message
                if channel in ("shell", "control")
                else min(limits.message, limits.output_cell + 4096)
            )
            self.context.setsockopt(zmq.MAXMSGSIZE, int(size))
            self.context.setsockopt(zmq.RCVHWM, _QUEUED_MESSAGES)
            return super()._create_connected_socket(channel, identity)

    return CappedClient


def _package_parent() -> Path:
    import chunklab

    return Path(chunklab.__file__).resolve().parent.parent


def kernel_env(scratch: Path, cache: Path | None) -> dict[str, str]:
    """The environment of a graded kernel: nothing of the grader's but what running needs."""
    keep = ("PATH", "LANG", "LC_ALL", "TZ", "CHUNKLAB_TORCH_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env.update(
        HOME=str(scratch),
        IPYTHONDIR=str(scratch / ".ipython"),
        MPLCONFIGDIR=str(scratch / ".matplotlib"),
        JUPYTER_PLATFORM_DIRS="1",
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        TOKENIZERS_PARALLELISM="false",
        PYTHONWARNINGS="ignore",
        TMPDIR=str(scratch / ".tmp"),
    )
    env[GRADING_ENV] = "1"  # check() cells do nothing in a graded kernel
    if cache is not None:
        env["CHUNKLAB_CACHE"] = str(cache)
    return env
