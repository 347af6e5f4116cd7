"""MiniLM's forward pass in NumPy, for a process that embeds a few queries and nothing else.

A first query (``chunklab search``) needs one forward pass of a 6-layer encoder; importing torch,
transformers and sentence-transformers and building the model costs seconds of CPU before
that pass runs. :class:`NumpyMiniLM` reads the same packaged weights (``model.safetensors``)
and tokenizer (``tokenizer.json``, run by the ``tokenizers`` library) and computes what
sentence-transformers computes for all-MiniLM-L6-v2: BERT's embeddings, six encoder layers,
the mean of the token vectors and L2 normalisation, in float32. Texts are embedded one at a
time, unpadded, so no attention mask is needed. The vectors equal the torch model's to float
precision (``tests/integration/test_numpy_minilm.py`` holds them to a cosine of 0.9999 and the same
search results); :class:`chunklab.embed.Encoder` uses it only for small batches before torch
is loaded, and torch for everything else. :class:`StaticTable` does the same for the static
model: its table and tokenizer read directly, without importing model2vec.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

__all__ = ["NumpyMiniLM", "StaticTable"]

_PREFIX = "encoder.layer."


class NumpyMiniLM:
    """A BERT sentence encoder (mean pooling, normalised) evaluated with NumPy from a model folder.

    ``folder`` holds ``config.json``, ``model.safetensors`` and ``tokenizer.json`` of a
    ``BertModel``; ``max_seq_length`` truncates like sentence-transformers (special tokens
    included: ``[CLS]``, the text's first tokens, ``[SEP]``). A config it cannot evaluate exactly
    (another architecture or activation) is a ValueError naming what it found.
    """

    def __init__(self, folder: str | Path, max_seq_length: int = 256) -> None:
        from safetensors.numpy import load_file

        from chunklab.units import get_tokenizer

        folder = Path(folder)
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        supported = {"model_type": "bert", "hidden_act": "gelu", "position_embedding_type": "absolute"}
        for key, value in supported.items():
            if config.get(key, value) != value:
                raise ValueError(f"NumpyMiniLM evaluates {key}={value!r}; {folder} has {config.get(key)!r}")
        self.heads = int(config["num_attention_heads"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.max_seq_length = min(int(max_seq_length), int(config["max_position_embeddings"]))
        self.w = load_file(str(folder / "model.safetensors"))
        self.layers = int(config["num_hidden_layers"])
        self.dim = int(config["hidden_size"])
        self.tokenizer = get_tokenizer(str(folder / "tokenizer.json"))  # shared: no truncation, no padding

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """L2-normalised float32 sentence vectors, one row per text."""
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, encoding in enumerate(self.tokenizer.encode_batch(list(texts))):
            ids = encoding.ids
            if len(ids) > self.max_seq_length:  # [CLS] text [SEP]: cut the text, keep [SEP]
                ids = ids[: self.max_seq_length - 1] + ids[-1:]
            vec = self.forward(np.asarray(ids, dtype=np.int64)).mean(axis=0)
            out[i] = vec / max(float(np.linalg.norm(vec)), 1e-12)
        return out

    def forward(self, ids: np.ndarray) -> np.ndarray:
        """The last hidden states (tokens x hidden) of one unpadded sequence of token ids."""
        w = self.w
        n = len(ids)
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:n]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = self._norm(x, "embeddings.LayerNorm")
        for layer in range(self.layers):
            p = f"{_PREFIX}{layer}."
            x = self._norm(x + self._attention(x, p + "attention."), p + "attention.output.LayerNorm")
            hidden = _gelu(self._dense(x, p + "intermediate.dense"))
            x = self._norm(x + self._dense(hidden, p + "output.dense"), p + "output.LayerNorm")
        return x

    def _attention(self, x: np.ndarray, p: str) -> np.ndarray:
        n, heads = len(x), self.heads
        size = self.dim // heads

        def split(name: str) -> np.ndarray:  # (heads, tokens, size)
            return self._dense(x, p + "self." + name).reshape(n, heads, size).transpose(1, 0, 2)

        q, k, v = split("query"), split("key"), split("value")
        scores = q @ k.transpose(0, 2, 1) / np.float32(np.sqrt(size))
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        scores /= scores.sum(axis=-1, keepdims=True)
        context = (scores @ v).transpose(1, 0, 2).reshape(n, self.dim)
        return self._dense(context, p + "output.dense")

    def _dense(self, x: np.ndarray, name: str) -> np.ndarray:
        return x @ self.w[name + ".weight"].T + self.w[name + ".bias"]

    def _norm(self, x: np.ndarray, name: str) -> np.ndarray:
        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        return (x - mean) / np.sqrt(var + np.float32(self.eps)) * self.w[name + ".weight"] + self.w[
            name + ".bias"
        ]


def _gelu(x: np.ndarray) -> np.ndarray:
    """BERT's exact GELU, ``x * Phi(x)``, with erf from a Chebyshev fit (relative error under 1.2e-7)."""
    return (0.5 * x * (1.0 + _erf(x / np.sqrt(2.0)))).astype(np.float32)


#: Numerical Recipes' ``erfcc`` coefficients, highest power first: erfc(z) = t exp(-z^2 + P(t)), t = 1/(1+z/2)
_ERFC = (0.17087277, -0.82215223, 1.48851587, -1.13520398, 0.27886807, -0.18628806, 0.09678418, 0.37409196,
         1.00002368, -1.26551223)  # fmt: skip


def _erf(x: np.ndarray) -> np.ndarray:
    """erf, evaluated in float64 from :data:`_ERFC` (fractional error below 1.2e-7 everywhere)."""
    z = np.abs(x.astype(np.float64))
    t = 1.0 / (1.0 + 0.5 * z)
    poly = np.zeros_like(t)
    for c in _ERFC:
        poly = poly * t + c
    erfc = t * np.exp(poly - z * z)
    return np.where(x >= 0, 1.0 - erfc, erfc - 1.0)


class StaticTable:
    """A distilled static model read from its folder: a text's vector is the mean of its tokens' rows.

    What model2vec's ``StaticModel.encode`` computes for a model the kit distilled (tokens without
    special tokens, unknown tokens dropped, no truncation; a text of unknown tokens only is a zero
    row), without importing model2vec (and joblib). A folder holding
    quantisation weights or a token mapping is a ValueError: those need model2vec itself.
    """

    def __init__(self, folder: str | Path) -> None:
        from safetensors import safe_open
        from tokenizers import Tokenizer

        folder = Path(folder)
        with safe_open(str(folder / "model.safetensors"), framework="numpy") as tensors:
            extra = sorted(set(tensors.keys()) - {"embeddings"})
            if extra:
                raise ValueError(f"StaticTable reads a plain table; {folder} also holds {extra}")
            self.embedding = tensors.get_tensor("embeddings")
        if not np.issubdtype(self.embedding.dtype, np.floating):
            raise ValueError(f"StaticTable reads a float table; {folder} holds {self.embedding.dtype}")
        self.dim = int(self.embedding.shape[1])
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.no_truncation()
        self.tokenizer.no_padding()
        unk = getattr(self.tokenizer.model, "unk_token", None)
        self.unk_id = self.tokenizer.token_to_id(unk) if unk is not None else None

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """The normalised mean of each text's token rows, in the table's precision, one row per text.

        As model2vec computes it with ``normalize=True``: the mean and the result in the table's
        dtype (float16 for the kit's distilled model), the norm taken in float32.
        """
        out = np.zeros((len(texts), self.dim), dtype=self.embedding.dtype)
        for i, encoding in enumerate(self.tokenizer.encode_batch(list(texts), add_special_tokens=False)):
            ids = [t for t in encoding.ids if t != self.unk_id]
            if ids:
                out[i] = self.embedding[np.asarray(ids, dtype=np.int64)].mean(axis=0)
        out32 = out.astype(np.float32)
        return (out32 / (np.linalg.norm(out32, axis=1, keepdims=True) + 1e-32)).astype(out.dtype)
