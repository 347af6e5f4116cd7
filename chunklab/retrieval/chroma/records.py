"""What a store's collections record: the encoder that filled them and the chunker configuration.

Each collection records in its Chroma metadata which encoder filled it and, when given, the
chunker configuration, so a later writer cannot mix another model's vectors or another
chunking into it by accident (:func:`check_record`); a reader without an encoder takes the
recorded one (:func:`encoder_for`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

from chunklab.embed import DEFAULT_MODEL_NAME, Encoder, get_encoder
from chunklab.protocols import EncoderLike
from chunklab.retrieval.chroma import aliases

if TYPE_CHECKING:
    from chromadb.api import ClientAPI
    from chromadb.api.models.Collection import Collection

__all__ = [
    "CONFIG_KEY",
    "CollectionConfig",
    "ENCODER_KEY",
    "StoreMismatchError",
    "check_record",
    "encoder_for",
    "recorded_config",
    "recorded_encoder",
]

ENCODER_KEY = "chunklab_encoder"
CONFIG_KEY = "chunklab_config"


class CollectionConfig(TypedDict):
    """How chunklab filled a collection (``chunklab.ingest.plan.collection_config`` makes it).

    The strategy's catalog family and its parameters, the root doc ids are relative to, whether
    chunks carry title/section context, and ``embed_context: False`` when the bare text is embedded.
    """

    strategy: str
    params: dict[str, Any]  # the strategy's parameters, as JSON (values of any JSON type)
    root: str | None
    context: bool
    embed_context: NotRequired[bool]


class StoreMismatchError(ValueError):
    """A collection was built with another encoder or chunker configuration than the one given."""


def check_record(
    collection: Collection, encoder: EncoderLike, config: Mapping[str, object] | None, replace: bool
) -> bool:
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


def recorded_encoder(client: ClientAPI, name: str) -> str | None:
    """The encoder name the store ``name`` recorded (None when it does not exist or recorded none)."""
    from chromadb.errors import NotFoundError

    try:
        collection = client.get_collection(name=aliases.live_name(client, name))
    except (NotFoundError, ValueError):
        return None
    return (collection.metadata or {}).get(ENCODER_KEY)


def encoder_for(name: str | None) -> Encoder:
    """The encoder that writes vectors named ``name`` (its :attr:`Encoder.name`); None: the shared MiniLM."""
    if name is None or name == DEFAULT_MODEL_NAME:
        return get_encoder()
    if name == f"static:{DEFAULT_MODEL_NAME}":
        return get_encoder("static")
    if name.startswith("static:"):
        return Encoder("static", model_path=name.removeprefix("static:"))
    if name.startswith("local:"):
        return Encoder(model_path=name.removeprefix("local:"))
    return get_encoder()  # another tool's name: check_record then reports the mismatch


def recorded_config(collection: Collection) -> dict[str, object] | None:
    """The chunker configuration a collection recorded (None when none was): the JSON object as stored."""
    raw = (collection.metadata or {}).get(CONFIG_KEY)
    return json.loads(raw) if raw else None
