"""What :class:`chunklab.retrieval.store.ChunkStore` needs from Chroma: clients, the embedding function, collection records.

A store lives in a local folder (``PersistentClient``), in memory (``EphemeralClient``) or on a
Chroma server (``HttpClient``, e.g. one started with ``chroma run --path DIR --port 8000``);
the store itself never knows which. Each collection records in its Chroma metadata which
encoder filled it and, when given, the chunker configuration, so a later writer cannot mix
another model's vectors or another chunking into it by accident.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from chunklab.embed import DEFAULT_MODEL_NAME, Encoder, get_encoder

try:  # registration makes reopened collections find this embedding function by name
    from chromadb.api.types import Documents, EmbeddingFunction, Embeddings
    from chromadb.utils.embedding_functions import register_embedding_function
except ImportError as exc:  # pragma: no cover - chromadb is in requirements.txt
    raise ImportError("chunklab.retrieval.store needs chromadb: install the pinned requirements.txt") from exc

__all__ = [
    "EF_NAME",
    "ChunklabEmbeddingFunction",
    "StoreMismatchError",
    "check_record",
    "make_client",
    "parse_url",
]

EF_NAME = "chunklab-minilm"  # the registered name (kept from the MiniLM-only days: old stores reopen)
PARENTS_SUFFIX = "_parents"
ENCODER_KEY = "chunklab_encoder"
CONFIG_KEY = "chunklab_config"


class StoreMismatchError(ValueError):
    """A collection was built with another encoder or chunker configuration than the one given."""


@register_embedding_function
class ChunklabEmbeddingFunction(EmbeddingFunction[Documents]):
    """Chroma embedding function backed by :class:`chunklab.embed.Encoder` (local, cached)."""

    def __init__(
        self, encoder: Encoder | None = None, model_path: str | None = None, model: str = "minilm"
    ) -> None:
        self._encoder = encoder
        if encoder is not None:
            custom = getattr(encoder, "_model_path", None)
            model_path = str(custom) if custom is not None else None
            model = getattr(encoder, "model_kind", "minilm")
        self._model_path = model_path
        self._model = model

    @property
    def encoder(self) -> Encoder:
        """The encoder (the shared default one unless a model path was configured)."""
        if self._encoder is None:
            if self._model_path is None:
                self._encoder = get_encoder(self._model)
            else:
                self._encoder = Encoder(self._model, model_path=self._model_path)
        return self._encoder

    def __call__(self, input: Documents) -> Embeddings:
        vecs = self.encoder.encode(list(input), show_progress=False)
        return [v for v in vecs]

    @staticmethod
    def name() -> str:
        return EF_NAME

    def default_space(self) -> str:  # type: ignore[override]
        return "cosine"

    def supported_spaces(self) -> list[str]:  # type: ignore[override]
        return ["cosine", "ip", "l2"]

    def get_config(self) -> dict[str, Any]:
        return {"model": self._model, "model_path": self._model_path}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> ChunklabEmbeddingFunction:
        model = config.get("model")
        return ChunklabEmbeddingFunction(
            model_path=config.get("model_path"), model="static" if model == "static" else "minilm"
        )

    def validate_config_update(self, old_config: dict[str, Any], new_config: dict[str, Any]) -> None:
        return None


def parse_url(url: str) -> tuple[str, int, bool]:
    """``(host, port, ssl)`` of a Chroma server URL such as ``http://127.0.0.1:8000``."""
    if not isinstance(url, str) or "://" not in url:
        raise ValueError(f"url must look like http://HOST:PORT, got {url!r}")
    parts = urlparse(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"url must look like http://HOST:PORT, got {url!r}")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 8000)
    except ValueError as exc:
        raise ValueError(f"url has a bad port: {url!r}") from exc
    return parts.hostname, port, parts.scheme == "https"


