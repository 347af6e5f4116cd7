"""Top-``k`` inner-product search over an in-memory matrix of embeddings: an exact scan, or faiss's IVF.

A single query against a million 256-dimension float32 vectors reads a gigabyte: about
80–280 ms on two cores, however it is written. Past :data:`EXACT_BELOW` rows
:class:`VectorIndex` therefore builds faiss's inverted-file index (``IndexIVFFlat``):
k-means cuts the vectors into ``nlist`` cells, a query scans only the ``nprobe`` cells whose
centroids are nearest, and the vectors themselves are kept unquantized, so a returned score
is the exact inner product. What the approximation costs is recall against the exact scan;
:func:`agreement` measures it, and ``nprobe`` trades it against speed (``nprobe == nlist``
is the exact answer again). Below the threshold the exact scan (:func:`exact_topk`) is both
fast and exact.

Vectors should be unit length (cosine = inner product), as :class:`chunklab.embed.Encoder`
returns them. faiss is imported only when an IVF index is built.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from chunklab._validate import check_positive_int

if TYPE_CHECKING:
    import faiss

__all__ = ["EXACT_BELOW", "METHODS", "VectorIndex", "agreement", "exact_topk"]

#: below this many rows ``method="auto"`` scans exactly; from it on it builds an IVF index
EXACT_BELOW = 100_000
METHODS = ("auto", "exact", "ivf")
_POINTS_PER_CELL = 64  # training vectors per IVF cell (faiss warns below 39)


def _as_matrix(values: ArrayLike, name: str, dim: int | None = None, check_finite: bool = True) -> np.ndarray:
    """``values`` as a C-contiguous float32 2-D array (no copy when it already is one)."""
    try:
        a = np.ascontiguousarray(values, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a 2-D array of numbers: {exc}") from exc
    if a.ndim == 1 and dim is not None and a.shape[0] == dim:
        a = a[None, :]
    if a.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (rows x dimensions), got shape {a.shape}")
    if dim is not None and a.shape[1] != dim:
        raise ValueError(f"{name} have {a.shape[1]} dimensions, the index has {dim}")
    if check_finite and a.size and not np.isfinite(a).all():
        raise ValueError(f"{name} contain NaN or infinite values")
    return a


def exact_topk(
    matrix: np.ndarray, queries: np.ndarray, k: int, block: int = 65536
) -> tuple[np.ndarray, np.ndarray]:
    """Exact top ``k`` rows of ``matrix`` by inner product with each query, scanning ``block`` rows at a time.

    Returns ``(scores, ids)``, each of shape ``(len(queries), min(k, len(matrix)))``, best
    first; equal scores come in row order. Memory stays at ``len(queries) x block`` scores.
    """
    check_positive_int(k, "k")
    check_positive_int(block, "block")
    m = _as_matrix(
        matrix, "matrix", check_finite=False
    )  # checked through its scores: no extra pass per query
    q = _as_matrix(queries, "queries", m.shape[1])
    take = min(k, len(m))
    best_s = np.full((len(q), 0), -np.inf, dtype=np.float32)
    best_i = np.zeros((len(q), 0), dtype=np.int64)
    for lo in range(0, len(m), block):
        scores = q @ m[lo : lo + block].T
        if not np.isfinite(scores).all():
            raise ValueError(
                f"matrix rows {lo}..{lo + len(scores.T) - 1} or the queries contain NaN or infinite values"
            )
        part = _block_top(scores, min(take, scores.shape[1]))
        s = np.concatenate([best_s, np.take_along_axis(scores, part, 1)], axis=1)
        i = np.concatenate([best_i, part + lo], axis=1)
        order = np.lexsort((i, -s), axis=1)[:, :take]  # score descending, then row ascending
        best_s, best_i = np.take_along_axis(s, order, 1), np.take_along_axis(i, order, 1)
    return best_s, best_i


def _block_top(scores: np.ndarray, t: int) -> np.ndarray:
    """Columns of the ``t`` best scores in each row, the earliest columns among equal scores at the cut."""
    if t >= scores.shape[1]:
        return np.broadcast_to(np.arange(scores.shape[1]), scores.shape)
    part = np.argpartition(-scores, t - 1, axis=1)[:, :t]
    cut = np.take_along_axis(scores, part, 1).min(axis=1, keepdims=True)
    ties = (scores >= cut).sum(axis=1) > t  # rows where argpartition chose among equal scores arbitrarily
    if ties.any():
        rows = scores[ties]
        above, equal = rows > cut[ties], rows == cut[ties]
        need = t - above.sum(axis=1, keepdims=True)
        keep = above | (equal & (np.cumsum(equal, axis=1) <= need))
        part = part.copy()
        part[ties] = np.nonzero(keep)[1].reshape(-1, t)
    return part


def agreement(found: Sequence[Sequence[int]], exact: Sequence[Sequence[int]], k: int) -> float:
    """Mean share of each exact top ``k`` that ``found``'s top ``k`` also returns (ANN recall@k)."""
    check_positive_int(k, "k")
    if len(found) != len(exact):
        raise ValueError(f"{len(found)} rankings against {len(exact)} exact rankings")
    shares = [
        len(set(list(f)[:k]) & set(list(e)[:k])) / len(list(e)[:k]) for f, e in zip(found, exact) if len(e)
    ]
    return float(np.mean(shares)) if shares else 1.0


