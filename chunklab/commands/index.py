"""``chunklab index``: chunk files, embed them with the local model and upsert them into Chroma.

``chunklab index docs/ --strategy semantic`` indexes; ``chunklab index --query "how do I
restart"`` searches what is stored; both together index, then search. Indexing is the
pipeline of :mod:`chunklab.ingest` (in this process, or ``--engine local|ray``): files are
read by :mod:`chunklab.documents` (ids relative to ``--root``, the same from any working
directory) and chunked by a catalog strategy, exactly as ``chunklab chunk`` does.
Re-indexing a document replaces exactly its chunks (unchanged ones are not embedded again),
whichever engine wrote the store; the collection records the chunker configuration and
corpus root and refuses another one unless ``--clear``; a file that cannot be read is
reported and skipped, the run goes on, and the exit status is 1 when a file failed.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from chunklab.commands.arguments import (
    add_model_argument,
    add_strategy_arguments,
    add_wait_arguments,
    add_where_argument,
    busy,
    parse_where,
    strategy_from_args,
    wait_of,
)

if TYPE_CHECKING:
    from chunklab.chunkers.catalog import Strategy


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
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
        help="embed each chunk with its document title and section path in front "
        "(the stored text is the chunk)",
    )
    p.add_argument(
        "--store",
        default=None,
        metavar="STORE",
        help="the Chroma store: a folder (default .chunklab/chroma) or a server URL (chroma run)",
    )
    p.add_argument("--collection", default="chunks", help="collection name (default chunks)")
    p.add_argument(
        "--clear",
        action="store_true",
        help="empty the collection before indexing (needed to switch strategy, parameters or --root)",
    )
    p.add_argument(
        "--prune", action="store_true", help="delete the documents under the root that are gone from disk"
    )
    add_wait_arguments(p, None)
    p.add_argument(
        "--repair",
        action="store_true",
        help="rebuild a damaged store (a folder, or a collection a Chroma server can no longer read) "
        "from the records it still holds (ids, texts, metadata; missing vectors recomputed), then index "
        "PATHs if given",
    )
    p.add_argument("--query", "-q", action="append", default=[], help="search this query (repeatable)")
    p.add_argument("-k", type=int, default=5, help="results per query (default 5)")
    add_where_argument(p)
    p.add_argument("--json", action="store_true", help="print results as JSON lines")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    add_engine_arguments(p)
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Index the files named by ``args`` and/or answer ``--query``; 0 on success, 1 if a file failed."""
    from chunklab._validate import check_positive_int

    if not args.paths and not args.query and not args.repair:
        raise ValueError("give PATHs to index, --query to search, or both")
    check_positive_int(args.k, "-k")
    where = parse_where(args.where)
    from chunklab.retrieval.chroma.location import is_url, open_store
    from chunklab.retrieval.chroma.lock import StoreBusyError

    if is_url(args.store):  # --store names a server: the same as --server
        if args.chroma_url is not None and args.chroma_url != args.store:
            raise ValueError(f"--store {args.store!r} and --chroma-url {args.chroma_url!r} name two stores")
        args.store, args.chroma_url = None, args.store

    try:
        if args.repair:
            repair(args)
        status = index(args) if args.paths else 0
        if not args.query:
            return status
        # a store or collection that does not exist is an error listing what does; without --model,
        # the query is embedded by the model the collection recorded
        store = open_store(
            args.chroma_url or args.store, args.collection, args.model, not args.no_progress, wait_of(args)
        )
    except StoreBusyError as exc:
        return busy(exc)
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


