"""``python -m chunklab.course.limits [--memory B] [--file-size B] [--uid U --gid G] -- CMD...``.

Runs first inside a graded kernel's sandbox: caps the address space (``RLIMIT_AS``) and the size of any
one file the kernel writes (``RLIMIT_FSIZE``), and, when started as root, drops every capability and
becomes an unprivileged user before it replaces itself with the kernel command.
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import os
import resource
import sys

#: the user a kernel runs as when the grader runs as root (``nobody`` on Debian)
UNPRIVILEGED = 65534
_PR_CAPBSET_DROP = 24
_PR_SET_NO_NEW_PRIVS = 38


def main(argv: list[str]) -> None:
    """Apply the limits of ``argv``, then exec the command after ``--``."""
    if "--" not in argv:
        raise SystemExit(
            "usage: python -m chunklab.course.limits [--memory B] [--file-size B] [--uid U --gid G] -- CMD"
        )
    split = argv.index("--")
    parser = argparse.ArgumentParser(prog="chunklab.course.limits")
    parser.add_argument("--memory", type=int)
    parser.add_argument("--file-size", type=int)
    parser.add_argument("--uid", type=int)
    parser.add_argument("--gid", type=int)
    args = parser.parse_args(argv[:split])
    command = argv[split + 1 :]
    if not command:
        raise SystemExit("chunklab.course.limits: no command after --")
    if args.memory:
        resource.setrlimit(resource.RLIMIT_AS, (args.memory, args.memory))
    if args.file_size:
        resource.setrlimit(resource.RLIMIT_FSIZE, (args.file_size, args.file_size))
    if args.uid is not None:
        drop_privileges(args.uid, args.gid if args.gid is not None else args.uid)
    os.execvp(command[0], command)


def drop_privileges(uid: int, gid: int) -> None:
    """Empty the capability bounding set, set no-new-privileges, then become ``uid``/``gid`` for good."""
    libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    for cap in range(64):
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() not in (
            0,
            22,
        ):  # EINVAL: past last
            raise SystemExit(f"chunklab.course.limits: cannot drop capability {cap}")
    libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if os.geteuid() == 0 or os.getuid() == 0:
        raise SystemExit("chunklab.course.limits: still root after dropping privileges")


if __name__ == "__main__":
    main(sys.argv[1:])
