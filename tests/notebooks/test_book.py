"""Fast checks of the book's sources (no build): toc, config, capsule rhythm, captions, includes.

The full build is `make book` (jupyter-book, warnings as errors). These tests catch the
common breakages in a second: a chapter missing from disk, a capsule section dropped, a
figure without a caption, a literalinclude that names a function chunklab no longer has, a
glued number that no cell computes. When `_build/html` exists, they also check that the
built pages load nothing from the network.
"""

from __future__ import annotations

import ast
import os
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from tests.support.book import built_pages, toc_files

ROOT = Path(__file__).resolve().parents[2]
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


def page_path(name: str) -> Path:
    path = ROOT / name
    return path if path.suffix else path.with_suffix(".md")


#: the course's capsule chapters (chapters/NN-name); other pages under chapters/ are plain pages
CHAPTERS = [f for f in toc_files() if re.match(r"chapters/\d\d-", f)]
#: plain pages under chapters/ (no capsule, no exercise), e.g. your-documents, scaling-out
PAGES = [f for f in toc_files() if f.startswith("chapters/") and f not in CHAPTERS]


def blocks(text: str) -> list[tuple[str, str, list[str]]]:
    """Top-level fenced blocks of a MyST file: (fence info such as '{code-cell} ipython3', options, body)."""
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
    assert captions[:2] == ["The strategies", "Measuring and choosing"]
    assert captions[-2:] == ["Exercises", "Reference"]
    reference = [c["file"] for c in toc["parts"][-1]["chapters"]]
    assert reference == ["run-locally", "glossary", "references"]
    numbered = [c["file"] for part in toc["parts"] if part.get("numbered") for c in part["chapters"]]
    numbers = [f.split("/")[-1][:2] for f in numbered]
    assert numbers == [f"{i:02d}" for i in range(1, len(numbers) + 1)] and len(numbers) >= 6, numbers


@pytest.mark.parametrize("name", CHAPTERS)
def test_chapter_follows_the_capsule_rhythm(name):
    heads = [
        line[3:].strip()
        for line in prose_lines(page_path(name).read_text(encoding="utf-8"))
        if line.startswith("## ")
    ]
    matched = []
    for want in CAPSULE:
        found = [h for h in heads if h.startswith(want)]
        assert found, f"{name}: no '## {want}' section (found {heads})"
        matched.append(heads.index(found[0]))
    assert matched == sorted(matched), f"{name}: capsule sections out of order: {heads}"


def exercise_of(name: str) -> str:
    """A chapter's exercise notebook: its own name, else the one exercises.md's CHAPTER_OF gives it."""
    text = (ROOT / "exercises.md").read_text(encoding="utf-8")
    listed = re.findall(r'"([^"]+)"', re.search(r"^EXERCISES = \[(.*?)\]", text, re.S | re.M).group(1))
    chapter_of = ast.literal_eval(re.search(r"^CHAPTER_OF = (\{.*?\})$", text, re.M).group(1))
    stem = Path(name).stem
    if stem in listed:
        return stem
    return next((notebook for notebook, chapter in chapter_of.items() if chapter == stem), stem)


@pytest.mark.parametrize("name", CHAPTERS)
def test_exercise_section_points_to_the_chapters_notebook(name):
    text = page_path(name).read_text(encoding="utf-8")
    if "Placeholder" in text:
        pytest.skip("placeholder chapter")
    notebook = exercise_of(name)
    assert f"exercises/{notebook}.ipynb" in text, f"{name} must point to exercises/{notebook}.ipynb"


@pytest.mark.parametrize("name", ["intro", *CHAPTERS, *PAGES])
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
                pytest.fail(
                    f"{name}: a cell draws a figure without mystnb.figure caption:\n" + "\n".join(code[:5])
                )
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
        info
        for info, _, body in blocks(text)
        if info.startswith("{code-cell}") and (cell_options(body)[0].get("mystnb") or {}).get("figure")
    ]
    assert computed, f"{name}: no captioned computed figure or table"


