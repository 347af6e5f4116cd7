"""Fast checks of the book's sources (no build): toc, config, capsule rhythm, captions, includes.

The full build is `make book` (jupyter-book, warnings as errors). These tests catch the
common breakages in a second: a chapter missing from disk, a capsule section dropped, a
figure without a caption, a literalinclude that names a function chunklab no longer has, a
glued number that no cell computes. When `_build/html` exists, they also check that the
built pages load nothing from the network.
"""

from __future__ import annotations

import ast
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
CAPSULE = (
    "Overview",
    "What you will be able to do",
    "The insight",
    "Implementation",
    "Traps and common mistakes",
    "Results",
    "Exercise and checkpoint",
    "Summary",
)
FIGURE_MAKERS = re.compile(
    r"\b(new_figure|size_histogram|plot_metrics|plot_sweep|plot_cost_quality|plt\.subplots|plt\.figure)\("
)
FENCE = re.compile(r"^(`{3,}|~{3,})(.*)$")


def toc_files() -> list[str]:
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


def page_path(name: str) -> Path:
    path = ROOT / name
    return path if path.suffix else path.with_suffix(".md")


CHAPTERS = [f for f in toc_files() if f.startswith("chapters/")]


def blocks(text: str) -> list[tuple[str, str, list[str]]]:
    """Top-level fenced blocks of a MyST file: (fence info, e.g. '{code-cell} ipython3', options, body lines)."""
    out = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, info = m.group(1), m.group(2).strip()
        j = i + 1
        body = []
        while j < len(lines) and not (lines[j].startswith(fence) and lines[j].strip() == fence):
            body.append(lines[j])
            j += 1
        out.append((info, "\n".join(body), body))
        i = j + 1
    return out


def cell_options(body: list[str]) -> tuple[dict, list[str]]:
    """Options of a directive body (a `---` YAML block or `:key: value` lines) and the rest."""
    if body and body[0].strip() == "---":
        end = body.index("---", 1)
        return yaml.safe_load("\n".join(body[1:end])) or {}, body[end + 1 :]
    opts = {}
    k = 0
    while k < len(body) and body[k].startswith(":"):
        key, _, value = body[k][1:].partition(":")
        opts[key.strip()] = yaml.safe_load(value.strip()) if value.strip() else None
        k += 1
    return opts, body[k:]


def prose_lines(text: str) -> list[str]:
    """Lines outside fenced blocks and outside the front matter."""
    lines = text.splitlines()
    if lines and lines[0] == "---":
        lines = lines[lines.index("---", 1) + 1 :]
    out, fence = [], None
    for line in lines:
        m = FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)
        elif fence is not None and line.strip() == fence:
            fence = None
        elif fence is None:
            out.append(line)
    return out


def test_every_toc_entry_exists_and_is_a_notebook_with_a_title():
    for name in toc_files():
        path = page_path(name)
        assert path.is_file(), f"{name} is in _toc.yml but {path} does not exist"
        text = path.read_text(encoding="utf-8")
        if name.startswith("chapters/"):
            front = yaml.safe_load(text.split("---", 2)[1])
            assert front["kernelspec"]["name"] == "python3", f"{name}: kernelspec python3 missing"
            assert front["jupytext"]["text_representation"]["format_name"] == "myst"
        titles = [line for line in prose_lines(text) if line.startswith("# ")]
        assert len(titles) == 1, f"{name}: expected one '# Title', found {titles}"


def test_toc_has_the_four_parts_in_order():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    assert toc["root"] == "intro"
    captions = [part["caption"] for part in toc["parts"]]
    assert captions == ["The strategies", "Measuring and choosing", "Exercises"]
    numbers = [c["file"].split("/")[-1][:2] for c in toc["parts"][0]["chapters"] + toc["parts"][1]["chapters"]]
    assert numbers == ["01", "02", "03", "04", "05", "06"]


@pytest.mark.parametrize("name", CHAPTERS)
def test_chapter_follows_the_capsule_rhythm(name):
    heads = [line[3:].strip() for line in prose_lines(page_path(name).read_text(encoding="utf-8"))
             if line.startswith("## ")]
    matched = []
    for want in CAPSULE:
        found = [h for h in heads if h.startswith(want)]
        assert found, f"{name}: no '## {want}' section (found {heads})"
        matched.append(heads.index(found[0]))
    assert matched == sorted(matched), f"{name}: capsule sections out of order: {heads}"


@pytest.mark.parametrize("name", CHAPTERS)
def test_exercise_section_points_to_the_chapters_notebook(name):
    text = page_path(name).read_text(encoding="utf-8")
    if "Placeholder" in text:
        pytest.skip("placeholder chapter")
    stem = Path(name).stem
    assert f"exercises/{stem}.ipynb" in text, f"{name} must point to exercises/{stem}.ipynb"


@pytest.mark.parametrize("name", ["intro", *CHAPTERS])
def test_every_figure_has_a_name_and_a_caption(name):
    text = page_path(name).read_text(encoding="utf-8")
    names = []
    for info, _, body in blocks(text):
        if info.startswith("{code-cell}"):
            opts, code = cell_options(body)
            figure = (opts.get("mystnb") or {}).get("figure")
            tags = opts.get("tags") or []
            if figure is not None:
                assert str(figure.get("caption", "")).strip(), f"{name}: a figure cell has no caption"
                assert figure.get("name"), f"{name}: a figure cell has no name"
                names.append(figure["name"])
            elif FIGURE_MAKERS.search("\n".join(code)) and not {"remove-cell", "remove-output"} & set(tags):
                pytest.fail(f"{name}: a cell draws a figure without mystnb.figure caption:\n" + "\n".join(code[:5]))
        elif info.startswith("{figure}"):
            opts, rest = cell_options(body)
            assert "\n".join(rest).strip(), f"{name}: a {{figure}} directive has no caption"
            assert opts.get("name"), f"{name}: a {{figure}} directive has no :name:"
            names.append(opts["name"])
    assert len(names) == len(set(names)), f"{name}: duplicate figure names {names}"


