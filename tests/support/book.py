"""The book's table of contents and its built pages: for the checks of its sources and of its rendering."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


def toc_files() -> list[str]:
    """Every file of ``_toc.yml``, the root first, in the order of the table of contents."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]]

    def walk(node):
        if isinstance(node, dict):
            if "file" in node:
                files.append(node["file"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(toc.get("parts", []))
    return files


def built_pages() -> list[tuple[str, str]]:
    """``(toc entry, html)`` of every page of the built book (the test skips when it is not built)."""
    html_dir = ROOT / "_build" / "html"
    if not (html_dir / "intro.html").is_file():
        pytest.skip("book not built (make book)")
    pages = []
    for name in toc_files():
        page = html_dir / f"{name}.html"
        assert page.is_file(), f"{name} is in the toc but {page} was not built"
        pages.append((name, page.read_text(encoding="utf-8")))
    return pages