@pytest.mark.parametrize("name", ["intro", *CHAPTERS, *PAGES])
def test_literalincludes_name_code_that_exists(name):
    page = page_path(name)
    for info, _, body in blocks(page.read_text(encoding="utf-8")):
        if not info.startswith("{literalinclude}"):
            continue
        target = (page.parent / info.split(None, 1)[1].strip()).resolve()
        assert target.is_file(), f"{name}: literalinclude of missing file {target}"
        opts, _ = cell_options(body)
        assert "lines" not in opts, f"{name}: use :pyobject: or markers, never :lines: (they drift)"
        # the caption is parsed as MyST: an unescaped `__init__.py` would read "**init**.py"
        caption = str(opts.get("caption", ""))
        assert not re.search(r"(?<!\\)__", caption), f"{name}: escape the underscores of {caption!r}"
        if opts.get("pyobject"):
            tree = ast.parse(target.read_text(encoding="utf-8"))
            defined = set()
            for node in tree.body:
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    defined.add(node.name)
                    if isinstance(node, ast.ClassDef):
                        defined.update(
                            f"{node.name}.{m.name}"
                            for m in node.body
                            if isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef)
                        )
            assert opts["pyobject"] in defined, f"{name}: {target.name} has no {opts['pyobject']}"
        for key in ("start-at", "start-after", "end-before", "end-at"):
            if opts.get(key):
                assert str(opts[key]) in target.read_text(encoding="utf-8"), f"{name}: {key} marker not found"


@pytest.mark.parametrize("name", ["intro", "exercises", *CHAPTERS, *PAGES])
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
    for path in (
        "solutions",
        "exercises",
        ".venv",
        "_build",
        "chunklab",
        "README.md",
        "chapters/CONVENTIONS.md",
    ):
        assert path in excluded, f"{path} must be excluded from the build"
    assert "sphinx_exercise" in config["sphinx"]["extra_extensions"]
    extensions = config["parse"]["myst_enable_extensions"]
    assert "dollarmath" not in extensions and "amsmath" not in extensions, (
        "math would load MathJax from a CDN"
    )
    assert "chunklab_book" in config["sphinx"]["local_extensions"], "tables-as-tables extension missing"
    launch = config["launch_buttons"]
    assert launch.get("thebe") is False
    assert "jupyterhub_url" not in launch, "no JupyterHub exists for this kit: no placeholder hub"
    url = config["repository"]["url"]
    assert url == "" or re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", url), url
    assert config["html"]["use_repository_button"] is False, "the extension turns it on when a URL is set"


def test_launch_links_follow_the_repository_setting():
    """One setting decides: with no repository URL there are no launch or repository buttons."""
    from _ext import chunklab_book

    class Config:
        html_theme_options = {
            "launch_buttons": {"colab_url": "https://colab.research.google.com"},
            "repository_url": "",
        }

    config = Config()
    chunklab_book._config_inited(None, config)
    assert "launch_buttons" not in config.html_theme_options
    assert config.html_theme_options["use_repository_button"] is False
    assert config.html_theme_options["navbar_persistent"] == []
    config.html_theme_options = {
        "launch_buttons": {"colab_url": "x", "binderhub_url": "y"},
        "repository_url": "https://github.com/a/b",
    }
    chunklab_book._config_inited(None, config)
    assert config.html_theme_options["launch_buttons"] == {"binderhub_url": "y"}, "Colab cannot open .md"
    assert config.html_theme_options["use_repository_button"] is True


@pytest.mark.parametrize("name", CHAPTERS)
def test_chapter_starts_with_time_prerequisites_and_links_to_glossary_and_references(name):
    text = page_path(name).read_text(encoding="utf-8")
    heads = [info for info, _, _ in blocks(text)]
    assert heads and any(h.startswith("{admonition} Before you start") for h in heads[:2]), (
        f"{name}: the first block must be the 'Before you start' admonition"
    )
    before = next(body for info, body, _ in blocks(text) if info.startswith("{admonition} Before you start"))
    assert "**Time:**" in before and "**You need:**" in before, f"{name}: time and prerequisites"
    assert "../glossary.md" in before and "../references.md" in before, f"{name}: glossary and references"
    assert "{term}`" in before, f"{name}: link at least one glossary term"


