"""``chunklab search STORE "query"``: query an existing index from the command line.

``chunklab search .chunklab/chroma "how do I restart the scanner" --k 5 --where kind=section``
prints, per hit, its rank, score, document, offsets, page or cell, headings path and text (``--json``: one
JSON object per line). STORE is a folder or a Chroma server URL; the query is embedded with
the model the store was built with (the static model for a store built with ``--model static``).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from chunklab.documents.layout import where

#: the one spelling of ``--where`` documented in every command's help
WHERE_HELP = (
    "keep chunks whose metadata KEY equals VALUE (values read as int, float, bool or text); "
    'repeatable, all must hold; a JSON Chroma filter such as \'{"start": {"$gt": 0}}\' also works'
)
#: how long a reader waits for a writer to finish with a folder store before giving up (seconds)
READ_WAIT = 10.0
#: exit status when a folder store stayed busy (EX_TEMPFAIL: try again later)
BUSY_EXIT = 75
#: the one spelling of the store argument
STORE_HELP = "the Chroma store: a folder (as written by chunklab index --store) or a server URL (chroma run)"


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``chunklab search``."""
    p = subparsers.add_parser(
        "search",
        help="query an existing Chroma index: doc, offsets, score, headings path and chunk text",
        description=(
            "Embed QUERY with the model the store was built with and print the k most similar chunks "
            "of the index in STORE (a folder or a Chroma server URL)."
        ),
    )
    p.add_argument("store", metavar="STORE", help=STORE_HELP)
    p.add_argument("query", metavar="QUERY", help="the question to search for")
    p.add_argument("--k", "-k", type=int, default=5, help="results (default 5)")
    add_where_argument(p)
    p.add_argument("--collection", default="chunks", help="collection name (default chunks)")
    p.add_argument(
        "--model",
        choices=("minilm", "static"),
        default=None,
        help="embed the query with this model (default: the one the store was built with)",
    )
    p.add_argument("--json", action="store_true", help="one JSON object per hit")
    add_wait_arguments(p, READ_WAIT)
    p.set_defaults(func=run)
    return p


def add_wait_arguments(p: argparse.ArgumentParser, default: float | None) -> None:
    """``--wait SECONDS`` / ``--no-wait``: how long to wait for another process using a folder store."""
    said = "as long as it takes" if default is None else f"{default:g} s"
    p.add_argument(
        "--wait",
        type=float,
        default=default,
        metavar="SECONDS",
        help=f"wait at most this long while another chunklab index writes the store (default: {said})",
    )
    p.add_argument(
        "--no-wait",
        action="store_true",
        help=f"fail at once (exit status {BUSY_EXIT}) when another process is writing the store",
    )


def wait_of(args: argparse.Namespace) -> float | None:
    """The lock wait the arguments ask for (None: unbounded; 0: do not wait)."""
    if getattr(args, "no_wait", False):
        return 0.0
    wait = getattr(args, "wait", None)
    if wait is not None and wait < 0:
        raise ValueError(f"--wait must be >= 0 seconds, got {wait:g}")
    return wait


def busy(exc: Exception) -> int:
    """Report a store held by another process; the exit status that says "try again later"."""
    print(f"chunklab: {exc}", file=sys.stderr)
    return BUSY_EXIT


def add_where_argument(p: argparse.ArgumentParser) -> None:
    """``--where`` as every command spells it (parsed by :func:`parse_where`)."""
    p.add_argument("--where", action="append", default=[], metavar="KEY=VALUE", help=WHERE_HELP)


def run(args: argparse.Namespace) -> int:
    """Search the store; 0 on success (also when nothing matches)."""
    from chunklab._validate import check_positive_int

    check_positive_int(args.k, "--k")
    where = parse_where(args.where)
    from chunklab.retrieval.lock import StoreBusyError

    try:
        store = open_store(args.store, args.collection, model=args.model, wait=wait_of(args))
    except StoreBusyError as exc:
        return busy(exc)
    if store.count() == 0:
        raise ValueError(f"collection {args.collection!r} in {args.store} is empty (or does not exist)")
    hits = store.search(args.query, k=args.k, where=where)
    for rank, (chunk, score) in enumerate(hits, 1):
        print(format_hit(rank, chunk, score, as_json=args.json))
    if not hits and not args.json:
        print("no matching chunks", file=sys.stderr)
    return 0