class VectorIndex:
    """Inner-product top-``k`` over ``vectors`` (rows): exact, or faiss IVF past :data:`EXACT_BELOW` rows.

    ``method`` is ``"exact"``, ``"ivf"`` or ``"auto"``. For IVF, ``nlist`` cells (default
    about ``4 * sqrt(n)``, at most ``n / 39``) are trained on a seeded sample of
    ``64 * nlist`` rows, and a query scans ``nprobe`` of them (default ``nlist / 16``,
    at least 16). ``threads`` sets faiss's OpenMP threads (default: faiss's own). The exact
    index keeps a reference to ``vectors`` (float32, C order: no copy); the IVF index holds
    its own copy, so the caller may drop theirs.
    """

    def __init__(
        self,
        vectors: ArrayLike,
        *,
        method: str = "auto",
        nlist: int | None = None,
        nprobe: int | None = None,
        seed: int = 0,
        threads: int | None = None,
    ) -> None:
        if method not in METHODS:
            raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
        for value, name in ((nlist, "nlist"), (nprobe, "nprobe"), (threads, "threads")):
            if value is not None:
                check_positive_int(value, name)
        matrix = _as_matrix(vectors, "vectors")
        self.n, self.dim = matrix.shape
        if method == "auto":
            method = "ivf" if self.n >= EXACT_BELOW else "exact"
        self.method = method
        self.nlist = self.nprobe = 0
        self._faiss: faiss.IndexIVFFlat | None = None
        self._matrix: np.ndarray | None = None  # the vectors themselves, for an exact index
        if method == "exact":
            self._matrix = matrix
            return
        if self.n == 0:
            raise ValueError("an IVF index needs at least one vector")
        faiss = _import_faiss()
        if threads is not None:
            faiss.omp_set_num_threads(threads)
        self.nlist = min(nlist or max(1, round(4 * math.sqrt(self.n))), max(1, self.n // 39))
        self.nprobe = min(self.nlist, nprobe or max(16, self.nlist // 16))
        rng = np.random.default_rng(seed)
        n_train = min(self.n, _POINTS_PER_CELL * self.nlist)
        train = matrix if n_train == self.n else matrix[np.sort(rng.choice(self.n, n_train, replace=False))]
        quantizer = faiss.IndexFlatIP(self.dim)
        index = faiss.IndexIVFFlat(quantizer, self.dim, self.nlist, faiss.METRIC_INNER_PRODUCT)
        index.cp.seed = seed
        index.train(train)
        del train
        index.add(matrix)
        index.nprobe = self.nprobe
        self._faiss, self._quantizer = index, quantizer  # the IVF index does not own its quantizer
        self._matrix = None

    def __len__(self) -> int:
        return self.n

    def __repr__(self) -> str:
        extra = f", nlist={self.nlist}, nprobe={self.nprobe}" if self.method == "ivf" else ""
        return f"VectorIndex({self.n} x {self.dim}, method={self.method!r}{extra})"

    def search(self, queries: ArrayLike, k: int, nprobe: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(scores, ids)`` of the top ``k`` rows per query, best first: shape ``(len(queries), min(k, n))``.

        An IVF search can find fewer than ``k`` rows in the cells it scans: those places
        hold id ``-1`` and score ``-inf``. ``nprobe`` overrides the index's for this call.
        """
        check_positive_int(k, "k")
        q = _as_matrix(queries, "queries", self.dim)
        if self._matrix is not None:  # an exact index
            return exact_topk(self._matrix, q, k)
        if nprobe is not None:
            check_positive_int(nprobe, "nprobe")
        assert self._faiss is not None  # an IVF index
        self._faiss.nprobe = min(self.nlist, nprobe or self.nprobe)
        try:
            scores, ids = self._faiss.search(q, min(k, self.n))
        finally:
            self._faiss.nprobe = self.nprobe
        scores[ids < 0] = -np.inf
        return scores, ids

    def ranked(self, queries: ArrayLike, k: int, nprobe: int | None = None) -> list[list[int]]:
        """The top ``k`` row numbers per query, best first (rows an IVF search did not reach left out)."""
        _, ids = self.search(queries, k, nprobe=nprobe)
        return [[int(i) for i in row if i >= 0] for row in ids]


def _import_faiss() -> ModuleType:
    """faiss, or a clear error saying how to get it."""
    try:
        import faiss
    except ImportError as exc:  # pragma: no cover - faiss-cpu is in requirements.txt
        raise ImportError(
            "an IVF vector index needs faiss: install the pinned requirements.txt "
            "(faiss-cpu), or use method='exact'"
        ) from exc
    return faiss