@pytest.mark.parametrize("name", CHAPTERS)
def test_every_chapter_has_a_numbered_exercise_box(name):
    text = page_path(name).read_text(encoding="utf-8")
    section = text[text.index("## Exercise and checkpoint") : text.index("## Summary")]
    exercises = [(info, body) for info, body, _ in blocks(section) if info.startswith("{exercise}")]
    assert len(exercises) == 1, f"{name}: the exercise section needs one {{exercise}} box"
    info, body = exercises[0]
    assert info.split(None, 1)[1:], f"{name}: the exercise box needs a title"
    assert re.search(r"^:label: ex-[a-z-]+$", body, re.M), f"{name}: the exercise box needs a :label:"
    assert f"exercises/{exercise_of(name)}.ipynb" in body


def test_the_exercises_page_lists_every_solution_notebook_in_order_each_with_a_page_of_the_book():
    text = (ROOT / "exercises.md").read_text(encoding="utf-8")
    listed = re.findall(r'"([^"]+)"', re.search(r"^EXERCISES = \[(.*?)\]", text, re.S | re.M).group(1))
    assert listed == sorted(p.stem for p in (ROOT / "solutions").glob("*.ipynb"))
    chapter_of = ast.literal_eval(re.search(r"^CHAPTER_OF = (\{.*?\})$", text, re.M).group(1))
    pages = set(toc_files())
    assert [n for n in listed if f"chapters/{chapter_of.get(n, n)}" not in pages] == []


def test_the_documents_page_ends_with_an_exercise_box_naming_its_notebook():
    text = page_path("chapters/03b-documents").read_text(encoding="utf-8")
    boxes = [
        body for info, body, _ in blocks(text[text.index("## Exercise") :]) if info.startswith("{exercise}")
    ]
    assert len(boxes) == 1, "chapters/03b-documents: one {exercise} box in its Exercise section"
    assert re.search(r"^:label: ex-[a-z-]+$", boxes[0], re.M)
    assert "exercises/03b-documents.ipynb" in boxes[0]


def test_glossary_defines_the_terms_the_issue_lists_and_references_cite_the_sources():
    glossary = (ROOT / "glossary.md").read_text(encoding="utf-8")
    terms = [line for line in glossary.splitlines() if line and not line.startswith((" ", "`", "#"))]
    for term in (
        "chunk",
        "overlap",
        "recall@k",
        "MRR",
        "nDCG",
        "span recall",
        "IoU",
        "precision Ω",
        "win share",
        "fallback",
    ):
        assert term in terms, f"glossary: no entry {term!r}"
    references = (ROOT / "references.md").read_text(encoding="utf-8")
    for needle in (
        "2307.03172",
        "5_Levels_Of_Text_Splitting",
        "python.langchain.com",
        "docs.llamaindex.ai",
        "1909.09436",
        "research.trychroma.com",
        "10.1214/aos/1176344552",
        "contextual-retrieval",
    ):
        assert needle in references, f"references: {needle} missing"
    used = set()
    for name in ["intro", *CHAPTERS]:
        used |= set(re.findall(r"\]\((ref-[a-z0-9]+)\)", page_path(name).read_text(encoding="utf-8")))
    labels = set(re.findall(r"^\((ref-[a-z0-9]+)\)=$", references, re.M))
    assert used <= labels, f"chapters cite unknown references: {used - labels}"


#: visible code is read in a column of about 88 characters; the package is formatted at 110 (a few
#: lines run to 120)
#: and its listings wrap (CSS in _static/chunklab.css)
VISIBLE_CODE_WIDTH = 88
PACKAGE_WIDTH = 120


@pytest.mark.parametrize("name", ["intro", *CHAPTERS, *PAGES])
def test_no_visible_code_line_is_wider_than_the_column(name):
    text = page_path(name).read_text(encoding="utf-8")
    for info, _, body in blocks(text):
        if info.startswith("{code-cell}"):
            opts, code = cell_options(body)
            if {"remove-cell", "remove-input"} & set(opts.get("tags") or []):
                continue
            wide = [line for line in code if len(line) > VISIBLE_CODE_WIDTH]
            assert not wide, f"{name}: visible code wider than {VISIBLE_CODE_WIDTH} columns: {wide[:2]}"
        elif info.startswith("{literalinclude}"):
            opts, _ = cell_options(body)
            target = (page_path(name).parent / info.split(None, 1)[1].strip()).resolve()
            wide = [line for line in _included_lines(target, opts) if len(line) > PACKAGE_WIDTH]
            assert not wide, f"{name}: {target.name} has lines wider than {PACKAGE_WIDTH}: {wide[:1]}"


