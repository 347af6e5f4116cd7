"""Argument checks shared by the package: a wrong type or an impossible value raises a ValueError."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable
from typing import ParamSpec, TypeGuard, TypeVar

P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")


def check_text(text: object, name: str = "text") -> str:
    """``text`` as str: bytes decoded by :func:`chunklab.decoding.decode_bytes`, anything else refused."""
    if isinstance(text, str):
        return text
    if isinstance(text, (bytes, bytearray)):
        from chunklab.decoding import decode_bytes

        return decode_bytes(bytes(text), "text", name=name).text
    raise ValueError(f"{name} must be a str (or bytes), got {type(text).__name__}")


def check_positive_int(value: object, name: str) -> int:
    """``value`` as a positive int, else a ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if value <= 0:
        raise ValueError(f"{name} must be > 0, got {value}")
    return value


def check_non_negative_int(value: object, name: str) -> int:
    """``value`` as an int >= 0, else a ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return value


def check_int_range(value: object, name: str, lo: int, hi: int) -> int:
    """``value`` as an int in ``[lo, hi]``, else a ValueError naming ``name`` and the range."""
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ValueError(f"{name} must be an integer from {lo} to {hi}, got {value!r}")
    return value


def check_bool(value: object, name: str) -> bool:
    """``value`` as a bool (True or False only), else a ValueError naming ``name``."""
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return value


def check_choice(value: object, choices: Iterable[T], name: str) -> T:
    """``value`` when it is one of ``choices``, else a ValueError naming ``name`` and listing them."""
    options = tuple(choices)
    if not _one_of(value, options):
        raise ValueError(f"{name} must be one of {', '.join(map(repr, options))}; got {value!r}")
    return value


def _one_of(value: object, options: tuple[T, ...]) -> TypeGuard[T]:
    """Whether ``value`` is (equal to) one of ``options``: then it is one of their type."""
    return value in options


def check_overlap(overlap: object, size: int, name: str = "overlap", size_name: str = "size") -> int:
    """``overlap`` as an int in ``[0, size)``, else a ValueError naming the parameter."""
    if isinstance(overlap, bool) or not isinstance(overlap, int):
        raise ValueError(f"{name} must be a non-negative integer, got {overlap!r}")
    if overlap < 0:
        raise ValueError(f"{name} must be >= 0, got {overlap}")
    if overlap >= size:
        raise ValueError(f"{name} ({overlap}) must be smaller than {size_name} ({size})")
    return overlap


def check_doc_id(doc_id: object) -> str:
    """``doc_id`` as a str."""
    if not isinstance(doc_id, str):
        raise ValueError(f"doc_id must be a str, got {type(doc_id).__name__}")
    return doc_id


def is_int(value: object) -> TypeGuard[int]:
    """True for an ``int`` that is not a ``bool``."""
    return isinstance(value, int) and not isinstance(value, bool)


def check_number(value: object, name: str) -> float:
    """``value`` as a float (an int or float, not a bool, not NaN), else a ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        raise ValueError(f"{name} must be a number, got {value!r}")
    return float(value)


def check_share(value: object, name: str) -> float:
    """``value`` as a float in ``(0, 1]``, else a ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
        raise ValueError(f"{name} must be a number in (0, 1], got {value!r}")
    return float(value)


def renamed_keyword(old: str, new: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorator: accept the deprecated keyword ``old`` as ``new`` (giving both is a ValueError).

    Used where a parameter was renamed but the chapters publish the old name, e.g. ``max_chars``
    for ``max_size`` (a budget measured in ``unit``, not always characters).
    """

    def rename(fn: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(fn)
        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            if old in kwargs:
                if new in kwargs:
                    raise ValueError(f"give {new} (or its deprecated name {old}), not both")
                kwargs[new] = kwargs.pop(old)
            return fn(*args, **kwargs)

        return call

    return rename


def parameters_of(model: Callable[P, object]) -> Callable[[Callable[..., R]], Callable[P, R]]:
    """Decorator: the function takes ``model``'s parameters, spelled once in ``model``.

    For a thin variant of ``model`` (same arguments, another return value): its signature, as
    ``help`` and ``inspect`` show it, is ``model``'s with the function's own return annotation,
    and the type checker checks its calls against ``model``'s parameters.
    """

    def adopt(fn: Callable[..., R]) -> Callable[P, R]:
        returns = inspect.signature(fn).return_annotation
        fn.__signature__ = inspect.signature(model).replace(return_annotation=returns)  # type: ignore[attr-defined]
        return fn

    return adopt
