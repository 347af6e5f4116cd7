"""``python -m chunklab.course.limits BYTES -- CMD...``: run CMD with its address space capped."""

from __future__ import annotations

import os
import resource
import sys


def main(argv: list[str]) -> None:
    """Set ``RLIMIT_AS`` to ``argv[0]`` bytes, then replace this process with the command after ``--``."""
    if len(argv) < 3 or argv[1] != "--":
        raise SystemExit("usage: python -m chunklab.course.limits BYTES -- CMD...")
    limit = int(argv[0])
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    os.execvp(argv[2], argv[2:])


if __name__ == "__main__":
    main(sys.argv[1:])
