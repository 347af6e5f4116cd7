"""``chunklab search STORE "query"``: query an existing index from the command line.

``chunklab search .chunklab/chroma "how do I restart the scanner" --k 5 --where kind=section``
prints, per hit, its rank, score, document, offsets, headings path and text (``--json``: one
JSON object per line).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``chunklab search``."""
    p = subparsers.add_parser(
        "search",
        help="query an existing Chroma index: doc, offsets, score, headings path and chunk text",
        description=(
            "Embed QUERY with the local model and print the k most similar chunks of the index in STORE."
        ),
    )
    p.add_argument(
        "store", metavar="STORE", help="the Chroma directory (as written by chunklab index --store)"
    )
    p.add_argument("query", metavar="QUERY", help="the question to search for")
    p.add_argument("--k", "-k", type=int, default=5, help="results (default 5)")
    p.add_argument(
        "--where",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="keep chunks whose metadata KEY equals VALUE (repeatable: all must hold)",
    )
    p.add_argument("--collection", default="chunks", help="collection name (default chunks)")
    p.add_argument("--json", action="store_true", help="one JSON object per hit")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Search the store; 0 on success (also when nothing matches)."""
    from pathlib import Path

    from chunklab.evaluate._validate import check_positive_int
    from chunklab.retrieval.store import ChunkStore

    check_positive_int(args.k, "--k")
    if not Path(args.store).is_dir():
        raise ValueError(
            f"STORE {args.store!r} is not a directory (index files first with chunklab index --store)"
        )
    store = ChunkStore(path=args.store, collection=args.collection, create=False)
    if store.count() == 0:
        raise ValueError(f"collection {args.collection!r} in {args.store} is empty (or does not exist)")
    hits = store.search(args.query, k=args.k, where=parse_where(args.where))
    for rank, (chunk, score) in enumerate(hits, 1):
        print(format_hit(rank, chunk, score, as_json=args.json))
    if not hits and not args.json:
        print("no matching chunks", file=sys.stderr)
    return 0


def parse_where(items: list[str]) -> dict[str, Any] | None:
    """``["kind=function", "line_start=3"]`` -> a Chroma filter (values read as int/float/bool/str)."""
    from chunklab.chunkers.catalog import parse_param_value

    conditions = []
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"--where expects KEY=VALUE, got {item!r}")
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
                "text": chunk.text,
                "metadata": chunk.metadata,
            },
            ensure_ascii=False,
            default=str,
        )
    head = f"{rank:>2}. {score:.3f}  {chunk.doc_id}:{chunk.start}-{chunk.end}" + (
        f"  [{path}]" if path else ""
    )
    body = "\n".join("    " + line for line in chunk.text.strip().splitlines())
    return f"{head}\n{body}\n"


if __name__ == "__main__":  # pragma: no cover
    from chunklab.cli import main

    sys.exit(main(["search", *sys.argv[1:]]))
