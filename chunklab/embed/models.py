"""Loading the embedding models behind :class:`chunklab.embed.Encoder`, offline, once per process.

Two models, both local: ``minilm``, the packaged all-MiniLM-L6-v2 run by sentence-transformers
(torch; CUDA in fp16 when a GPU is visible), and ``static``, a model2vec static embedding
table **distilled here** from that same MiniLM: every vocabulary token is passed through the
transformer once, the outputs are reduced with PCA and weighted (SIF), and a text's vector is
the mean of its tokens' rows. Distillation needs no download; its result is cached under
``<cache dir>/static/<source key>`` so it runs once per machine and source model.

Offline loading works by passing local directories to the loaders: nothing here sets
environment variables.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import shutil
import sys
import threading
import time
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from chunklab._validate import check_positive_int
from chunklab.paths import in_notebook_kernel
from chunklab.units import MODEL_PACKAGE, model_path

if TYPE_CHECKING:
    from model2vec import StaticModel
    from sentence_transformers import SentenceTransformer

    from chunklab.embed.numpy_minilm import NumpyMiniLM, StaticTable

__all__ = [
    "MODELS",
    "STATIC_PCA_DIMS",
    "load_minilm",
    "load_minilm_numpy",
    "load_static",
    "load_static_table",
    "resolve_device",
    "set_torch_threads",
    "static_model_dir",
    "torch_threads_for_workers",
]

#: the models an Encoder can run
MODELS = ("minilm", "static")
#: dimensions the static model keeps after PCA (model2vec's default)
STATIC_PCA_DIMS = 256

#: the loaded models, one per (folder, device) for MiniLM and one per distilled folder for the static model
_MINILM: dict[tuple[str, str], SentenceTransformer] = {}
_STATIC: dict[str, StaticModel] = {}
_NUMPY: dict[int, NumpyMiniLM] = {}
_TABLES: dict[str, StaticTable] = {}
_MODELS_LOCK = threading.Lock()


def resolve_device(device: str) -> str:
    """``"auto"`` becomes ``"cuda"`` when torch sees a GPU, else ``"cpu"``; explicit devices pass through."""
    if not isinstance(device, str) or not device:
        raise ValueError(f"device must be 'auto', 'cpu', 'cuda' or 'cuda:N', got {device!r}")
    if device == "auto":
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    if (
        device == "cpu"
        or device == "mps"
        or device == "cuda"
        or (device.startswith("cuda:") and device[5:].isdigit())
    ):
        return device
    raise ValueError(f"device must be 'auto', 'cpu', 'cuda' or 'cuda:N', got {device!r}")


def torch_threads_for_workers(workers: int) -> int | None:
    """Torch threads per worker process: 1 when several workers share the CPU, else None (torch's default)."""
    check_positive_int(workers, "workers")
    return 1 if workers > 1 else None


def set_torch_threads(threads: int | None) -> None:
    """Set torch's intra-op thread count for this process (None leaves it as it is)."""
    if threads is None:
        return
    check_positive_int(threads, "threads")
    import torch

    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)


def load_minilm(path: Path | None, device: str) -> SentenceTransformer:
    """The sentence-transformers model at ``path`` (default: the packaged MiniLM) on ``device``, loaded once.

    On CUDA the weights are cast to fp16 (half the memory and about twice the speed; the
    vectors are normalized afterwards, so cosine scores barely move).
    """
    directory = path if path is not None else model_path()  # ImportError names the package
    key = (str(directory), device)
    with _MODELS_LOCK:
        if key not in _MINILM:
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError as exc:
                raise ImportError(
                    f"sentence-transformers and torch are needed for embeddings: install the pinned "
                    f"requirements (they come with `{MODEL_PACKAGE}` in requirements.txt)."
                ) from exc
            with _quiet_transformers(), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = SentenceTransformer(str(directory), device=device, local_files_only=True)
            if device.startswith("cuda"):
                model.half()
            model.eval()
            _MINILM[key] = model
        return _MINILM[key]


def load_minilm_numpy(max_seq_length: int) -> NumpyMiniLM:
    """The packaged MiniLM evaluated with NumPy (:mod:`chunklab.embed.numpy_minilm`), loaded once.

    What :class:`chunklab.embed.Encoder` embeds a few queries with before torch is loaded: the same
    weights and vectors, without importing torch, transformers or sentence-transformers.
    """
    with _MODELS_LOCK:
        if max_seq_length not in _NUMPY:
            from chunklab.embed.numpy_minilm import NumpyMiniLM

            _NUMPY[max_seq_length] = NumpyMiniLM(model_path(), max_seq_length)
        return _NUMPY[max_seq_length]


def static_model_dir(source: Path | None, cache_root: Path) -> Path:
    """Where the static model distilled from ``source`` (default: the packaged MiniLM) is cached.

    The folder name is keyed by the source model (the package version, or the resolved path and
    weight-file size of a custom one), model2vec's version and the PCA size, so a new source or
    a new distiller never reuses a stale table.
    """
    from importlib.metadata import version

    if source is None:
        identity = f"{MODEL_PACKAGE}=={version(MODEL_PACKAGE)}"
        slug = "all-MiniLM-L6-v2"
    else:
        resolved = Path(source).resolve()
        weights = sum(f.stat().st_size for f in resolved.glob("*.safetensors")) if resolved.is_dir() else 0
        identity = f"local:{resolved}:{weights}"
        slug = resolved.name or "model"
    identity += f"|model2vec=={version('model2vec')}|pca={STATIC_PCA_DIMS}"
    digest = hashlib.blake2b(identity.encode("utf-8"), digest_size=6).hexdigest()
    return Path(cache_root) / "static" / f"{slug}-{digest}"


