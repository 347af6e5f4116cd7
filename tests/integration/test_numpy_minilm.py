"""The NumPy MiniLM that embeds a first query (issue 41, item 5): the torch model's vectors, no torch.

Times are measured in ``benchmarks/first_query.py``, never here: these tests pin what the fast
path computes (the same vectors and search results as sentence-transformers) and what it
spares a one-shot query (importing torch).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from chunklab.chunk import Chunk
from chunklab.embed import Encoder
from chunklab.embed.encoder import NUMPY_QUERY_MAX
from chunklab.embed.models import load_minilm_numpy
from chunklab.embed.numpy_minilm import NumpyMiniLM
from chunklab.retrieval.chroma.store import ChunkStore
from chunklab.units import model_path

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]

#: queries that stress tokenisation and the window: empty, blanks, accents, CJK, emoji, control
#: characters, special-token text, code, a run past the 256-token window, an unknown-only word
NASTY = [
    "how do I parse a date string",
    "",
    "   padded on both sides \t\n",
    "\t\n",
    "ÉCOLE naïve café Ünïcödé ﬁ ligature",
    "東京の天気 和 中文 한국어",
    "🙂🚀 emoji only 🙂",
    "zero\u200bwidth and a NUL\x00 byte",
    "[CLS] [SEP] [PAD] [MASK] [UNK]",
    "def parse(path):\n    return open(path).read()  # comment",
    "a",
    "word " * 400,
    "x" * 700,
]


@pytest.fixture(scope="module")
def torch_encoder(tmp_path_factory) -> Encoder:
    return Encoder(device="cpu", cache_dir=False, numpy_queries=False)


def test_numpy_minilm_vectors_equal_the_torch_models_on_nasty_queries(torch_encoder):
    fast = load_minilm_numpy(256).encode(NASTY)
    slow = torch_encoder.encode(NASTY)
    assert fast.dtype == np.float32 and fast.shape == slow.shape == (len(NASTY), 384)
    cosines = np.sum(fast * slow, axis=1) / np.linalg.norm(fast, axis=1) / np.linalg.norm(slow, axis=1)
    assert cosines.min() >= 0.9999, dict(zip(NASTY, cosines.round(6), strict=True))


def test_the_first_few_texts_go_through_numpy_and_then_torch_loads(tmp_path):
    enc = Encoder(device="cpu", cache_dir=tmp_path)
    enc.encode(["parse a date string"] * 3)
    assert enc._model is None and enc.model_calls == 1  # the NumPy model embedded it; torch not loaded
    assert not enc._numpy_embeds(NUMPY_QUERY_MAX)  # a bulk run never stays on the per-text path
    enc.encode([f"text {i}" for i in range(NUMPY_QUERY_MAX)])
    assert enc._model is not None  # torch loaded, and embeds every later call
    assert not enc._numpy_embeds(1)
    assert not Encoder(device="cpu", cache_dir=False)._numpy_embeds(NUMPY_QUERY_MAX + 1)
    assert not Encoder(device="cpu", cache_dir=False, numpy_queries=False)._numpy_embeds(1)
    assert not Encoder(device="cuda", cache_dir=False)._numpy_embeds(1)  # an explicit GPU keeps torch


def test_search_results_are_identical_with_either_model(torch_encoder):
    words = "parse read write date string archive zip shell quote email thread lock gzip config".split()
    texts = [f"{words[i % len(words)]} the {words[(i * 7) % len(words)]} of item {i}" for i in range(60)]
    chunks = [Chunk(text=t, doc_id=f"doc{i}.txt", start=0, end=len(t)) for i, t in enumerate(texts)]
    queries = ["how to parse a date", "zip archive", "lock a thread", "quote shell arguments", "mail"]
    fast = Encoder(device="cpu", cache_dir=False)
    with ChunkStore(in_memory=True, encoder=torch_encoder) as store:
        store.add(chunks, show_progress=False)
        for query in queries:
            slow_hits = store.search_vectors(torch_encoder.encode([query]), k=10)[0]
            fast_hits = store.search_vectors(fast.encode([query]), k=10)[0]
            assert [c.id for c, _ in fast_hits] == [c.id for c, _ in slow_hits]
            assert np.allclose([s for _, s in fast_hits], [s for _, s in slow_hits], atol=1e-5)
    assert fast._model is None


def test_a_config_it_cannot_evaluate_is_refused(tmp_path):
    import shutil

    for name in ("config.json", "tokenizer.json"):
        shutil.copy(model_path() / name, tmp_path / name)
    config = json.loads((tmp_path / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps({**config, "hidden_act": "relu"}))
    with pytest.raises(ValueError, match="hidden_act='gelu'.*'relu'"):
        NumpyMiniLM(tmp_path)


def test_a_cold_search_on_a_minilm_store_imports_no_torch(tmp_path, torch_encoder):
    store_dir = tmp_path / "store"
    texts = ["open a temporary file", "read a zip archive", "decode base64 data", "walk a directory tree"]
    chunks = [Chunk(text=t, doc_id=f"d{i}.txt", start=0, end=len(t)) for i, t in enumerate(texts)]
    with ChunkStore(path=store_dir, encoder=torch_encoder) as store:
        store.add(chunks, show_progress=False)
        expected = [c.doc_id for c, _ in store.search("unzip an archive", k=4)]
    code = (
        "import contextlib, io, json, sys\nfrom chunklab.cli import main\nout = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        f"    main(['search', {str(store_dir)!r}, 'unzip an archive', '--k', '4', '--json'])\n"
        "heavy = [m for m in ('torch', 'transformers', 'sentence_transformers') if m in sys.modules]\n"
        "print(json.dumps({'hits': out.getvalue(), 'heavy': heavy}))\n"
    )
    env = {**os.environ, "CHUNKLAB_CACHE": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["heavy"] == []
    assert [json.loads(line)["doc_id"] for line in result["hits"].splitlines()] == expected