def _included_lines(target: Path, opts: dict) -> list[str]:
    """The lines a literalinclude shows: the :pyobject:'s source, or the text between markers."""
    source = target.read_text(encoding="utf-8")
    lines = source.splitlines()
    if opts.get("pyobject"):
        path = str(opts["pyobject"]).split(".")
        nodes = ast.parse(source).body
        node = None
        for part in path:
            node = next(n for n in nodes if getattr(n, "name", None) == part)
            nodes = getattr(node, "body", [])
        first = min([d.lineno for d in getattr(node, "decorator_list", [])] + [node.lineno])
        return lines[first - 1 : node.end_lineno]
    start = next(
        (i for i, line in enumerate(lines) if opts.get("start-at") and str(opts["start-at"]) in line), 0
    )
    before, at = opts.get("end-before"), opts.get("end-at")
    end = next(
        (
            i if before else i + 1  # end-before stops above its line, end-at keeps it
            for i, line in enumerate(lines)
            if (before and i > start and str(before) in line) or (at and i >= start and str(at) in line)
        ),
        len(lines),
    )
    return lines[start:end]


def test_listings_keep_their_lines_output_wraps_and_tables_scroll_in_their_own_box():
    css = (ROOT / "_static" / "chunklab.css").read_text(encoding="utf-8")
    rules = re.findall(r"([^{}]+)\{([^}]*)\}", css)
    keep = [(sel, body) for sel, body in rules if "white-space: pre;" in body]
    assert any(
        "div.highlight pre" in sel and "overflow-x: auto" in body and "cqw" in body for sel, body in keep
    ), "listings keep their lines (no wrapping), sized to the listing's width, and scroll in their own box"
    wraps = [sel for sel, body in rules if "white-space: pre-wrap" in body]
    assert any(".cell_output pre" in sel for sel in wraps), "printed output wraps inside the column"
    scrolls = [sel for sel, body in rules if "overflow-x: auto" in body]
    assert any(
        "figure.chunklab-table" in sel and ".cell_output .output.text_html" in sel for sel in scrolls
    ), "tables must scroll inside their own box"


def test_tables_and_listings_that_scroll_sideways_show_a_visible_cue():
    """At 400 px a wide table or a long listing line scrolls: its scrollbar is drawn classic (not an
    overlay) and the edge with more content fades, driven by the box's own scroll position."""
    css = (ROOT / "_static" / "chunklab.css").read_text(encoding="utf-8")
    boxes = ("figure.chunklab-table", ".cell_output .output.text_html", "div.highlight pre")
    for box in boxes:
        assert re.search(rf"{re.escape(box)}::-webkit-scrollbar-thumb[^{{]*\{{[^}}]*background", css), box
    cue = re.search(r"@supports \(animation-timeline: scroll\(\)\) \{(.*?)\n\}", css, re.S)
    assert cue, "the fade needs a scroll-driven animation, guarded by @supports"
    assert all(box in cue.group(1) for box in boxes)
    assert "animation-timeline: scroll(self inline)" in cue.group(1) and "mask-image" in cue.group(1)


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
        if (
            tag == "link"
            and attrs.get("href")
            and (attrs.get("rel") or "") in ("stylesheet", "preload", "icon")
        ):
            self.urls.append(attrs["href"])


def test_built_pages_load_nothing_from_the_network():
    for name, html in built_pages():
        parser = _Resources()
        parser.feed(html)
        external = [u for u in parser.urls if re.match(r"(https?:)?//", u)]
        assert not external, f"{name}.html loads external resources: {external}"


PLACEHOLDERS = re.compile(
    r"example\.(org|com|net)|github\.com/chunklab/chunklab|jupyterhub\.example|OWNER/NAME"
)


def test_built_pages_contain_no_placeholder_urls():
    for name, html in built_pages():
        links = re.findall(r'(?:href|src|action)="([^"]*)"', html)
        found = sorted({link for link in links if PLACEHOLDERS.search(link)})
        assert not found, f"{name}.html links to placeholders: {found}"


