"""Late chunking (Günther et al., 2024): chunk vectors pooled from token embeddings of the whole window.

An ordinary chunk vector comes from MiniLM reading the chunk alone. Late chunking runs the
transformer **once over the document** (or a window of it) and mean-pools, for each chunk, the
token embeddings whose character offsets fall inside the chunk's ``[start, end)``, so every
chunk vector has seen the text around it. The context MiniLM can see is its window: the packaged
model's ``max_seq_length`` (256 tokens, ``[CLS]`` and ``[SEP]`` included, so 254 tokens of text).

Rules, each pinned by a test:

- **Windows.** A document longer than one window is cut into windows of 254 tokens, consecutive
  windows sharing ``overlap`` tokens (default :data:`LATE_OVERLAP`). Each token takes its embedding
  from the window where it sits farthest from an edge (the shared tokens are split in half between
  the two windows), so every token has one embedding and as much context on both sides as the
  window allows. Windows of all documents are run in batches.
- **Tokens of a chunk.** A token belongs to every chunk its character span overlaps (a token cut by
  a chunk boundary counts in both). The document's ``[CLS]`` is pooled with the chunks that hold its
  first token and its ``[SEP]`` with those that hold its last, as mean pooling counts them when a
  text is embedded alone: a chunk that is the whole of a one-window document gets exactly its
  ordinary vector.
- **No tokens.** A chunk without a token (only whitespace or characters the tokenizer drops) gets
  its ordinary vector (the chunk embedded alone), counted in :attr:`LateEncoder.fallbacks`.
- **Pooling** is the model's own: the mean over tokens, then L2 normalization.
- **Cache.** Vectors go to the encoder's on-disk :class:`~chunklab.embed.encoder.EmbeddingCache`,
  keyed by (model, window length and overlap, the chunk's span, the document text): the document
  text fixes every window, so a second run runs no window.

The spans index the text given: for a Markdown or code document, the document itself.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from chunklab._validate import check_positive_int
from chunklab.embed.encoder import EmbeddingCache, Encoder, get_encoder

__all__ = ["LATE_OVERLAP", "LateEncoder", "late_owners", "late_windows"]

#: tokens consecutive windows share when a document is longer than the model's window
LATE_OVERLAP = 64
#: windows per model batch
LATE_BATCH = 16
#: windows whose token embeddings are held at once (about 25 MB for MiniLM) before pooling
GROUP_WINDOWS = 64


class LateEncoder:
    """Late-chunked chunk vectors from a MiniLM :class:`~chunklab.embed.Encoder`.

    ``encoder`` (default: the shared :func:`~chunklab.embed.get_encoder`) gives the model, the
    device and the cache; it must run MiniLM (a static model has no token context). ``overlap``
    is the tokens consecutive windows share; ``batch_size`` the windows per model batch.
    :meth:`encode_spans` embeds the chunks of one text, :meth:`encode_documents` of many (their
    windows batched together). Queries are embedded by the encoder itself, as usual.
    Counters: ``windows`` run through the model, ``chunks`` pooled, ``fallbacks`` (chunks
    without a token), ``cache_hits``, ``embed_seconds`` (wall time inside the model).
    """

    def __init__(
        self, encoder: Encoder | None = None, *, overlap: int = LATE_OVERLAP, batch_size: int = LATE_BATCH
    ) -> None:
        encoder = encoder if encoder is not None else get_encoder()
        if not isinstance(encoder, Encoder) or encoder.model_kind != "minilm":
            raise ValueError(f"late chunking needs a MiniLM Encoder (token embeddings), got {encoder!r}")
        if isinstance(overlap, bool) or not isinstance(overlap, int) or overlap < 0:
            raise ValueError(f"overlap must be a non-negative int (tokens), got {overlap!r}")
        check_positive_int(batch_size, "batch_size")
        self.encoder = encoder
        self.overlap = overlap
        self.batch_size = batch_size
        self.windows = 0
        self.chunks = 0
        self.fallbacks = 0
        self.cache_hits = 0
        self.embed_seconds = 0.0

    def __repr__(self) -> str:
        return f"LateEncoder(encoder={self.encoder!r}, overlap={self.overlap})"

    @property
    def window(self) -> int:
        """Tokens of text per window: the model's ``max_seq_length`` less ``[CLS]`` and ``[SEP]``."""
        self.encoder.model  # noqa: B018 - loading the model reads its max_seq_length
        length = int(self.encoder.max_seq_length or 0) - 2
        if length <= self.overlap:
            raise ValueError(f"overlap must be under the window of {length} tokens, got {self.overlap}")
        return length

    @property
    def name(self) -> str:
        """What the vectors are recorded as: the encoder's name, late-chunked, with window and overlap."""
        return f"{self.encoder.name}|late[window={self.window},overlap={self.overlap}]"

    @property
    def dim(self) -> int:
        """Vector dimensions (the encoder's)."""
        return self.encoder.dim

    def encode_spans(self, text: str, spans: Sequence[tuple[int, int]]) -> np.ndarray:
        """One unit vector per ``(start, end)`` span of ``text``: an ``(len(spans), dim)`` float32 array."""
        return self.encode_documents([(text, spans)])[0]

    def encode_documents(
        self, documents: Sequence[tuple[str, Sequence[tuple[int, int]]]]
    ) -> list[np.ndarray]:
        """Late-chunked vectors for several ``(text, spans)`` pairs, one array per document.

        Every span must satisfy ``0 <= start < end <= len(text)``. Cached vectors are read first;
        the windows of the documents still missing a vector run in batches.
        """
        docs = [_checked(i, item) for i, item in enumerate(documents)]
        out = [np.empty((len(spans), self.dim), dtype=np.float32) for _, spans in docs]
        cache = self.encoder.cache
        if cache is not None and cache.disabled:
            cache = None
        keys: list[list[bytes]] = []
        todo: list[int] = []
        for d, (text, spans) in enumerate(docs):
            doc_keys = [self._key(text, s, e) for s, e in spans] if cache is not None else []
            found = cache.get_many(doc_keys) if cache is not None else {}
            keys.append(doc_keys)
            if cache is not None and all(k in found for k in doc_keys):
                out[d][:] = [found[k] for k in doc_keys]
                self.cache_hits += len(spans)
            else:
                todo.append(d)
        group: list[tuple[int, _Plan]] = []
        for n, d in enumerate(todo):  # documents in groups of about GROUP_WINDOWS windows: memory stays flat
            group.append((d, self._plan(docs[d][0])))
            if n == len(todo) - 1 or sum(len(p.window_ids) for _, p in group) >= GROUP_WINDOWS:
                states = self._run([w for _, plan in group for w in plan.window_ids])
                at = 0
                for g, plan in group:
                    hidden = states[at : at + len(plan.window_ids)]
                    at += len(plan.window_ids)
                    out[g][:] = self._pool(docs[g][0], docs[g][1], plan, hidden)
                    if cache is not None:
                        cache.put_many(list(zip(keys[g], out[g], strict=True)))
                group = []
        return out

    def _key(self, text: str, start: int, end: int) -> bytes:
        device = "|fp16" if self.encoder.device.startswith("cuda") else ""
        return EmbeddingCache.key(f"{self.name}{device}|span={start}:{end}", text)

    def _plan(self, text: str) -> _Plan:
        tokenizer = self.encoder.model.tokenizer
        enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
        ids = list(enc["input_ids"])
        offsets = np.asarray(enc["offset_mapping"], dtype=np.int64).reshape(-1, 2)
        bounds = late_windows(len(ids), self.window, self.overlap)
        owner = late_owners(bounds, len(ids))
        window_ids = [[tokenizer.cls_token_id, *ids[a:b], tokenizer.sep_token_id] for a, b in bounds]
        return _Plan(offsets, bounds, owner, window_ids)

    def _run(self, windows: list[list[int]]) -> list[np.ndarray]:
        """The last hidden states of each window (``[CLS]`` and ``[SEP]`` included), float32."""
        import torch

        model = self.encoder.model
        transformer: Any = model[0].auto_model
        device = self.encoder.device
        order = sorted(range(len(windows)), key=lambda i: -len(windows[i]))  # similar lengths pad less
        states: list[np.ndarray] = [np.empty(0)] * len(windows)
        t0 = time.perf_counter()
        with torch.inference_mode():
            for i in range(0, len(order), self.batch_size):
                batch = [windows[j] for j in order[i : i + self.batch_size]]
                width = max(len(w) for w in batch)
                ids = torch.zeros((len(batch), width), dtype=torch.long)
                mask = torch.zeros((len(batch), width), dtype=torch.long)
                for r, w in enumerate(batch):
                    ids[r, : len(w)] = torch.tensor(w, dtype=torch.long)
                    mask[r, : len(w)] = 1
                hidden = transformer(
                    input_ids=ids.to(device),
                    attention_mask=mask.to(device),
                    token_type_ids=torch.zeros_like(ids).to(device),
                ).last_hidden_state
                hidden = hidden.float().cpu().numpy()
                for r, j in enumerate(order[i : i + self.batch_size]):
                    states[j] = hidden[r, : len(windows[j])]
        self.embed_seconds += time.perf_counter() - t0
        self.windows += len(windows)
        return states

    def _pool(
        self, text: str, spans: Sequence[tuple[int, int]], plan: _Plan, hidden: list[np.ndarray]
    ) -> np.ndarray:
        n = len(plan.owner)
        tokens = np.empty((n, self.dim), dtype=np.float32)
        for w, (a, b) in enumerate(plan.bounds):
            mine = np.flatnonzero(plan.owner[a:b] == w)
            tokens[a + mine] = hidden[w][1 + mine]  # row 0 is [CLS]
        cls = hidden[0][0] if hidden else None
        sep = hidden[-1][-1] if hidden else None
        starts, ends = plan.offsets[:, 0], plan.offsets[:, 1]
        vecs = np.zeros((len(spans), self.dim), dtype=np.float32)
        empty: list[int] = []
        for i, (s, e) in enumerate(spans):
            inside = np.flatnonzero((starts < e) & (ends > s))
            if inside.size == 0:
                empty.append(i)
                continue
            rows = [tokens[inside]]
            if inside[0] == 0 and cls is not None:
                rows.append(cls[None, :])
            if inside[-1] == n - 1 and sep is not None:
                rows.append(sep[None, :])
            total = np.concatenate(rows).astype(np.float64).sum(axis=0)
            count = sum(len(r) for r in rows)
            vecs[i] = total / count
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        vecs /= np.where(norms > 0, norms, 1.0)
        if empty:
            vecs[empty] = self.encoder.encode(
                [text[spans[i][0] : spans[i][1]] for i in empty], show_progress=False
            )
            self.fallbacks += len(empty)
        self.chunks += len(spans)
        return vecs


