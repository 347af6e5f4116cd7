"""The ``chunklab`` command line: ``chunklab chunk | index | evaluate | grade | course``.

Each subcommand lives in its own module under ``chunklab.commands`` and registers itself
with ``add_parser(subparsers)``; ``main`` only dispatches.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

#: subcommand name -> module under chunklab.commands that implements it
COMMANDS = {
    "chunk": "chunk",
    "index": "index",
    "evaluate": "evaluate",
    "search": "search",
    "grade": "grade",
    "course": "course",
    "check": "check",
    "corpus": "corpus",
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The top-level parser with every subcommand registered (``only``: that one alone).

    A subcommand whose module fails to import is still listed: its help line and running it
    show the import error, and the other subcommands keep working. ``main`` registers only the
    subcommand it runs, so ``chunklab search`` does not import what ``index`` or ``evaluate`` need.
    """
    parser = argparse.ArgumentParser(
        prog="chunklab",
        description="Chunk documents, index them in Chroma, evaluate strategies, grade exercises.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module_name in COMMANDS.items():
        if only is not None and name != only:
            continue
        try:
            module = importlib.import_module(f"chunklab.commands.{module_name}")
        except ImportError as exc:
            _add_broken(sub, name, exc)
            continue
        module.add_parser(sub)
    return parser


def _version() -> str:
    """The installed distribution's version (``chunklab-kit``), else the package's own."""
    from importlib import metadata

    from chunklab import __version__

    try:
        return metadata.version("chunklab-kit")
    except metadata.PackageNotFoundError:
        return __version__


def _add_broken(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], name: str, exc: ImportError
) -> None:
    message = f"{type(exc).__name__}: {exc}"
    p = sub.add_parser(name, help=f"(unavailable: {message})", description=f"unavailable: {message}")
    p.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    p.set_defaults(func=lambda args: _fail(name, message))


def _fail(name: str, message: str) -> int:
    print(f"chunklab {name}: error: the subcommand failed to import: {message}", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``chunklab`` console script.

    Usage errors (ValueError, a missing file, another OSError) print one line and exit 2 (75 when
    a Chroma server stayed down past the retry budget);
    Ctrl-C prints one line and exits 130; a closed stdout pipe (``| head``) exits quietly.
    """
    words = sys.argv[1:] if argv is None else argv
    parser = build_parser(words[0] if words and words[0] in COMMANDS else None)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print(f"chunklab {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away: point stdout at /dev/null so the exit flush does not fail again
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except (ValueError, OSError) as exc:
        print(f"chunklab {args.command}: error: {exc}", file=sys.stderr)
        return int(getattr(exc, "exit_code", 2))  # 75: a Chroma server stayed down (retry budget spent)


if __name__ == "__main__":
    sys.exit(main())
