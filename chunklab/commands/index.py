"""``chunklab index``: chunk files, embed them with the local model and upsert them into Chroma.

``chunklab index docs/ --strategy semantic`` indexes; ``chunklab index --query "how do I
restart"`` searches what is stored; both together index, then search. Re-indexing the same
files is an idempotent upsert, and the embedding cache makes it cheap.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Iterator
from typing import Any

STRATEGIES = ("structural", "recursive", "fixed", "semantic", "hierarchical", "markdown-hierarchy")


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``chunklab index``."""
    p = subparsers.add_parser(
        "index",
        help="chunk files, embed them locally and upsert them into a Chroma store (and search it)",
        description=(
            "Chunk files (directories are searched for .py/.md/.html/.txt files), embed the chunks "
            "with the packaged all-MiniLM-L6-v2 model (cached on disk) and upsert them into a Chroma "
            "collection. With --query, search the collection afterwards (or only search, without PATHs)."
        ),
    )
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or directories to index")
    p.add_argument("--strategy", choices=STRATEGIES, default="structural", help="default: structural")
    p.add_argument("--size", type=int, default=1500, help="chunk size (default 1500; semantic: max_chars)")
    p.add_argument("--overlap", type=int, default=0, help="overlap for recursive/fixed (default 0)")
    p.add_argument("--unit", choices=("chars", "words", "tokens"), default="chars", help="recursive/fixed/hierarchical")
    p.add_argument("--levels", default="2048,512,128", help="hierarchical level sizes, largest first")
    p.add_argument("--context", action="store_true", help="embed each chunk with its title and section path")
    p.add_argument("--store", default=None, metavar="DIR", help="Chroma directory (default .chunklab/chroma)")
    p.add_argument("--collection", default="chunks", help="collection name (default chunks)")
    p.add_argument("--clear", action="store_true", help="empty the collection before indexing")
    p.add_argument("--query", "-q", action="append", default=[], help="search this query (repeatable)")
    p.add_argument("-k", type=int, default=5, help="results per query (default 5)")
    p.add_argument("--where", default=None, help='metadata filter as JSON, e.g. \'{"kind": "function"}\'')
    p.add_argument("--json", action="store_true", help="print results as JSON lines")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Index the files named by ``args`` and/or answer ``--query``; 0 on success."""
    if not args.paths and not args.query:
        raise ValueError("give PATHs to index, --query to search, or both")
    if args.k <= 0:
        raise ValueError(f"-k must be a positive integer, got {args.k}")
    where = None
    if args.where:
        try:
            where = json.loads(args.where)
        except json.JSONDecodeError as exc:
            raise ValueError(f"--where is not valid JSON: {exc}") from exc
        if not isinstance(where, dict):
            raise ValueError("--where must be a JSON object")
    from chunklab.embed import Encoder
    from chunklab.store import ChunkStore

    encoder = Encoder(show_progress=False if args.no_progress else None)
    store = ChunkStore(path=args.store, collection=args.collection, encoder=encoder, embed_context=True)
    if args.clear:
        store.clear()
    if args.paths:
        t0 = time.perf_counter()
        counter = {"files": 0}
        written = store.add(_chunks(args, counter), show_progress=False if args.no_progress else None)
        files = counter["files"]
        elapsed = time.perf_counter() - t0
        stats = store.stats()
        print(
            f"indexed {written} chunks from {files} files in {elapsed:.1f}s "
            f"({written / elapsed if elapsed else 0:.0f} chunks/s); embedded {encoder.model_calls}, "
            f"from cache {encoder.cache_hits}; collection {args.collection!r} holds {stats['leaves']} leaves"
            f" + {stats['parents']} parents, {stats['bytes_on_disk'] / 1e6:.1f} MB on disk at {store.path}"
        )
    for query in args.query:
        hits = store.search(query, k=args.k, where=where)
        if args.json:
            for chunk, score in hits:
                print(json.dumps({"query": query, "score": round(score, 4), **chunk.to_dict()}, ensure_ascii=False))
            continue
        print(f"\nquery: {query}")
        for rank, (chunk, score) in enumerate(hits, 1):
            first = " ".join(chunk.text.split())[:100]
            print(f"{rank:>3}. {score:.3f}  {chunk.doc_id}:{chunk.start}-{chunk.end}  {first}")
    return 0


def _chunks(args: argparse.Namespace, counter: dict[str, int]) -> Iterator[Any]:
    from chunklab.commands.chunk import iter_files

    chunker = _chunker(args)
    for path in iter_files(args.paths):
        with open(path, "rb") as fh:
            raw = fh.read()
        text = raw.decode("utf-8", errors="replace").lstrip("\ufeff")
        doc_id = os.path.relpath(path)
        chunks = chunker(text, path, doc_id)
        if args.context:
            from chunklab.context import add_context

            source = text if path.lower().endswith((".md", ".markdown")) else None
            chunks = add_context(chunks, title=os.path.basename(path), source=source)
        counter["files"] += 1
        yield from chunks


def _chunker(args: argparse.Namespace):
    size, overlap, unit = args.size, args.overlap, args.unit
    if args.strategy == "structural":
        from chunklab.structural import chunk_document

        return lambda text, path, doc_id: chunk_document(text, path=path, max_chars=size, doc_id=doc_id)
    if args.strategy == "recursive":
        from chunklab.recursive import chunk_recursive

        return lambda text, path, doc_id: chunk_recursive(text, size, overlap, unit, doc_id=doc_id)
    if args.strategy == "fixed":
        from chunklab.fixed import chunk_fixed

        return lambda text, path, doc_id: chunk_fixed(text, size, overlap, unit, doc_id=doc_id)
    if args.strategy == "semantic":
        from chunklab.semantic import chunk_semantic

        return lambda text, path, doc_id: chunk_semantic(text, max_chars=size, min_chars=min(100, size), doc_id=doc_id)
    if args.strategy == "hierarchical":
        from chunklab.hierarchical import chunk_hierarchical

        try:
            levels = tuple(int(x) for x in args.levels.split(","))
        except ValueError as exc:
            raise ValueError(f"--levels must be comma-separated integers, got {args.levels!r}") from exc
        return lambda text, path, doc_id: chunk_hierarchical(text, levels=levels, unit=unit, doc_id=doc_id)
    from chunklab.hierarchical import chunk_markdown_hierarchy

    return lambda text, path, doc_id: chunk_markdown_hierarchy(text, max_chars=size, doc_id=doc_id)
