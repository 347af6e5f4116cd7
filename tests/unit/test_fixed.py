"""Fixed-size windows: sizes, steps and overlap by example (the contract: test_chunk_contract.py)."""

from __future__ import annotations

import pytest

from chunklab.chunk import check_chunks
from chunklab.chunkers.fixed import chunk_fixed, sliding_window
from chunklab.units import count_tokens, length_function


def test_char_windows_have_the_requested_size_and_step():
    text = "abcdefghij"
    chunks = chunk_fixed(text, 4, overlap=1)
    assert [c.text for c in chunks] == ["abcd", "defg", "ghij"]
    assert [(c.start, c.end) for c in chunks] == [(0, 4), (3, 7), (6, 10)]


def test_overlap_repeats_tail_of_previous_chunk():
    text = " ".join(f"w{i}" for i in range(20))
    chunks = chunk_fixed(text, 5, overlap=2, unit="words")
    for a, b in zip(chunks, chunks[1:]):
        assert a.text.split()[-2:] == b.text.split()[:2]


def test_token_windows_measure_with_the_model_tokenizer():
    text = "Tokenization splits unbelievably long words into word pieces. " * 20
    chunks = chunk_fixed(text, 32, overlap=8, unit="tokens")
    assert all(count_tokens(c.text) <= 32 for c in chunks)
    assert max(count_tokens(c.text) for c in chunks) >= 28  # windows are filled, not tiny
    assert all(text[c.start : c.end] == c.text for c in chunks)


def test_sliding_window_is_fixed_with_overlap_window_minus_stride():
    text = "x" * 100
    chunks = sliding_window(text, window=30, stride=10)
    assert [c.start for c in chunks] == list(range(0, 71, 10))
    assert all(c.metadata["strategy"] == "sliding" for c in chunks)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"size": 0}, "size"),
        ({"size": -3}, "size"),
        ({"size": 10, "overlap": 10}, "overlap"),
        ({"size": 10, "overlap": -1}, "overlap"),
        ({"size": 10, "unit": "lines"}, "unit"),
        ({"size": "10"}, "size"),
    ],
)
def test_impossible_parameters_raise_value_error_naming_the_parameter(kwargs, name):
    with pytest.raises(ValueError, match=name):
        chunk_fixed("some text", **kwargs)


def test_wrong_text_type_raises_value_error():
    with pytest.raises(ValueError, match="text"):
        chunk_fixed(123, 10)  # type: ignore[arg-type]


def test_sliding_window_rejects_a_stride_that_skips_text():
    with pytest.raises(ValueError, match="stride"):
        sliding_window("abc", window=2, stride=3)


def test_length_function_rejects_unknown_unit():
    with pytest.raises(ValueError, match="unit"):
        length_function("bytes")


@pytest.fixture(scope="module")
def word_tokenizer(tmp_path_factory):
    """A tokenizer.json where every word and every punctuation mark is one token."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    tok = Tokenizer(models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    path = tmp_path_factory.mktemp("tok") / "tokenizer.json"
    tok.save(str(path))
    return f"tokenizer:{path}"


def test_a_tokenizer_file_is_a_unit_for_counting_and_for_windows(word_tokenizer):
    import re

    from chunklab.chunkers.recursive import chunk_recursive
    from chunklab.units import check_unit, is_token_unit

    text = "Alpha beta, gamma delta. Epsilon zeta eta theta iota kappa lambda mu."
    pieces = re.findall(r"\w+|[^\w\s]+", text)  # what the Whitespace pre-tokenizer yields
    assert check_unit(word_tokenizer) == word_tokenizer and is_token_unit(word_tokenizer)
    assert count_tokens(text, word_tokenizer) == len(pieces) == length_function(word_tokenizer)(text)
    for chunks in (
        chunk_fixed(text, 5, 1, unit=word_tokenizer),
        chunk_recursive(text, 5, unit=word_tokenizer),
    ):
        assert check_chunks(chunks, text, max_size=5, length=length_function(word_tokenizer)) == []
        assert all(c.metadata["params"]["unit"] == word_tokenizer for c in chunks)
    assert len(chunk_fixed(text, 5, unit=word_tokenizer)) == -(-len(pieces) // 5)


def test_a_missing_tokenizer_file_is_a_value_error_naming_the_unit(tmp_path):
    with pytest.raises(ValueError, match="no tokenizer file"):
        chunk_fixed("some text", 5, unit=f"tokenizer:{tmp_path / 'missing.json'}")
    with pytest.raises(ValueError, match="unit"):
        length_function("tokenizer:")
