"""A digest of a store's contents: what a re-run after a fault must reach to count as recovered."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from chunklab.retrieval.chroma.store import ChunkStore

__all__ = ["store_digest"]


def store_digest(store: ChunkStore) -> str:
    """A SHA-256 of a store's contents: ids, texts, metadata and float32 vectors of leaves and parents.

    Two stores with the same chunks and bit-identical vectors (the embedding cache answers a
    text with the vector it stored) have the same digest, whatever order or batches wrote
    them: what a re-run after a fault must reach. Collection names are part of it (the live
    generation under the store's name), so a leftover unfinished generation changes it too.
    """
    import hashlib

    import numpy as np

    from chunklab.retrieval.chroma.backend import pages

    rows = []
    live = store._collections
    prefix = live.logical or live.name
    mine = [c for c in store.client.list_collections() if c.name.startswith(prefix)]
    # the live generation under the store's name (which generation holds it is no content)
    names = {live.name: prefix, live.name + "_parents": prefix + "_parents"}
    for coll in mine:
        name = names.get(coll.name, coll.name)
        for res in pages(coll, ["documents", "metadatas", "embeddings"]):
            vectors = res["embeddings"] if res["embeddings"] is not None else [None] * len(res["ids"])
            for cid, doc, meta, vec in zip(
                res["ids"], res["documents"] or [], res["metadatas"] or [], vectors, strict=True
            ):
                raw = np.asarray(vec, dtype=np.float32).tobytes().hex()
                rows.append(f"{name}\0{cid}\0{doc}\0{json.dumps(meta, sort_keys=True)}\0{raw}")
    digest = hashlib.sha256()
    for row in sorted(rows):
        digest.update(row.encode())
    return digest.hexdigest()