def test_built_tables_are_captioned_and_cross_referenced_as_tables():
    caption = re.compile(r'id="((?:tbl|fig)-[\w-]+)">\s*<figcaption>\s*<p><span class="caption-number">(\w+)')
    caption_after = re.compile(r'id="(fig-[\w-]+)">.*?<span class="caption-number">(\w+)', re.S)
    refs = re.compile(r'href="[^"]*#((?:tbl|fig)-[\w-]+)"><span class="std std-numref">(\w+)')
    n_tables = 0
    for name, html in built_pages():
        for label, word in caption.findall(html):
            assert label.startswith("tbl-") and word == "Table", f"{name}: {label} captioned {word!r}"
            n_tables += 1
        for label, word in caption_after.findall(html):
            assert word == "Fig", f"{name}: figure {label} captioned {word!r}"
        for label, word in refs.findall(html):
            want = "Table" if label.startswith("tbl-") else "Fig"
            assert word == want, f"{name}: a reference to {label} reads {word!r}"
        for label in re.findall(r'id="(tbl-[\w-]+)"', html):
            assert re.search(rf'class="chunklab-table[^"]*" id="{label}"', html), (
                f"{name}: {label} is not a table"
            )
    assert n_tables >= 20, f"only {n_tables} captioned tables found"


def test_built_chapters_show_their_exercise_box():
    for name, html in built_pages():
        if name in CHAPTERS:
            assert re.search(r'class="(?:exercise admonition|admonition exercise)', html), (
                f"{name}.html has no exercise box"
            )


def test_binder_installs_cpu_torch_before_the_pinned_requirements():
    post = (ROOT / "binder" / "postBuild").read_text(encoding="utf-8").splitlines()
    torch_line = next(i for i, line in enumerate(post) if "torch==" in line)
    reqs_line = next(i for i, line in enumerate(post) if "-r requirements.txt" in line)
    pinned = next(
        line for line in (ROOT / "requirements.txt").read_text().splitlines() if line.startswith("torch==")
    )
    assert torch_line < reqs_line and pinned in post[torch_line] and "whl/cpu" in post[torch_line]
    assert os.access(ROOT / "binder" / "postBuild", os.X_OK)


#: an "Author et al., 2009" / "Author et al. (2023)" citation in a page's prose
CITATION = re.compile(r"\b([A-Z][\w'-]+) et al\.,? \(?(\d{4})\)?")


def test_every_citation_in_the_text_has_an_entry_in_the_references():
    references = (ROOT / "references.md").read_text(encoding="utf-8")
    entries = re.split(r"^\(ref-[\w-]+\)=$", references, flags=re.M)[1:]
    missing = set()
    for name in ["intro", "exercises", "glossary", "run-locally", *CHAPTERS, *PAGES]:
        for author, year in CITATION.findall(
            "\n".join(prose_lines(page_path(name).read_text(encoding="utf-8")))
        ):
            if not any(author in entry and year in entry for entry in entries):
                missing.add(f"{name}: {author} et al., {year}")
    assert not missing, f"cited but not in references.md: {sorted(missing)}"


#: what a cell's stderr looks like in a built page (mystnb), and progress bars that went there
STDERR_OUTPUT = re.compile(r'class="output stderr|Encoding tokens|\d+%\|[█▏▎▍▌▋▊▉ ]*\|')
#: an absolute path of the building machine
MACHINE_PATH = re.compile(r"(?<![\w.:/-])/(?:work|home|root|tmp|Users|opt|usr/local)/[\w.-]+|file:///")


def test_built_pages_show_no_stderr_and_no_machine_paths():
    """A cold build prints nothing a learner should not see: no stderr, no progress bars, no local paths."""
    problems = {}
    for name, html in built_pages():
        found = STDERR_OUTPUT.findall(html) + MACHINE_PATH.findall(html)
        if found:
            problems[name] = sorted(set(found))[:5]
    assert not problems, f"stderr, progress bars or machine paths in built pages: {problems}"


def test_the_spanish_edition_names_its_author_in_spanish():
    """The theme's footer reads "By {author}" translated: the author line must be translated too."""
    from scripts.book_edition import edition_overrides

    author = edition_overrides("es")["author"]
    assert "team" not in author and "ChunkLab" in author
    spanish = ROOT / "_build" / "html-es"
    if not (spanish / "intro.html").is_file():
        pytest.skip("Spanish edition not built (make book-es)")
    for page in spanish.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        assert "The ChunkLab team" not in html, f"{page.name}: footer in English"