def index(args: argparse.Namespace) -> int:
    """Run the ingest pipeline on ``args.paths`` (in this process, or ``--engine``) and print its report."""
    from chunklab.embed import DEFAULT_MODEL
    from chunklab.ingest.engines.local import LocalEngine
    from chunklab.ingest.pipeline import Engine, IngestOptions
    from chunklab.ingest.pipeline import run as run_pipeline

    args.model = args.model or DEFAULT_MODEL
    engine_run = bool(args.engine or args.out or args.chroma_url)
    if args.query and engine_run:
        raise ValueError(
            "--query is not combined with --engine/--out: search afterwards with chunklab index --query"
        )
    if args.address is not None and args.engine != "ray":
        raise ValueError("--address is for --engine ray; the local engine runs on this machine")
    if args.engine != "ray" and args.num_gpus > 1:
        raise ValueError(
            f"--num-gpus {args.num_gpus} is for --engine ray (the local engine embeds in one process)"
        )
    options = IngestOptions(
        strategy=fitted_strategy(args),
        model=args.model,
        store=args.store if args.out is None and args.chroma_url is None else None,
        chroma_url=args.chroma_url,
        collection=args.collection,
        out=args.out,
        workers=args.workers if engine_run else (args.workers or 1),
        root=args.root,
        strict=args.strict,
        context=args.context,
        device="cuda" if args.num_gpus and args.engine != "ray" else "auto",
        clear=args.clear,
        prune=args.prune,
        progress=not args.no_progress,
        retry_budget=args.retry_budget,
        wait=wait_of(args),  # the store's writer lock, taken once for the whole run
    )
    from chunklab.retrieval.chroma.lock import StoreBusyError

    engine: Engine = LocalEngine()
    try:
        if args.engine == "ray":
            from chunklab.ingest.engines.ray import RayEngine

            engine = RayEngine(args.address, args.num_gpus)
        report = run_pipeline(args.paths, options, engine)
    except ImportError as exc:  # --engine ray without Ray: say how to install it
        raise ValueError(str(exc)) from exc
    except StoreBusyError:
        raise
    except Exception as exc:
        raise write_failure(exc, args) from exc
    print(report.summary())
    return report.exit_code


def write_failure(exc: Exception, args: argparse.Namespace) -> Exception:
    """A failed write as one line: a folder store's (disk full, I/O error) naming the path, a server
    collection Chroma can no longer read naming it and ``--repair``; else ``exc``."""
    import errno

    if args.chroma_url is not None:
        import shlex

        from chunklab.retrieval.chroma.damage import DamagedCollectionError, damaged, is_damage

        if is_damage(exc) or isinstance(exc, DamagedCollectionError):
            paths = shlex.join(map(str, args.paths))
            return damaged(exc, args.chroma_url, args.collection, paths if len(paths) < 100 else "PATHS")
    text = str(exc)
    full = isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT)
    if not full and not any(s in text for s in ("disk I/O error", "disk is full", "No space left")):
        return exc
    if args.out is not None or args.chroma_url is not None:
        return exc
    from chunklab.paths import chunklab_dir

    where = args.store if args.store is not None else chunklab_dir() / "chroma"
    return OSError(
        f"writing the store at {where} failed (disk full or an I/O error: {text.splitlines()[0][:200]}); "
        "what the store held before this run is kept (--clear rebuilds beside it), free space and re-run"
    )


def repair(args: argparse.Namespace) -> None:
    """``--repair``: rebuild the folder store, or the server's collection, from its records.

    A sound store is left as it is. A server collection whose records cannot be read back at all
    is made again, empty, only when PATHS are given (they are indexed into it right after).
    """
    from chunklab.retrieval.chroma.files import diagnose, is_store, store_folder
    from chunklab.retrieval.chroma.files import repair as repair_store

    if args.chroma_url is not None:
        from chunklab.retrieval.chroma.mend import repair_server

        done = repair_server(args.chroma_url, args.collection, args.retry_budget, empty_ok=bool(args.paths))
        print(done.summary())
        return
    folder = store_folder(args.store, create=False)
    damage = diagnose(folder) if is_store(folder) else []
    if not damage:
        print(f"the store at {folder} is sound: nothing to repair")
        return
    kept = repair_store(folder, wait=wait_of(args))
    print(
        f"repaired the store at {folder}: kept " + ", ".join(f"{n} records of {c!r}" for c, n in kept.items())
    )


def add_engine_arguments(p: argparse.ArgumentParser) -> None:
    """``--engine`` and its options (chunklab.ingest: worker processes or a Ray cluster)."""
    add_model_argument(
        p, "embedding model (default {model}; --query alone: the model the store was built with)", True
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
        "--server",
        "--chroma-url",
        dest="chroma_url",
        default=None,
        metavar="URL",
        help="upsert into this Chroma server (chroma run)",
    )
    p.add_argument(
        "--retry-budget",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="how long a Chroma server may stay silent (a restart) before the run stops with exit "
        "status 75 (default 60)",
    )


def fitted_strategy(args: argparse.Namespace) -> Strategy:
    """The strategy of the flags, fitted to the model's window (:meth:`Strategy.fit_to`); prints the note."""
    from chunklab.embed import get_encoder

    strategy = strategy_from_args(args)
    encoder = get_encoder(args.model)
    fitted = strategy.fit_to(encoder)
    if fitted is not strategy:
        print(
            f"--size defaults to {fitted.budget} characters here, "
            f"so that chunks fit the model's {encoder.max_seq_length}-token window"
        )
    return fitted
