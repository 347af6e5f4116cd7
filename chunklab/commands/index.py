"""``chunklab index``: chunk files, embed them with the local model and upsert them into Chroma.

``chunklab index docs/ --strategy semantic`` indexes; ``chunklab index --query "how do I
restart"`` searches what is stored; both together index, then search. Files are read by
:func:`chunklab.documents.iter_documents` (ids relative to ``--root``, the same from any
working directory) and chunked by a catalog strategy, exactly as ``chunklab chunk`` does.
Re-indexing a document replaces exactly its chunks (unchanged ones are not embedded again);
the collection records the chunker configuration and corpus root and refuses another one
unless ``--clear``; a file that cannot be read is reported and skipped, the run goes on, and
the exit status is 1 when a file failed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import time
from collections.abc import Iterator
from typing import Any

from chunklab.commands._ingest import FileReport
from chunklab.commands.chunk import add_strategy_arguments, strategy_from_args

#: characters per model token on the densest text measured (standard-library code: 600
#: structural characters put 0.2 % of chunks over MiniLM's 256 tokens, 1500 put 33 %)
CHARS_PER_TOKEN = 2.4


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``chunklab index``."""
    from chunklab.chunkers.catalog import available_strategies

    p = subparsers.add_parser(
        "index",
        help="chunk files, embed them locally and upsert them into a Chroma store (and search it)",
        description=(
            "Chunk files (directories are searched for the known document extensions), embed the chunks "
            "with the packaged all-MiniLM-L6-v2 model (cached on disk) and upsert them into a Chroma "
            "collection. With --query, search the collection afterwards (or only search, without PATHs)."
        ),
    )
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or directories to index")
    add_strategy_arguments(p, available_strategies())
    p.add_argument(
        "--context",
        action="store_true",
        help="embed each chunk with its document title and section path in front (the stored text is the chunk)",
    )
    p.add_argument("--store", default=None, metavar="DIR", help="Chroma directory (default .chunklab/chroma)")
    p.add_argument("--collection", default="chunks", help="collection name (default chunks)")
    p.add_argument(
        "--clear",
        action="store_true",
        help="empty the collection before indexing (needed to switch strategy, parameters or --root)",
    )
    p.add_argument(
        "--prune", action="store_true", help="delete the documents under the root that are gone from disk"
    )
    p.add_argument("--query", "-q", action="append", default=[], help="search this query (repeatable)")
    p.add_argument("-k", type=int, default=5, help="results per query (default 5)")
    p.add_argument("--where", default=None, help='metadata filter as JSON, e.g. \'{"kind": "function"}\'')
    p.add_argument("--json", action="store_true", help="print results as JSON lines")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    add_engine_arguments(p)
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Index the files named by ``args`` and/or answer ``--query``; 0 on success, 1 if a file failed."""
    from chunklab._validate import check_positive_int

    if not args.paths and not args.query:
        raise ValueError("give PATHs to index, --query to search, or both")
    check_positive_int(args.k, "-k")
    where = _where(args.where)
    from chunklab.embed import Encoder
    from chunklab.retrieval.store import ChunkStore

    encoder = Encoder(args.model, show_progress=False if args.no_progress else None)
    strategy = _fitted_strategy(args, encoder.max_seq_length) if args.paths else None
    if args.paths and (args.engine or args.out or args.chroma_url):
        return index_with_engine(args, strategy)
    status = 0
    if args.paths:
        status, store = _index(args, strategy, encoder)
    else:  # only searching: a store or collection that does not exist is an error listing what does
        store = ChunkStore(path=args.store, collection=args.collection, encoder=encoder, create=False)
    for query in args.query:
        hits = store.search(query, k=args.k, where=where)
        if args.json:
            for chunk, score in hits:
                print(
                    json.dumps(
                        {"query": query, "score": round(score, 4), **chunk.to_dict()}, ensure_ascii=False
                    )
                )
            continue
        print(f"\nquery: {query}")
        for rank, (chunk, score) in enumerate(hits, 1):
            first = " ".join(chunk.text.split())[:100]
            print(f"{rank:>3}. {score:.3f}  {chunk.doc_id}:{chunk.start}-{chunk.end}  {first}")
    return status


def add_engine_arguments(p: argparse.ArgumentParser) -> None:
    """``--engine`` and its options (chunklab.ingest: worker processes or a Ray cluster)."""
    p.add_argument(
        "--model", choices=("minilm", "static"), default="minilm", help="embedding model (default minilm)"
    )
    p.add_argument(
        "--engine",
        choices=("local", "ray"),
        default=None,
        help="run the ingest pipeline of chunklab.ingest: local worker processes, or Ray Data "
        "(pip install 'chunklab[distributed]'); without it, index in this process",
    )
    p.add_argument("--workers", "-j", type=int, default=None, help="engine workers (default: the CPU count)")
    p.add_argument(
        "--address", default=None, help="--engine ray: join this Ray cluster (default: start a local one)"
    )
    p.add_argument(
        "--num-gpus", type=int, default=0, help="--engine ray: one GPU per embedding actor, N actors"
    )
    p.add_argument(
        "--out", default=None, metavar="DIR", help="write Parquet shards here instead of a Chroma store"
    )
    p.add_argument(
        "--chroma-url", default=None, metavar="URL", help="upsert into this Chroma server (chroma run)"
    )


def index_with_engine(args: argparse.Namespace, strategy: Any) -> int:
    """Index with ``--engine`` (local when only ``--out`` or ``--chroma-url`` is given); prints the engine's report."""
    from chunklab.ingest import get_engine

    if args.query:
        raise ValueError(
            "--query is not combined with --engine/--out: search afterwards with chunklab index --query"
        )
    try:
        report = get_engine(args.engine or "local")(
            args.paths,
            strategy=strategy,
            model=args.model,
            store=args.store,
            chroma_url=args.chroma_url,
            collection=args.collection,
            out=args.out,
            workers=args.workers,
            root=args.root,
            strict=args.strict,
            context=args.context,
            address=args.address,
            num_gpus=args.num_gpus,
            progress=not args.no_progress,
        )
    except ImportError as exc:  # --engine ray without Ray: say how to install it
        raise ValueError(str(exc)) from exc
    print(report.summary())
    return report.exit_code


