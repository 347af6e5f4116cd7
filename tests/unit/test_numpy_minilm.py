"""The NumPy MiniLM's own arithmetic (the model's vectors are checked against torch in tests/integration)."""

from __future__ import annotations

import math

import numpy as np

from chunklab.embed.numpy_minilm import _erf, _gelu


def test_erf_matches_math_erf_to_float32_precision():
    x = np.linspace(-7.0, 7.0, 20_001)
    assert np.abs(_erf(x) - np.array([math.erf(v) for v in x])).max() < 2e-7


def test_gelu_is_x_times_the_normal_cdf_in_float32():
    x = np.array([-3.0, -0.5, 0.0, 0.5, 3.0], dtype=np.float32)
    expected = [v * 0.5 * (1.0 + math.erf(v / math.sqrt(2.0))) for v in x.tolist()]
    assert _gelu(x).dtype == np.float32
    assert np.allclose(_gelu(x), expected, atol=1e-6)
