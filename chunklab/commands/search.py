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
from typing import TYPE_CHECKING

from chunklab.commands.arguments import (
    STORE_HELP,
    add_model_argument,
    add_wait_arguments,
    add_where_argument,
    busy,
    parse_where,
    wait_of,
)
from chunklab.documents.layout import where
from chunklab.retrieval.chroma.lock import READ_WAIT

if TYPE_CHECKING:
    from chunklab.chunk import Chunk


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
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
    add_model_argument(
        p, "embed the query with this model (default: the one the store was built with, else {model})", True
    )
    p.add_argument("--json", action="store_true", help="one JSON object per hit")
    add_wait_arguments(p, READ_WAIT)
    p.add_argument(
        "--repair",
        action="store_true",
        help="STORE is a Chroma server URL: first rebuild the collection if the server can no longer "
        "read it (from the records it still returns), then search",
    )
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Search the store; 0 on success (also when nothing matches)."""
    from chunklab._validate import check_positive_int

    check_positive_int(args.k, "--k")
    where = parse_where(args.where)
    from chunklab.commands._lean import lean_imports

    with lean_imports():  # chromadb without the extras a query never uses (seconds of CPU)
        from chunklab.retrieval.chroma.location import is_url, open_store
    from chunklab.retrieval.chroma.lock import StoreBusyError

    if args.repair:
        if not is_url(args.store):
            raise ValueError(
                f"search --repair is for a Chroma server URL, got {args.store!r}; a folder store is repaired "
                "with chunklab index --store FOLDER --repair"
            )
        from chunklab.retrieval.chroma.mend import repair_server

        print(repair_server(args.store, args.collection).summary(), file=sys.stderr)
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


def format_hit(rank: int, chunk: Chunk, score: float, as_json: bool = False) -> str:
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
