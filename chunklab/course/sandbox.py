"""The bubblewrap sandbox a graded kernel runs in, and the limits it runs under.

:func:`sandbox_command` is the ``bwrap`` prefix: no network, its own process, IPC and UTS
namespaces, a read-only view of the system, the Python installation and the chunklab package
(not the course), a size-capped private ``/tmp`` and scratch folder, the runtime folder for its
sockets. Run as root, bwrap makes no user namespace, so :mod:`chunklab.course.limits` can drop
the kernel to a real unprivileged uid. :func:`sandbox_line` says all that in one line.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "DEFAULT_MEMORY",
    "Limits",
    "bwrap_available",
    "bwrap_version",
    "drops_to",
    "sandbox_command",
    "sandbox_line",
]

DEFAULT_MEMORY = 8 * 1024**3
_SYSTEM_DIRS = ("/usr", "/bin", "/lib", "/lib64", "/lib32", "/sbin", "/etc")


@dataclass(frozen=True)
class Limits:
    """What one graded kernel may use (sizes in bytes; None: no cap)."""

    memory: int | None = DEFAULT_MEMORY  # address space (RLIMIT_AS)
    tmp: int = 512 * 1024**2  # the sandbox's private /tmp (a size-capped tmpfs)
    scratch: int = (
        1024**3
    )  # the scratch folder (a size-capped tmpfs in the sandbox); also the cap on one file
    output_cell: int = 1024**2  # output kept per cell; the rest is dropped with a note
    output_notebook: int = 8 * 1024**2  # output kept per notebook
    message: int = 8 * 1024**2  # a bigger message from the kernel is refused by the socket
    outputs_cell: int = 5000  # output messages kept per cell; the rest are dropped with a note
    outputs_notebook: int = 20000  # output messages kept per notebook

    def describe(self) -> str:
        """The limits in one phrase (for the line that says how notebooks are graded)."""
        mem = _size(self.memory) if self.memory else "no"
        return (
            f"memory {mem}, /tmp {_size(self.tmp)}, scratch {_size(self.scratch)}, output "
            f"{_size(self.output_cell)} per cell / {_size(self.output_notebook)} per notebook "
            f"({self.outputs_cell:,} / {self.outputs_notebook:,} outputs), messages {_size(self.message)}"
        )


def _size(n: int | None) -> str:
    if not n:
        return "none"
    for unit, scale in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= scale:
            return f"{n / scale:g} {unit}"
    return f"{n} B"


def bwrap_available() -> str | None:
    """The path of ``bwrap`` when bubblewrap is installed (and usable), else None."""
    return shutil.which("bwrap")


def bwrap_version(bwrap: str) -> str:
    """``bubblewrap 0.8.0`` (or just ``bubblewrap`` when it does not say)."""
    try:
        out = subprocess.run(
            [bwrap, "--version"], capture_output=True, text=True, timeout=10, check=False
        ).stdout
    except (OSError, subprocess.SubprocessError):
        out = ""
    return out.strip() or "bubblewrap"


def drops_to() -> int | None:
    """The uid a sandboxed kernel runs as: an unprivileged one when the grader is root, else None."""
    from chunklab.course.limits import UNPRIVILEGED

    return UNPRIVILEGED if os.geteuid() == 0 else None


def sandbox_line(sandbox: bool | None, limits: Limits) -> str:
    """One line naming the sandbox a kernel gets (``sandbox`` as in :class:`Kernel`) and its limits."""
    bwrap = bwrap_available()
    if bwrap and sandbox is not False:
        uid = drops_to()
        who = f"kernel as uid {uid}, no capabilities" if uid is not None else "no capabilities"
        where = f"{bwrap_version(bwrap)} ({who}, no network)"
    else:
        where = "none, kernels run UNSANDBOXED"
    return f"sandbox: {where}; limits: {limits.describe()}"


def sandbox_command(
    scratch: Path,
    runtime: Path,
    *,
    bwrap: str,
    readonly: Sequence[Path] = (),
    limits: Limits | None = None,
    files: Sequence[tuple[Path, Path]] = (),
    package_view: Path | None = None,
) -> list[str]:
    """The bubblewrap prefix that confines a kernel to ``scratch`` (and ``runtime`` for its sockets).

    ``readonly`` adds folders the kernel may read (the shared parts of the embedding cache);
    ``files`` are ``(host file, path inside)`` pairs bound read-only into the scratch folder
    (the submission's copy); ``package_view`` is a redacted copy of the package
    (:func:`chunklab.course.redact.build_view`), bound over the package's own folder so the
    kernel sees nothing else at that path. ``scratch`` and ``/tmp`` are memory file systems
    capped by ``limits``.
    Run as root, bwrap makes no user namespace: the kernel starts as root inside and
    :mod:`chunklab.course.limits` drops it to an unprivileged user before the kernel runs.
    """
    import chunklab

    limits = limits or Limits()
    package = Path(chunklab.__file__).resolve().parent
    readable = {Path(p) for p in _SYSTEM_DIRS if Path(p).exists()}
    readable |= {Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix), package}
    readable.add(Path(sys.executable).resolve().parent.parent)
    readable |= set(readonly)
    # sys.path entries inside the installation only: the script's folder or the working
    # directory (the course checkout, /tmp) must stay out of view
    roots = [Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()]
    readable |= {Path(p) for p in sys.path if p and any(Path(p).resolve().is_relative_to(r) for r in roots)}
    readable = {p for p in readable if p.exists()}
    if os.geteuid() == 0:
        # as root: no user namespace (the kernel gets a real unprivileged uid), capabilities dropped by limits
        args = [
            bwrap,
            "--unshare-ipc",
            "--unshare-pid",
            "--unshare-net",
            "--unshare-uts",
            "--unshare-cgroup-try",
        ]
    else:
        args = [bwrap, "--unshare-all", "--cap-drop", "ALL"]
    args += [
        "--die-with-parent",
        "--new-session",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--size",
        str(limits.tmp),
        "--perms",
        "1777",
        "--tmpfs",
        "/tmp",
        # POSIX semaphores (multiprocessing's locks) live in /dev/shm: writable by the unprivileged
        # kernel, and capped like /tmp
        "--size",
        str(limits.tmp),
        "--perms",
        "1777",
        "--tmpfs",
        "/dev/shm",
    ]
    # the folders above each bound path, searchable by the unprivileged kernel (bwrap would copy a 0700 /root)
    above = sorted(
        {a for p in readable | {scratch, runtime} for a in p.parents if a != Path("/")} - readable,
        key=lambda p: len(p.parts),
    )
    for path in above:
        if not any(path.is_relative_to(r) for r in readable):
            args += ["--perms", "0755", "--dir", str(path)]
    for path in sorted(readable, key=lambda p: len(p.parts)):
        args += ["--ro-bind", str(path), str(path)]
    if package_view is not None:  # mounted over the package (and anything readable that holds it)
        args += ["--ro-bind", str(package_view), str(package)]
    args += [
        "--size",
        str(limits.scratch),
        "--perms",
        "1777",
        "--tmpfs",
        str(scratch),
        "--perms",
        "1777",
        "--dir",
        str(scratch / ".tmp"),
    ]
    for host, inside in files:
        args += ["--ro-bind", str(host), str(inside)]
    args += ["--bind", str(runtime), str(runtime)]
    # in its own PID namespace the kernel's parent is PID 1, which ipykernel would take for a dead parent
    return [*args, "--unsetenv", "JPY_PARENT_PID", "--chdir", str(scratch), "--"]