def is_url(location: str | None) -> bool:
    """Whether a store argument names a Chroma server (``http://`` or ``https://``) rather than a folder."""
    return bool(location) and str(location).lower().startswith(("http://", "https://"))


def open_store(
    location: str | None,
    collection: str,
    model: str | None = None,
    progress: bool = False,
    wait: float | None = READ_WAIT,
) -> Any:
    """The existing :class:`~chunklab.retrieval.store.ChunkStore` at a folder or server URL.

    ``model`` None: the encoder the collection recorded (the static model for a store built
    with it), loaded once per process; a folder that does not exist is an error naming it, and
    so is a folder that is not a store (nothing is written into it). A folder store is read
    under its shared lock, waiting at most ``wait`` seconds for a writer to finish.
    """
    from pathlib import Path

    from chunklab.retrieval.store import ChunkStore
    from chunklab.retrieval.store_files import is_store

    encoder = None
    if model is not None:
        from chunklab.embed import Encoder

        encoder = Encoder(model, show_progress=None if progress else False)
    if is_url(location):
        return ChunkStore(url=location, collection=collection, encoder=encoder, create=False)
    if location is not None and not is_store(location):
        what = "is not a Chroma store (no chroma.sqlite3)" if Path(location).is_dir() else "does not exist"
        raise ValueError(
            f"no store at {location!r}: it {what}; give a folder written by chunklab index --store, "
            "or a Chroma server URL (http://host:port)"
        )
    return ChunkStore(path=location, collection=collection, encoder=encoder, create=False, wait=wait)


def parse_where(items: list[str] | str | None) -> dict[str, Any] | None:
    """``--where`` items as one Chroma filter: each ``KEY=VALUE`` or a JSON object; all must hold.

    ``["kind=function", "line_start=3"]`` -> ``{"$and": [{"kind": "function"}, {"line_start": 3}]}``
    (values read as int/float/bool/str); ``['{"start": {"$gt": 0}}']`` is taken as it is.
    """
    from chunklab.chunkers.catalog import parse_param_value

    if isinstance(items, str):
        items = [items]
    conditions: list[dict[str, Any]] = []
    for item in items or []:
        text = item.strip()
        if text.startswith("{"):
            try:
                condition = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ValueError(f"--where {item!r} is not valid JSON: {exc}") from exc
            if condition:
                conditions.append(condition)
            continue
        key, eq, value = text.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"--where expects KEY=VALUE or a JSON object, got {item!r}")
        conditions.append({key.strip(): parse_param_value(value.strip())})
    if not conditions:
        return None
    return conditions[0] if len(conditions) == 1 else {"$and": conditions}


def format_hit(rank: int, chunk: Any, score: float, as_json: bool = False) -> str:
    """One hit as a text block or a JSON line."""
    headings = chunk.metadata.get("headings") or []
    path = " > ".join(str(h) for h in headings) if isinstance(headings, list) else str(headings)
    if as_json:
        return json.dumps(
            {
                "rank": rank,
                "score": round(score, 4),
                "doc_id": chunk.doc_id,
                "start": chunk.start,
                "end": chunk.end,
                "headings_path": path,
                "headings": headings if isinstance(headings, list) else [headings],
                "page": chunk.metadata.get("page"),
                "page_end": chunk.metadata.get("page_end"),
                "cell": chunk.metadata.get("cell"),
                "where": where(chunk.metadata),
                "text": chunk.text,
                "metadata": chunk.metadata,
            },
            ensure_ascii=False,
            default=str,
        )
    origin = where(chunk.metadata)
    head = (
        f"{rank:>2}. {score:.3f}  {chunk.doc_id}:{chunk.start}-{chunk.end}"
        + (f"  ({origin})" if origin else "")
        + (f"  [{path}]" if path else "")
    )
    body = "\n".join("    " + line for line in chunk.text.strip().splitlines())
    return f"{head}\n{body}\n"


if __name__ == "__main__":  # pragma: no cover
    from chunklab.cli import main

    sys.exit(main(["search", *sys.argv[1:]]))
