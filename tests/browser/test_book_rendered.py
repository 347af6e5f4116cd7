"""The built book rendered in headless Chromium: pages and listings fit the window, no console errors.

The built pages come from ``make book`` (``_build/html``); without them, or without Chromium, the
tests skip. The checks of the sources and of the built HTML as text are tests/notebooks/test_book.py.
"""

from __future__ import annotations

import shutil

import pytest

from scripts.screenshots import console_errors, overflow_report
from tests.support.book import ROOT, built_pages


def _chromium() -> str:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if not browser:
        pytest.skip("chromium not installed")
    return browser


@pytest.mark.parametrize("width", [1280, 400])
def test_rendered_listings_tables_and_pages_fit_the_window(width):
    """Measured in headless Chromium: at 1280 px no listing scrolls sideways (88 columns fit); at any
    width no page is wider than the window, and every table fits the column or scrolls inside its
    own box with its caption in the column."""
    browser = _chromium()
    pages = built_pages()

    problems = {}
    for name, _ in pages:
        report = overflow_report(browser, ROOT / "_build" / "html" / f"{name}.html", width)
        assert report is not None, f"{name}: could not render"
        wide = {k: v for k, v in report.items() if v and (k != "pre" or width >= 1280)}
        if wide:
            problems[name] = wide
    assert not problems, f"too wide at {width} px: {problems}"


def test_built_pages_log_no_console_errors():
    browser = _chromium()
    pages = built_pages()

    errors = {}
    for name, _ in pages:
        found = console_errors(browser, ROOT / "_build" / "html" / f"{name}.html")
        assert found is not None, f"{name}: could not render"
        if found:
            errors[name] = found
    assert not errors, f"console errors: {errors}"
