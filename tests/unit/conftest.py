"""Fixtures shared by the unit tests."""

from __future__ import annotations

import pytest

from tests.support.trained_tokenizers import train_tokenizer


@pytest.fixture(scope="session")
def trained(tmp_path_factory) -> dict[str, str]:
    """Unit names of the two trained tokenizers: ``{"bpe": "tokenizer:…", "bytelevel": "tokenizer:…"}``."""
    tmp = tmp_path_factory.mktemp("tokenizers")
    return {kind: train_tokenizer(tmp, kind) for kind in ("bpe", "bytelevel")}
