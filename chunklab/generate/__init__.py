"""A local generative model, greedy and offline, with an on-disk cache of prompts -> outputs.

``get_generator()`` gives the process's shared :class:`Generator` for the packaged
SmolLM2-135M-Instruct (loaded once, on first use); ``get_generator("replay:PATH")`` a
:class:`ReplayGenerator` answering from a recording of real outputs (tests, exercises).
``model`` holds the model and its loading, ``cache`` the generation cache, ``replay`` the recordings.
"""

from __future__ import annotations

import threading
from pathlib import Path

from chunklab._validate import check_positive_int
from chunklab.generate.cache import GenerationCache, generation_key
from chunklab.generate.model import DEFAULT_GENERATOR, MODELS, Generator, ModelFile, cut_at_stop, model_file
from chunklab.generate.replay import RECORDING, REPLAY_PREFIX, ReplayGenerator, record_generations
from chunklab.paths import cache_dir as resolve_cache_dir
from chunklab.protocols import GeneratorLike

__all__ = [
    "DEFAULT_GENERATOR",
    "MODELS",
    "RECORDING",
    "REPLAY_PREFIX",
    "GenerationCache",
    "Generator",
    "ModelFile",
    "ReplayGenerator",
    "cut_at_stop",
    "generation_key",
    "get_generator",
    "model_file",
    "record_generations",
    "resolve_generator",
]


def get_generator(
    model: str = DEFAULT_GENERATOR, *, cache_dir: str | Path | None | bool = None, threads: int = 1
) -> Generator | ReplayGenerator:
    """The process's shared generator for ``model`` and these options (one per distinct options).

    ``model`` is a name in :data:`MODELS` or ``"replay:PATH"`` (a recording); ``cache_dir``
    (resolved now, so ``$CHUNKLAB_CACHE`` is read at the call; ``False``: no cache) and
    ``threads`` are as for :class:`Generator`. The model itself is loaded once per process.
    """
    if not isinstance(model, str):
        raise ValueError(f"model must be a model name or 'replay:PATH', got {model!r}")
    check_positive_int(threads, "threads")
    if model.startswith(REPLAY_PREFIX):
        key: tuple[object, ...] = (model,)
    elif model not in MODELS:
        raise ValueError(f"model must be one of {', '.join(MODELS)} or 'replay:PATH'; got {model!r}")
    else:
        if cache_dir is True:  # True is the default folder, as for Generator
            cache_dir = None
        key = (model, False if cache_dir is False else str(resolve_cache_dir(cache_dir)), threads)
    with _LOCK:
        if key not in _GENERATORS:
            _GENERATORS[key] = _make(model, key[1] if len(key) > 1 else False, threads)
        return _GENERATORS[key]


def resolve_generator(generator: GeneratorLike | None, model: str = DEFAULT_GENERATOR) -> GeneratorLike:
    """``generator`` when given (with ``name`` and ``generate``), else :func:`get_generator` of ``model``."""
    if generator is not None:
        if not isinstance(generator, GeneratorLike):
            raise ValueError(
                f"generator must have name and generate(prompts), got {type(generator).__name__}"
            )
        return generator
    return get_generator(model)


def _make(model: str, folder: object, threads: int) -> Generator | ReplayGenerator:
    if model.startswith(REPLAY_PREFIX):
        return ReplayGenerator.from_file(model[len(REPLAY_PREFIX) :])
    return Generator(model, cache_dir=False if folder is False else Path(str(folder)), threads=threads)


_LOCK = threading.Lock()
_GENERATORS: dict[tuple[object, ...], Generator | ReplayGenerator] = {}
