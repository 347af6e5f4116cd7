"""The test tree shows its layers: every test file in one of four folders, each test marked with it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.layers import LAYERS, layer_of

ROOT = Path(__file__).resolve().parents[2]


def test_every_test_file_lies_in_one_of_the_four_layer_folders():
    files = sorted((ROOT / "tests").rglob("test_*.py"))
    outside = [str(f.relative_to(ROOT)) for f in files if layer_of(f.relative_to(ROOT), ROOT) not in LAYERS]
    assert files and not outside, f"test files outside tests/{{{','.join(LAYERS)}}}: {outside}"
    assert {layer_of(f.relative_to(ROOT), ROOT) for f in files} == set(LAYERS)


@pytest.mark.parametrize(
    ("path", "layer"),
    [
        ("tests/unit/test_chunk.py", "unit"),
        ("tests/integration/test_store.py", "integration"),
        ("tests/notebooks/test_grading.py", "notebooks"),
        ("tests/browser/test_lab_browser.py", "browser"),
        ("tests/support/retrieval.py", "other"),
        ("tests/conftest.py", "other"),
        ("benchmarks/store_faults.py", "other"),
    ],
)
def test_a_files_layer_is_the_folder_of_tests_it_lies_in(path, layer):
    assert layer_of(path, ROOT) == layer


def test_each_test_carries_its_layer_as_a_marker(request):
    assert request.node.get_closest_marker("unit") is not None
    assert not any(request.node.get_closest_marker(other) for other in LAYERS if other != "unit")