@pytest.mark.parametrize("name", CHAPTERS)
def test_chapter_shows_at_least_one_computed_figure_or_table(name):
    text = page_path(name).read_text(encoding="utf-8")
    if "Placeholder" in text:
        pytest.skip("placeholder chapter")
    computed = [
        info for info, _, body in blocks(text)
        if info.startswith("{code-cell}") and (cell_options(body)[0].get("mystnb") or {}).get("figure")
    ]
    assert computed, f"{name}: no captioned computed figure or table"


@pytest.mark.parametrize("name", ["intro", *CHAPTERS])
def test_literalincludes_name_code_that_exists(name):
    page = page_path(name)
    for info, _, body in blocks(page.read_text(encoding="utf-8")):
        if not info.startswith("{literalinclude}"):
            continue
        target = (page.parent / info.split(None, 1)[1].strip()).resolve()
        assert target.is_file(), f"{name}: literalinclude of missing file {target}"
        opts, _ = cell_options(body)
        assert "lines" not in opts, f"{name}: use :pyobject: or markers, never :lines: (they drift)"
        if opts.get("pyobject"):
            tree = ast.parse(target.read_text(encoding="utf-8"))
            defined = set()
            for node in tree.body:
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    defined.add(node.name)
                    if isinstance(node, ast.ClassDef):
                        defined.update(
                            f"{node.name}.{m.name}" for m in node.body
                            if isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef)
                        )
            assert opts["pyobject"] in defined, f"{name}: {target.name} has no {opts['pyobject']}"
        for key in ("start-at", "start-after", "end-before", "end-at"):
            if opts.get(key):
                assert str(opts[key]) in target.read_text(encoding="utf-8"), f"{name}: {key} marker not found"


@pytest.mark.parametrize("name", ["intro", "exercises", *CHAPTERS])
def test_every_glued_value_is_computed_in_the_page(name):
    text = page_path(name).read_text(encoding="utf-8")
    used = set(re.findall(r"\{glue(?::text|:any|:md|:figure)?\}`([^`]+)`", text))
    used |= set(re.findall(r"```\{glue(?::figure|:math)?\}\s+(\S+)", text))
    glued = set(re.findall(r"glue\(\s*(?:f?)[\"']([^\"'{]+)[\"']", text))
    dynamic = re.findall(r"glue\(\s*f[\"']([^\"'{]*)\{", text)
    missing = {k for k in used - glued if not any(k.startswith(p) for p in dynamic)}
    assert not missing, f"{name}: glue keys used but never glued: {sorted(missing)}"


def test_config_builds_offline_executes_with_cache_and_skips_exercises_and_solutions():
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    assert config["title"] == "ChunkLab: chunking for retrieval-augmented generation"
    assert config["author"] == "The ChunkLab team"
    assert config["execute"]["execute_notebooks"] == "cache"
    assert config["execute"]["timeout"] >= 300
    excluded = " ".join(config["exclude_patterns"])
    for path in ("solutions", "exercises", ".venv", "_build", "chunklab", "README.md", "chapters/CONVENTIONS.md"):
        assert path in excluded, f"{path} must be excluded from the build"
    assert "sphinx_exercise" in config["sphinx"]["extra_extensions"]
    extensions = config["parse"]["myst_enable_extensions"]
    assert "dollarmath" not in extensions and "amsmath" not in extensions, "math would load MathJax from a CDN"
    launch = config["launch_buttons"]
    assert launch["binderhub_url"] and launch["colab_url"] and launch["jupyterhub_url"]
    assert launch.get("thebe") is False
    assert config["repository"]["url"].startswith("https://github.com/")


def test_no_page_uses_math_that_would_need_mathjax():
    for name in ["intro", "exercises", *CHAPTERS]:
        lines = prose_lines(page_path(name).read_text(encoding="utf-8"))
        text = "\n".join(lines)
        assert "{math}" not in text and "```{math}" not in text, f"{name}: math needs MathJax from a CDN"


class _Resources(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in ("script", "img", "iframe", "audio", "video", "source") and attrs.get("src"):
            self.urls.append(attrs["src"])
        if tag == "link" and attrs.get("href") and (attrs.get("rel") or "") in ("stylesheet", "preload", "icon"):
            self.urls.append(attrs["href"])


def test_built_pages_load_nothing_from_the_network():
    html_dir = ROOT / "_build" / "html"
    if not (html_dir / "intro.html").is_file():
        pytest.skip("book not built (make book)")
    for name in ["intro", "exercises", *CHAPTERS]:
        page = html_dir / f"{name}.html"
        if not page.is_file():
            continue
        parser = _Resources()
        parser.feed(page.read_text(encoding="utf-8"))
        external = [u for u in parser.urls if re.match(r"(https?:)?//", u)]
        assert not external, f"{name}.html loads external resources: {external}"