def _fitted_strategy(args: argparse.Namespace, window: int | None) -> Any:
    """The strategy of the flags; without ``--size``, a character budget that fits the model's window."""
    strategy = strategy_from_args(args)
    measured_in_chars = strategy.params.get("unit", "chars") == "chars"
    key = next((k for k in ("size", "max_chars") if k in strategy.params), None)
    if args.size is None and window and key and measured_in_chars:
        fit = int(window * CHARS_PER_TOKEN) // 50 * 50
        if strategy.params[key] > fit:
            args.size = fit
            strategy = strategy_from_args(args)
            print(
                f"--size defaults to {fit} characters here, so that chunks fit the model's {window}-token window"
            )
    return strategy


def _where(text: str | None) -> dict[str, Any] | None:
    if not text:
        return None
    try:
        where = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"--where is not valid JSON: {exc}") from exc
    if not isinstance(where, dict):
        raise ValueError("--where must be a JSON object")
    return where


def _index(args: argparse.Namespace, strategy: Any, encoder: Any) -> tuple[int, Any]:
    """Replace each document's chunks in the store (and prune with ``--prune``); the exit status and the store."""
    from chunklab.documents import corpus_root, doc_id_for, iter_paths
    from chunklab.retrieval.store import ChunkStore

    files = list(iter_paths(args.paths))  # a path that does not exist at all is a usage error, up front
    root = os.path.abspath(args.root) if args.root is not None else corpus_root(args.paths)
    present = {doc_id_for(path, root) for path in files}  # also a file outside --root: an error now
    config = json.loads(
        json.dumps(
            {
                "strategy": strategy.kind,
                "params": strategy.params,
                "root": root,
                "context": bool(args.context),
            },
            default=str,
        )
    )
    # --clear builds the new collection beside the old one and swaps only when the run got through:
    # an interrupted or crashed run leaves the store as it was.
    store = ChunkStore(
        path=args.store,
        collection=args.collection,
        encoder=encoder,
        embed_context=True,
        config=config,
        verify=not args.clear,
    )
    report = FileReport()
    totals = {"added": 0, "unchanged": 0, "deleted": 0}
    chunks_seen = over_window = 0
    window = encoder.max_seq_length
    t0 = time.perf_counter()
    pruned = 0
    with store.rebuild() if args.clear else contextlib.nullcontext(store) as target:
        for doc_id, chunks in document_chunks(files, root, strategy, args, encoder, report):
            for key, n in target.replace_document(doc_id, chunks).items():
                totals[key] += n
            chunks_seen += len(chunks)
            if window:  # the model adds two special tokens
                over_window += sum(encoder.count_tokens(target.embedded_text(c)) > window - 2 for c in chunks)
        if args.prune:
            for doc_id in target.doc_ids():
                if doc_id not in present:
                    pruned += 1
                    totals["deleted"] += target.delete_document(doc_id)
    elapsed = time.perf_counter() - t0
    stats = store.stats()
    print(f"chunklab index --strategy {strategy.name} (root {root})")
    print("\n".join(report.lines()))
    if over_window:
        print(
            f"  WARNING   {over_window:,} of {chunks_seen:,} chunks ({over_window / chunks_seen:.0%}) exceed the "
            f"model's {window}-token window: the text past it is not embedded; use a smaller --size"
        )
    print(
        f"indexed {chunks_seen} chunks from {report.ok} files in {elapsed:.1f}s: added {totals['added']}, "
        f"unchanged {totals['unchanged']}, deleted {totals['deleted']}"
        + (f" (pruned {pruned} documents no longer present)" if pruned else "")
        + f"; embedded {encoder.model_calls}, from cache {encoder.cache_hits}; collection {args.collection!r} "
        f"holds {stats['leaves']} leaves + {stats['parents']} parents, {stats['bytes_on_disk'] / 1e6:.1f} MB "
        f"on disk at {store.path}"
    )
    return report.exit_code, store


def document_chunks(
    files: list[str], root: str, strategy: Any, args: argparse.Namespace, encoder: Any, report: FileReport
) -> Iterator[tuple[str, list[Any]]]:
    """``(doc_id, chunks)`` of each readable document; bad files go to ``report``."""
    from chunklab.documents import DocumentError, load_document

    for path in files:
        try:
            doc = load_document(path, root=root, strict=args.strict)
        except DocumentError as exc:
            report.error(exc)
            continue
        try:
            chunks = strategy(doc, encoder=encoder)
        except Exception as exc:  # a chunker bug on one file: reported as failed, the run goes on
            report.fail(path, "chunker", f"{type(exc).__name__}: {exc}")
            continue
        if args.context:
            from chunklab.chunkers.context import add_context

            chunks = add_context(chunks, title=doc.title, source=doc.text if doc.kind == "markdown" else None)
        report.document(doc)
        yield doc.doc_id, chunks