def make_client(path: Path | None, url: str | None, in_memory: bool) -> Any:
    """The Chroma client for a folder, a server URL or memory (telemetry off)."""
    import chromadb
    from chromadb.config import Settings

    settings = Settings(anonymized_telemetry=False)
    if in_memory:
        return chromadb.EphemeralClient(settings=settings)
    if url is not None:
        host, port, ssl = parse_url(url)
        try:
            return chromadb.HttpClient(host=host, port=port, ssl=ssl, settings=settings)
        except (ValueError, OSError) as exc:  # chromadb raises ValueError when the server is unreachable
            raise ValueError(
                f"no Chroma server answers at {url} ({exc}); start one with `chroma run`"
            ) from exc
    return chromadb.PersistentClient(path=str(path), settings=settings)


def collection_names(client: Any) -> list[str]:
    """Names of the chunk collections in ``client`` (parent collections left out), sorted."""
    names = [c if isinstance(c, str) else c.name for c in client.list_collections()]
    return sorted(n for n in names if not n.endswith(PARENTS_SUFFIX))


def check_record(collection: Any, encoder: Encoder, config: dict[str, Any] | None, replace: bool) -> bool:
    """Compare what ``collection`` recorded with this encoder and chunker config; record them if new.

    Returns True when the caller must clear the collection first (``replace=True`` and a
    mismatch). Without ``replace`` a mismatch raises :class:`StoreMismatchError` naming both.
    """
    meta = dict(collection.metadata or {})
    wanted_config = json.dumps(config, sort_keys=True, default=str) if config is not None else None
    problems = []
    if meta.get(ENCODER_KEY) not in (None, encoder.name):
        problems.append(f"encoder {meta[ENCODER_KEY]!r} (this store was given {encoder.name!r})")
    if wanted_config is not None and meta.get(CONFIG_KEY) not in (None, wanted_config):
        problems.append(f"chunker configuration {meta[CONFIG_KEY]} (this run uses {wanted_config})")
    if problems and not replace:
        raise StoreMismatchError(
            f"collection {collection.name!r} was built with "
            + " and ".join(problems)
            + ": mixing them would rank two chunkings or two models side by side; pass replace=True "
            "(chunklab index --clear) to rebuild it, or use another collection"
        )
    update = {ENCODER_KEY: encoder.name}
    if wanted_config is not None:
        update[CONFIG_KEY] = wanted_config
    if any(meta.get(k) != v for k, v in update.items()):
        new_meta = {k: v for k, v in meta.items() if not k.startswith("hnsw:")}
        new_meta.update(update)
        collection.modify(metadata=new_meta)
    return bool(problems)


def recorded_encoder(client: Any, name: str) -> str | None:
    """The encoder name the collection ``name`` recorded (None when it does not exist or recorded none)."""
    from chromadb.errors import NotFoundError

    try:
        collection = client.get_collection(name=name)
    except (NotFoundError, ValueError):
        return None
    return (collection.metadata or {}).get(ENCODER_KEY)


def encoder_for(name: str | None) -> Encoder:
    """The encoder that writes vectors named ``name`` (as :attr:`Encoder.name`); the shared MiniLM when None."""
    if name is None or name == DEFAULT_MODEL_NAME:
        return get_encoder()
    if name == f"static:{DEFAULT_MODEL_NAME}":
        return get_encoder("static")
    if name.startswith("static:"):
        return Encoder("static", model_path=name.removeprefix("static:"))
    if name.startswith("local:"):
        return Encoder(model_path=name.removeprefix("local:"))
    return get_encoder()  # another tool's name: check_record then reports the mismatch


def recorded_config(collection: Any) -> dict[str, Any] | None:
    """The chunker configuration a collection recorded (None when none was)."""
    raw = (collection.metadata or {}).get(CONFIG_KEY)
    return json.loads(raw) if raw else None


def pages(collection: Any, include: list[str], batch_size: int = 1000) -> Iterator[dict[str, Any]]:
    """``collection.get`` results, ``batch_size`` records at a time, until none are left."""
    offset = 0
    while True:
        res = collection.get(include=include, limit=batch_size, offset=offset)
        if not res["ids"]:
            return
        yield res
        offset += len(res["ids"])


def batches(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    """``items`` in lists of at most ``size`` (the last may be shorter)."""
    batch: list[Any] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch
