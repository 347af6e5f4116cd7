"""Late chunking's windows over a long document and which window embeds each token (no model needed)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunklab.embed.late import late_owners, late_windows


@given(n=st.integers(0, 2000), window=st.integers(2, 300), data=st.data())
def test_windows_cover_every_token_and_share_at_least_the_overlap(n, window, data):
    overlap = data.draw(st.integers(0, window - 1))
    bounds = late_windows(n, window, overlap)
    if n == 0:
        assert bounds == []
        return
    assert bounds[0][0] == 0 and bounds[-1][1] == n
    assert all(0 < b - a <= window for a, b in bounds)
    for (a1, b1), (a2, b2) in zip(bounds, bounds[1:], strict=False):
        assert a1 < a2 and b1 < b2
        assert b1 - a2 >= overlap  # consecutive windows share at least `overlap` tokens
    owner = late_owners(bounds, n)
    assert all(bounds[o][0] <= i < bounds[o][1] for i, o in enumerate(owner))

    # the owner leaves the token the most context on its short side among the windows holding it
    pos = np.arange(n)
    margins = np.stack(
        [np.where((pos >= a) & (pos < b), np.minimum(pos - a, b - 1 - pos), -1) for a, b in bounds]
    )
    assert np.array_equal(margins[owner, pos], margins.max(axis=0))


def test_a_document_within_the_window_is_one_window():
    assert late_windows(254, 254, 64) == [(0, 254)]
    assert late_windows(1, 254, 64) == [(0, 1)]


def test_the_last_window_ends_at_the_last_token():
    # 254 tokens, 64 shared: windows start every 190 tokens; the last is moved back to end at 500
    assert late_windows(500, 254, 64) == [(0, 254), (190, 444), (246, 500)]


def test_shared_tokens_are_split_in_half_between_two_windows():
    bounds = late_windows(20, 12, 4)  # [0, 12) and [8, 20): tokens 8..11 are shared
    assert bounds == [(0, 12), (8, 20)]
    owner = late_owners(bounds, 20)
    assert owner.tolist() == [0] * 10 + [1] * 10  # 8, 9 stay in the first; 10, 11 go to the second


@pytest.mark.parametrize("overlap", [-1, 254, 300, 1.5, True])
def test_an_impossible_overlap_is_a_value_error_naming_it(overlap):
    with pytest.raises(ValueError, match="overlap"):
        late_windows(1000, 254, overlap)
