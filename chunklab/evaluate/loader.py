"""One way to choose a question set: ``load_dataset("docs" | "code" | corpus folder, format=...)``."""

from __future__ import annotations

import os
from pathlib import Path

from chunklab._validate import check_choice, check_positive_int
from chunklab.datasets.model import Dataset
from chunklab.evaluate.userdata import FORMATS, load_user_dataset

__all__ = ["BUILT_IN", "load_dataset"]

#: the kit's own question sets: its documents, and docstring questions over the installed code
BUILT_IN = ("docs", "code")


def load_dataset(
    name_or_path: str | os.PathLike[str] = "docs",
    format: str = "auto",
    *,
    questions: str | os.PathLike[str] | None = None,
    split: str | None = None,
    on_error: str = "fail",
    n_files: int = 200,
    seed: int = 0,
) -> Dataset:
    """A question set by name (``"docs"``, ``"code"``) or your corpus folder with its ``questions``.

    ``"docs"`` is :func:`chunklab.datasets.corpora.docs.load_docs`; ``"code"`` is
    :func:`chunklab.datasets.questions.code.code_questions` over ``n_files`` files drawn with
    ``seed``. Any other string or a path is a corpus folder, read with ``questions`` in
    ``format`` (``auto``, ``quotes``, ``spans``, ``beir``) by
    :func:`chunklab.evaluate.userdata.load_user_dataset`; ``on_error`` is ``"fail"`` or
    ``"skip"`` (what was left out is in ``dataset.skipped``). ``split`` keeps the questions
    of one split (the built-in sets: ``dev`` or ``heldout``).
    """
    check_choice(format, FORMATS, "format")
    if isinstance(name_or_path, str) and name_or_path in BUILT_IN:
        return _built_in(name_or_path, format, questions, split, n_files, seed)
    if not isinstance(name_or_path, str | os.PathLike):
        raise ValueError(
            f"name_or_path must be one of {BUILT_IN} or a corpus folder, got {type(name_or_path).__name__}"
        )
    qpath = Path(questions) if questions is not None else None
    data = load_user_dataset(Path(name_or_path), qpath, format=format, on_error=on_error)
    return data.split(split) if split is not None else data


def _built_in(
    name: str,
    format: str,
    questions: str | os.PathLike[str] | None,
    split: str | None,
    n_files: int,
    seed: int,
) -> Dataset:
    from chunklab.datasets.corpora.docs import SPLITS

    if questions is not None:
        raise ValueError(f"questions={os.fspath(questions)!r} needs a corpus folder, not the {name!r} set")
    if format != "auto":
        raise ValueError(f"format={format!r} is for your question files; the {name!r} set has its own")
    if split is not None and split not in SPLITS:
        raise ValueError(f"split must be None or one of {SPLITS} for the {name!r} set, got {split!r}")
    if name == "docs":
        from chunklab.datasets.corpora.docs import load_docs

        return load_docs(split=split)
    from chunklab.datasets.questions.code import code_questions

    data = code_questions(n_files=check_positive_int(n_files, "n_files"), seed=seed)
    return data.split(split) if split is not None else data