def load_static(source: Path | None, cache_root: Path) -> StaticModel:
    """The model2vec ``StaticModel`` distilled from ``source``, distilled on first use and cached on disk.

    Distillation writes to a temporary folder and renames it into place, so two processes
    distilling at once both end with one complete model.
    """
    target = static_model_dir(source, cache_root)
    key = str(target)
    with _MODELS_LOCK:
        if key not in _STATIC:
            try:
                from model2vec import StaticModel
            except ImportError as exc:
                raise ImportError(
                    "the static model needs model2vec: install the pinned requirements.txt"
                ) from exc
            if not (target / "config.json").is_file():
                _distill_into(source, target)
            _STATIC[key] = _open_static(StaticModel, target)
        return _STATIC[key]


def load_static_table(source: Path | None, cache_root: Path) -> StaticTable:
    """The static model distilled from ``source`` as a bare :class:`~chunklab.embed.numpy_minilm.StaticTable`.

    Distilled on first use as for :func:`load_static`; what :class:`chunklab.embed.Encoder` embeds
    its first few texts with, so a one-shot query never imports model2vec.
    """
    target = static_model_dir(source, cache_root)
    key = str(target)
    with _MODELS_LOCK:
        if key not in _TABLES:
            from chunklab.embed.numpy_minilm import StaticTable

            if not (target / "config.json").is_file():
                _distill_into(source, target)
            _TABLES[key] = StaticTable(target)
        return _TABLES[key]


def _open_static(model_class: type[StaticModel], folder: Path) -> StaticModel:
    """The distilled model in ``folder``, built with ``StaticModel``'s constructor from its three files.

    What ``StaticModel.from_pretrained(folder, normalize=True)`` returns for a folder this module
    wrote (the same table, tokenizer, config and maximum length; the model card's name and
    language are left out), without importing ``model2vec.persistence`` and with it
    ``huggingface_hub``: a third of a second of a first query's CPU.
    """
    import json

    from model2vec.model import DEFAULT_MAX_LENGTH
    from safetensors import safe_open
    from tokenizers import Tokenizer

    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    with safe_open(str(folder / "model.safetensors"), framework="numpy") as tensors:
        names = set(tensors.keys())
        vectors = tensors.get_tensor("embeddings")
        weights = tensors.get_tensor("weights") if "weights" in names else None
        mapping = tensors.get_tensor("mapping") if "mapping" in names else None
    return model_class(
        vectors=vectors,
        tokenizer=Tokenizer.from_file(str(folder / "tokenizer.json")),
        config=config,
        normalize=True,
        weights=weights,
        token_mapping=mapping,
        max_length=config.get("max_length", DEFAULT_MAX_LENGTH),
    )


def _say(message: str) -> None:
    """A line on stderr for a command-line run; in a notebook kernel (a book page, an exercise) the
    log only, so a page never shows a machine path or a changing time."""
    if in_notebook_kernel():
        logging.getLogger("chunklab").info("%s", message)
        return
    print(message, file=sys.stderr, flush=True)


def _distill_into(source: Path | None, target: Path) -> None:
    try:
        from model2vec.distill import distill
    except ImportError as exc:
        raise ImportError(
            "distilling the static model needs model2vec, skeletoken and transformers: install the pinned "
            "requirements.txt"
        ) from exc
    directory = source if source is not None else model_path()
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.parent / f".{target.name}.{uuid.uuid4().hex[:8]}.tmp"
    # said on stderr, not only logged: the build takes minutes on a laptop CPU, and a run that
    # includes it would otherwise read as slow indexing
    _say(
        f"chunklab: building the static model from {directory} (first use only: about two minutes "
        f"on a laptop CPU, not part of indexing); it is kept in {target}"
    )
    logging.getLogger("chunklab").info(
        "distilling the static model from %s into %s (once)", directory, target
    )
    started = time.perf_counter()
    try:
        with _quiet_transformers(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = distill(str(directory), pca_dims=STATIC_PCA_DIMS, device="cpu")
        model.save_pretrained(tmp)
        _say(f"chunklab: static model built in {time.perf_counter() - started:.0f} s; later runs load it")
        try:
            tmp.rename(target)
        except OSError:  # another process finished first: keep its copy
            if not (target / "config.json").is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@contextlib.contextmanager
def _quiet_transformers() -> Iterator[None]:
    """Silence transformers' and sentence-transformers' loading bars and info logs for one load."""
    from transformers.utils import logging as hf_logging

    was_enabled = hf_logging.is_progress_bar_enabled()
    old_level = hf_logging.get_verbosity()
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    loggers = [logging.getLogger(name) for name in ("sentence_transformers", "model2vec")]
    old_levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.ERROR)
    try:
        yield
    finally:
        hf_logging.set_verbosity(old_level)
        for lg, level in zip(loggers, old_levels, strict=True):
            lg.setLevel(level)
        if was_enabled:
            hf_logging.enable_progress_bar()
