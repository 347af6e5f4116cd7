"""The ``chunklab`` command line: ``chunklab chunk | index | evaluate | grade | course``.

Each subcommand lives in its own module under ``chunklab.commands`` and registers itself
with ``add_parser(subparsers)``; ``main`` only dispatches.
"""

from __future__ import annotations

import argparse
import importlib
import sys

#: subcommand name -> module under chunklab.commands that implements it
COMMANDS = {
    "chunk": "chunk",
    "index": "index",
    "evaluate": "evaluate",
    "grade": "grade",
    "course": "course",
}


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every available subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="chunklab",
        description="Chunk documents, index them in Chroma, evaluate strategies, grade exercises.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_name in COMMANDS.values():
        try:
            module = importlib.import_module(f"chunklab.commands.{module_name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"chunklab.commands.{module_name}":
                continue  # that subcommand is not part of this build yet
            raise
        module.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``chunklab`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except (ValueError, FileNotFoundError) as exc:
        print(f"chunklab {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