def late_windows(n_tokens: int, window: int, overlap: int) -> list[tuple[int, int]]:
    """Token ranges ``[a, b)`` of the windows over ``n_tokens`` tokens: ``window`` long, ``overlap`` shared.

    The last window ends at the last token (it may share more than ``overlap`` with the one before);
    a text shorter than a window is one window, and a text without tokens has none.
    """
    check_positive_int(window, "window")
    if isinstance(overlap, bool) or not isinstance(overlap, int) or not 0 <= overlap < window:
        raise ValueError(f"overlap must be an int in [0, window={window}), got {overlap!r}")
    if n_tokens <= 0:
        return []
    if n_tokens <= window:
        return [(0, n_tokens)]
    stride = window - overlap
    starts = list(range(0, n_tokens - window, stride)) + [n_tokens - window]
    return [(a, a + window) for a in dict.fromkeys(starts)]


def late_owners(bounds: Sequence[tuple[int, int]], n_tokens: int) -> np.ndarray:
    """For each of ``n_tokens`` tokens, the window of ``bounds`` that embeds it: the one where it sits
    farthest from an edge (two windows' shared tokens are split in half; a tie goes to the earlier)."""
    owner = np.full(n_tokens, -1, dtype=np.int64)
    best = np.full(n_tokens, -1, dtype=np.int64)
    for w, (a, b) in enumerate(bounds):
        pos = np.arange(a, b)
        margin = np.minimum(pos - a, b - 1 - pos)
        better = margin > best[a:b]
        owner[a:b][better] = w
        best[a:b][better] = margin[better]
    if n_tokens and owner.min() < 0:
        raise ValueError(f"the windows {list(bounds)[:4]}... leave tokens of {n_tokens} uncovered")
    return owner


@dataclass(frozen=True)
class _Plan:
    """One document's tokens (character offsets), windows, and which window embeds each token."""

    offsets: np.ndarray
    bounds: list[tuple[int, int]]
    owner: np.ndarray
    window_ids: list[list[int]]


def _checked(index: int, item: object) -> tuple[str, list[tuple[int, int]]]:
    if not isinstance(item, tuple | list) or len(item) != 2:
        raise ValueError(f"documents[{index}] must be a (text, spans) pair, got {item!r:.80}")
    text, spans = item
    if not isinstance(text, str):
        raise ValueError(f"documents[{index}]: text must be a str, got {type(text).__name__}")
    out = []
    for s in spans:
        if (
            not isinstance(s, tuple | list)
            or len(s) != 2
            or not all(isinstance(x, int | np.integer) and not isinstance(x, bool) for x in s)
            or not 0 <= s[0] < s[1] <= len(text)
        ):
            raise ValueError(
                f"spans must be (start, end) ints with 0 <= start < end <= {len(text)}, got {s!r:.80}"
            )
        out.append((int(s[0]), int(s[1])))
    return text, out
