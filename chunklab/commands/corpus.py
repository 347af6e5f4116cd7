"""``chunklab corpus list | info NAME | fetch NAME``: the pinned corpora (``code-50k``, ``code-poly``, ...).

Every corpus fetched on demand is an entry of :func:`chunklab.datasets.corpora` with its pins
and its fetch, so the three actions take one path whatever the corpus is made of (wheels,
source archives, PDF files).
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from chunklab.words import plural

if TYPE_CHECKING:
    from chunklab.datasets.registry import CorpusEntry

#: the one spelling of where the cache is
CACHE_HELP = (
    "cache folder (default: $CHUNKLAB_CACHE, else the project's .chunklab/cache, else the user cache dir)"
)


def add_parser(subparsers) -> None:
    """Register the ``corpus`` subcommand and its actions."""
    p = subparsers.add_parser("corpus", help="pinned corpora: list them, fetch their files, describe them")
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    ls = sub.add_parser("list", help="the pinned corpora, their pins and whether they are fetched")
    ls.add_argument("--cache-dir", metavar="DIR", help=CACHE_HELP)
    ls.set_defaults(func=run_list)
    info = sub.add_parser("info", help="one corpus: pins, download size, files and projects once fetched")
    info.add_argument("name")
    info.add_argument("--cache-dir", metavar="DIR", help=CACHE_HELP)
    info.add_argument("--json", action="store_true", help="print JSON instead of text")
    info.set_defaults(func=run_info)
    fetch = sub.add_parser(
        "fetch",
        help="download a corpus's files, each checked against its pinned sha256",
        description="Download the pinned files into the cache (resumable: verified files are skipped).",
    )
    fetch.add_argument("name")
    fetch.add_argument("--cache-dir", metavar="DIR", help=CACHE_HELP)
    fetch.add_argument(
        "--batch-size", type=int, metavar="N", help="wheel corpora: wheels per pip call (default 16)"
    )
    fetch.add_argument("--no-progress", action="store_true", help="no progress bar")
    fetch.set_defaults(func=run_fetch)


def run_list(args: argparse.Namespace) -> int:
    """Print each pinned corpus with its pin count, download size and fetch state."""
    from chunklab.datasets.registry import corpora

    for entry in corpora().values():
        if entry.pinned:
            state = _state(entry, args.cache_dir)
            print(
                f"{entry.name:12s} {state['pins']:5d} {plural(state['pins'], entry.noun):8s} "
                f"{state['pinned_mb']:7.1f} MB  {state['fetched']}/{state['pins']} fetched  "
                f"({state['directory']})"
            )
    return 0


def run_info(args: argparse.Namespace) -> int:
    """Describe one corpus; once fetched, count its files and projects from the files themselves."""
    entry = _pinned_entry(args.name)
    state = _state(entry, args.cache_dir)
    count = state.pop("pins")
    info: dict[str, object] = {"name": entry.name, plural(2, entry.noun): count, **state}
    if state["fetched"] == count:
        files = entry.load(cache_dir=args.cache_dir)
        projects = files.projects()
        info.update(
            files=len(files),
            projects=len(projects),
            source_mb=round(files.total_bytes / 1e6, 1),
            largest_projects=dict(projects.most_common(10)),
        )
        if hasattr(files, "languages"):
            info["languages"] = dict(files.languages().most_common())
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    for key, value in info.items():
        print(f"{key:17s} {value}")
    if state["fetched"] < count:
        print(f"run `chunklab corpus fetch {entry.name}` to download the rest")
    return 0


def run_fetch(args: argparse.Namespace) -> int:
    """Fetch the corpus and print what was downloaded, how much and how long it took."""
    entry = _pinned_entry(args.name)
    options: dict[str, object] = {"cache_dir": args.cache_dir, "progress": not args.no_progress}
    if args.batch_size is not None:
        if entry.noun != "wheel":
            raise ValueError(f"--batch-size applies to wheel corpora; {entry.name} is made of {entry.noun}s")
        options["batch_size"] = args.batch_size
    assert entry.fetch is not None
    print(entry.fetch(**options).summary())
    return 0


def _pinned_entry(name: str) -> CorpusEntry:
    """The registry entry of pinned corpus ``name`` (``ValueError`` listing the pinned ones)."""
    from chunklab.datasets.registry import corpora

    known = corpora()
    entry = known.get(name)
    if entry is None or not entry.pinned:
        pinned = ", ".join(n for n, e in known.items() if e.pinned)
        raise ValueError(f"corpus name must be a pinned corpus ({pinned}), got {name!r}")
    return entry


def _state(entry: CorpusEntry, cache_dir: str | None) -> dict[str, Any]:
    """Pins, download size, folder and how many of its files are there (by name: no hashing)."""
    from chunklab.datasets.corpora.pinned import corpus_dir

    assert entry.pins is not None
    pins = entry.pins()
    folder = corpus_dir(entry.name, cache_dir)
    return {
        "pins": len(pins),
        "pinned_mb": round(sum(p.size for p in pins) / 1e6, 1),
        "directory": str(folder),
        "fetched": sum((folder / p.name).is_file() for p in pins),
    }
