"""The argument groups several commands share, spelled once: strategy, model, store wait, ``--where``.

Each ``add_*`` function registers a group on a parser; its companion (:func:`strategy_from_args`,
:func:`wait_of`, :func:`parse_where`) reads the parsed values back. Commands import these from
here and never from one another.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from chunklab.retrieval.chroma.lock import BUSY_EXIT

if TYPE_CHECKING:
    from chunklab.chunkers.catalog import Strategy

__all__ = [
    "STORE_HELP",
    "WHERE_HELP",
    "add_model_argument",
    "add_strategy_arguments",
    "add_wait_arguments",
    "add_where_argument",
    "busy",
    "parse_where",
    "strategy_from_args",
    "wait_of",
]

#: the one spelling of ``--where`` documented in every command's help
WHERE_HELP = (
    "keep chunks whose metadata KEY equals VALUE (values read as int, float, bool or text); "
    'repeatable, all must hold; a JSON Chroma filter such as \'{"start": {"$gt": 0}}\' also works'
)
#: the one spelling of the store argument
STORE_HELP = "the Chroma store: a folder (as written by chunklab index --store) or a server URL (chroma run)"


def add_strategy_arguments(p: argparse.ArgumentParser, names: list[str]) -> None:
    """The strategy flags ``chunk`` and ``index`` share (unset flags keep the strategy's defaults)."""
    p.add_argument(
        "--strategy",
        default="structural",
        metavar="NAME",
        help=f"one of {', '.join(names)} (default structural; defaults: chunklab evaluate --help)",
    )
    p.add_argument("--size", type=int, default=None, help="chunk size (size or max_chars of the strategy)")
    p.add_argument("--overlap", type=int, default=None, help="overlap, for fixed and recursive")
    p.add_argument(
        "--unit",
        default=None,
        metavar="UNIT",
        help="what --size (and --min-chars) count, for every strategy: chars, words, tokens (MiniLM's) "
        "or tokenizer:PATH (any tokenizer.json)",
    )
    p.add_argument("--levels", default=None, help="hierarchical level sizes, largest first: 2048/512/128")
    p.add_argument(
        "--min-chars", type=int, default=None, help="structural Python: merge units below this (in --unit)"
    )
    p.add_argument(
        "--keep-boilerplate",
        action="store_const",
        const=True,
        default=None,
        help="structural HTML: keep nav/header/footer/aside text (dropped by default)",
    )
    p.add_argument(
        "--root",
        default=None,
        metavar="DIR",
        help="corpus root: doc_ids are paths relative to it (default: the common folder of PATHs)",
    )
    p.add_argument(
        "--strict",
        action="store_true",
        help="skip files that are not valid in their encoding instead of decoding them by a fallback",
    )
    p.add_argument(
        "--ocr",
        choices=("auto", "always", "never"),
        default=None,
        help="read pages by OCR: auto (PDF pages without a text layer, and PNG/JPEG/TIFF files), "
        "always (every PDF page), never (default: $CHUNKLAB_OCR, else auto)",
    )
    p.add_argument(
        "--ocr-engine",
        choices=("tesseract", "rapidocr"),
        default=None,
        help="the OCR engine (default: the measured default, else the one installed)",
    )


def strategy_from_args(args: argparse.Namespace) -> Strategy:
    """The catalog strategy the flags of :func:`add_strategy_arguments` name; their OCR flags are set
    for the run (:func:`chunklab.documents.ocr.set_ocr`, which worker processes inherit)."""
    from chunklab.chunkers.catalog import strategy_from_options
    from chunklab.documents.ocr import set_ocr

    set_ocr(getattr(args, "ocr", None), getattr(args, "ocr_engine", None))

    return strategy_from_options(
        args.strategy,
        size=args.size,
        overlap=args.overlap,
        unit=args.unit,
        levels=args.levels,
        min_chars=args.min_chars,
        keep_boilerplate=args.keep_boilerplate,
    )


def add_model_argument(
    p: argparse.ArgumentParser, help: str = "embedding model (default {model})", unset: bool = False
) -> None:
    """``--model``, its help naming the one default model (:data:`chunklab.embed.DEFAULT_MODEL`).

    ``{model}`` in ``help`` is replaced by that name. ``unset=True`` leaves ``args.model`` None
    when the flag is not given, for a command that then uses the model a store recorded.
    """
    from chunklab.embed import DEFAULT_MODEL

    p.add_argument(
        "--model",
        choices=("minilm", "static"),
        default=None if unset else DEFAULT_MODEL,
        help=help.format(model=DEFAULT_MODEL),
    )


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


def parse_where(items: list[str] | str | None) -> dict[str, object] | None:
    """``--where`` items as one Chroma filter: each ``KEY=VALUE`` or a JSON object; all must hold.

    ``["kind=function", "line_start=3"]`` -> ``{"$and": [{"kind": "function"}, {"line_start": 3}]}``
    (values read as int/float/bool/str); ``['{"start": {"$gt": 0}}']`` is taken as it is.
    """
    from chunklab.chunkers.catalog import parse_param_value

    if isinstance(items, str):
        items = [items]
    conditions: list[dict[str, object]] = []
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
