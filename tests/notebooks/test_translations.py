"""The Spanish edition: catalogs complete and current, markup kept, the pipeline translating MyST.

The catalogs (``locales/es/LC_MESSAGES/**.po``) are compared with templates extracted from the
current English sources (``scripts/catalogs.py``, the ``gettext`` builder with execution off:
seconds). An English paragraph changed without ``make catalogs`` and a translation, a fuzzy or
untranslated entry, a translation that loses a ``{glue:text}`` role, a cross-reference, inline
code or a link target: each fails here, so the edition cannot drift silently. A small book
built in a temporary folder checks that what the chapters use (glued numbers, ``{numref}``,
links, admonitions, glossary terms, captions kept in code-cell metadata) really comes out
translated, and that the language switch links the editions page by page.
"""

from __future__ import annotations

import posixpath
import re
import sys
from html import unescape
from pathlib import Path

import pytest
from babel.messages.pofile import read_po
from hypothesis import given
from hypothesis import strategies as st

from _ext.chunklab_book import EDITIONS, other_edition_href
from scripts import catalogs

ROOT = Path(__file__).resolve().parents[2]


LANG = "es"
#: glossary terms and the established Spanish term each must be given as (TERMS-ES)
SPANISH_TERMS = {
    "chunk": "fragmento",
    "overlap": "solapamiento",
    "fallback": "recurso de respaldo",
    "recall@k": "exhaustividad",
    "precision@k": "precisión",
    "span recall": "exhaustividad",
    "paired bootstrap": "bootstrap emparejado",
    "held-out questions": "reservad",
    "chunking": "troceado",
    "chunk size": "tamaño de fragmento",
    "retrieval": "recuperación",
    "retrieval-augmented generation": "generación aumentada por recuperación",
    "embedding": "incrustación",
    "sliding window": "ventana deslizante",
    "span": "tramo",
    "auto-merging": "fusión automática",
}


@pytest.fixture(scope="module")
def templates(tmp_path_factory: pytest.TempPathFactory) -> dict[str, set[str]]:
    """Messages of the current English sources, by catalog name."""
    return catalogs.extract(tmp_path_factory.mktemp("pot"))


def _catalog(path: Path):
    with open(path, "rb") as handle:
        return read_po(handle)


def _entries():
    for name, path in catalogs.catalogs(LANG).items():
        for message in _catalog(path):
            if message.id:
                yield name, message


# --- the catalogs against the English sources ---------------------------------------------


def test_every_page_has_a_catalog_and_no_catalog_is_left_over(templates):
    have = set(catalogs.catalogs(LANG))
    assert set(templates) - have == set(), "pages without a catalog: run `make catalogs`"
    assert have - set(templates) == set(), "catalogs of pages the book no longer has"


def test_catalogs_hold_exactly_the_messages_of_the_current_english_sources(templates):
    problems = []
    for name, path in catalogs.catalogs(LANG).items():
        have, want = catalogs.messages(path), templates.get(name, set())
        problems += [f"{name}: new English text, not in the catalog: {m[:70]!r}" for m in sorted(want - have)]
        problems += [
            f"{name}: obsolete, no longer in the English text: {m[:70]!r}" for m in sorted(have - want)
        ]
        obsolete = _catalog(path).obsolete
        problems += [f"{name}: leftover obsolete entry (#~): {m[:70]!r}" for m in sorted(obsolete)]
    assert not problems, "run `make catalogs`, translate, delete #~ entries:\n" + "\n".join(problems[:40])


def test_catalogs_are_valid_po_files():
    for path in catalogs.catalogs(LANG).values():
        catalogs.check_syntax(path)


def test_every_message_is_translated_and_none_is_fuzzy():
    untranslated = [f"{name}: {m.id[:70]!r}" for name, m in _entries() if not m.string]
    fuzzy = [f"{name}: {m.id[:70]!r}" for name, m in _entries() if m.string and m.fuzzy]
    assert not fuzzy, f"{len(fuzzy)} fuzzy entries (check the translation, drop the flag):\n" + "\n".join(
        fuzzy[:30]
    )
    assert not untranslated, f"{len(untranslated)} untranslated entries:\n" + "\n".join(untranslated[:30])


def test_translations_keep_the_markup_of_the_english():
    problems = catalogs.markup_report(LANG)
    assert not problems, "\n".join(problems[:40])


def test_glossary_gives_each_term_in_spanish_with_the_english_beside_it():
    glossary = ROOT / "glossary.md"
    block = re.search(r"```\{glossary\}\n(.*?)\n```", glossary.read_text(encoding="utf-8"), re.S)
    assert block, "glossary.md has a {glossary} block"
    terms = [line.strip() for line in block.group(1).splitlines() if line.strip() and not line[0].isspace()]
    spanish = {m.id: m.string for m in _catalog(catalogs.catalogs(LANG)["glossary"]) if m.id}
    for term in terms:
        assert spanish.get(term), f"glossary term {term!r} has no Spanish entry"
        assert term in spanish[term], (
            f"glossary: {spanish[term]!r} does not show the English term {term!r} beside it"
        )
        if term in SPANISH_TERMS:
            assert SPANISH_TERMS[term] in spanish[term], (
                f"{term!r} is {SPANISH_TERMS[term]!r}…, not {spanish[term]!r}"
            )


# --- the merge --------------------------------------------------------------------------

OLD_PARAGRAPH = (
    "Overlap repeats the end of each chunk at the start of the next one, so a cut sentence is whole once."
)
NEW_PARAGRAPH = (
    "Overlap repeats the end of each chunk at the start of the next one, so a cut sentence is whole at "
    "least once."
)


def _write_catalog(path: Path, entries: dict[str, str], template: bool = False) -> None:
    from babel.messages.catalog import Catalog
    from babel.messages.pofile import write_po

    catalog = Catalog(locale=None if template else LANG)
    for msgid, msgstr in entries.items():
        catalog.add(msgid, msgstr)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:
        write_po(handle, catalog)


def test_merge_keeps_translations_marks_changed_text_fuzzy_and_adds_new_text(tmp_path):
    pot, locales = tmp_path / "pot", tmp_path / "locales"
    po = locales / LANG / "LC_MESSAGES" / "chapters" / "01-fixed.po"
    _write_catalog(
        po,
        {
            "Fixed-size chunking": "Troceado de tamaño fijo",
            OLD_PARAGRAPH: "El solapamiento repite…",
            "A paragraph the English text dropped.": "Un párrafo que el inglés quitó.",
        },
    )
    _write_catalog(
        pot / "chapters" / "01-fixed.pot",
        {"Fixed-size chunking": "", NEW_PARAGRAPH: "", "A new paragraph.": ""},
        template=True,
    )
    catalogs.update(pot, locale_dir=locales)
    merged = _catalog(po)
    assert merged.get("Fixed-size chunking").string == "Troceado de tamaño fijo"
    assert merged.get(NEW_PARAGRAPH).fuzzy and merged.get(NEW_PARAGRAPH).string == "El solapamiento repite…"
    assert merged.get("A new paragraph.").string == ""
    assert "A paragraph the English text dropped." in merged.obsolete  # kept, marked #~
    assert catalogs.state(po) == catalogs.CatalogState(po, translated=1, untranslated=1, fuzzy=1, obsolete=1)


def test_merge_refuses_a_damaged_catalog_and_leaves_it_alone(tmp_path):
    pot, locales = tmp_path / "pot", tmp_path / "locales"
    po = locales / LANG / "LC_MESSAGES" / "intro.po"
    _write_catalog(po, {"Overview": "Panorama general"})
    damaged = po.read_text(encoding="utf-8") + 'msgid "half an entry\nrry no "\n'
    po.write_text(damaged, encoding="utf-8")
    _write_catalog(pot / "intro.pot", {"Overview": "", "New": ""}, template=True)
    with pytest.raises(ValueError, match="intro.po"):
        catalogs.update(pot, locale_dir=locales)
    assert po.read_text(encoding="utf-8") == damaged


def test_merge_puts_a_catalog_back_when_a_translation_would_be_lost(tmp_path, monkeypatch):
    pot, locales = tmp_path / "pot", tmp_path / "locales"
    po = locales / LANG / "LC_MESSAGES" / "intro.po"
    _write_catalog(po, {"Overview": "Panorama general"})
    before = po.read_bytes()
    _write_catalog(pot / "intro.pot", {"Overview": ""}, template=True)

    def careless_merge(command, check):  # a merge that forgets the translation
        _write_catalog(po, {"Overview": ""})

    monkeypatch.setattr(catalogs.subprocess, "run", careless_merge)
    with pytest.raises(RuntimeError, match="lose 1 translations"):
        catalogs.update(pot, locale_dir=locales)
    assert po.read_bytes() == before


# --- the markup comparison itself ----------------------------------------------------------


def test_markup_counts_roles_code_and_link_targets_but_not_their_text():
    english = (
        "The {glue:text}`n_docs` files ({numref}`tbl-units`), see [the glossary](../glossary.md) and "
        "`chunk_fixed`."
    )
    spanish = (
        "Los {glue:text}`n_docs` archivos ({numref}`tbl-units`), mira [el glosario](../glossary.md) y "
        "`chunk_fixed`."
    )
    assert catalogs.markup_problems(english, spanish) is None
    assert catalogs.markup_problems("a {term}`chunk`", "un {term}`fragmento <chunk>`") is None


@pytest.mark.parametrize(
    "spanish, lost",
    [
        (
            "Los archivos ({numref}`tbl-units`), mira [el glosario](../glossary.md) y `chunk_fixed`.",
            "{glue:text}`n_docs`",
        ),
        (
            "Los {glue:text}`n_doc` archivos ({numref}`tbl-units`), mira [el glosario](../glossary.md) y "
            "`chunk_fixed`.",
            "{glue:text}`n_docs`",
        ),
        (
            "Los {glue:text}`n_docs` archivos (tabla), mira [el glosario](../glossary.md) y `chunk_fixed`.",
            "{numref}`tbl-units`",
        ),
        (
            "Los {glue:text}`n_docs` archivos ({numref}`tbl-units`), mira [el glosario](glosario.md) y "
            "`chunk_fixed`.",
            "](../glossary.md)",
        ),
        (
            "Los {glue:text}`n_docs` archivos ({numref}`tbl-units`), mira [el glosario](../glossary.md) y "
            "chunk_fixed.",
            "`chunk_fixed`",
        ),
        (
            "Los {glue:text}`n_docs` archivos ({numref}`tbl-units`), mira [el glosario](../glossary.md) y "
            "`chunk fijo`.",
            "`chunk_fixed`",
        ),
    ],
)
def test_markup_problems_name_what_a_translation_dropped(spanish, lost):
    english = (
        "The {glue:text}`n_docs` files ({numref}`tbl-units`), see [the glossary](../glossary.md) and "
        "`chunk_fixed`."
    )
    problem = catalogs.markup_problems(english, spanish)
    assert problem is not None and lost in problem


# --- the language switch -------------------------------------------------------------------


def test_each_edition_links_to_the_other():
    assert EDITIONS["en"]["other"] == "es" and EDITIONS["es"]["other"] == "en"
    assert EDITIONS[EDITIONS["en"]["other"]]["link_text"] == "Español"
    assert EDITIONS[EDITIONS["es"]["other"]]["link_text"] == "English"


SEGMENT = st.from_regex(r"[a-z0-9][a-z0-9_-]{0,8}", fullmatch=True)


@given(
    folders=st.lists(SEGMENT, max_size=3),
    page=SEGMENT,
    pair=st.sampled_from([("html", "es"), ("html-es", "en")]),
)
def test_switch_link_opens_the_same_page_in_the_sibling_build_folder(folders, page, pair):
    here, other_language = pair
    pagename = "/".join([*folders, page])
    href = other_edition_href(pagename, EDITIONS["es" if other_language == "en" else "en"]["other_root"])
    page_path = posixpath.join("_build", here, pagename + ".html")
    target = posixpath.normpath(posixpath.join(posixpath.dirname(page_path), href))
    other_folder = "html-es" if here == "html" else "html"
    assert target == posixpath.join("_build", other_folder, pagename + ".html")


def test_switch_link_to_a_published_edition_is_used_as_given():
    assert (
        other_edition_href("chapters/01-fixed", "https://books.test/es")
        == "https://books.test/es/chapters/01-fixed.html"
    )
    assert other_edition_href("intro", "/es/") == "/es/intro.html"
    with pytest.raises(ValueError, match="other_root"):
        other_edition_href("intro", "")


# --- a small book through the real pipeline ------------------------------------------------

PAGE = """\
---
jupytext:
  text_representation: {extension: .md, format_name: myst}
kernelspec: {display_name: Python 3, language: python, name: python3}
---

# Small page

```{admonition} Before you start
:class: tip

You read {glue:text}`n_docs` documents; see {numref}`tbl-small` and the [other page](other.md).
```

```{code-cell} ipython3
:tags: [remove-cell]
from IPython.display import Markdown
from myst_nb import glue
glue("n_docs", 42, display=False)
glue("verdict", Markdown("**established**"), display=False)
```

A {term}`chunk` is cut with `chunk_fixed`. The difference is {glue:md}`verdict`.

```{code-cell} ipython3
---
tags: [remove-input]
mystnb:
  figure:
    name: tbl-small
    caption: |
      The small table, with `code` and a {term}`chunk`,
      on two lines.
---
"a table"
```

```{exercise} Token windows with overlap
:label: ex-small

Write the chunker.
```
"""
GLOSSARY = """\
# Glossary

```{glossary}
chunk
  A slice of a document.
```
"""


TOC = """\
format: jb-book
root: index
parts:
  - caption: The first part
    chapters:
      - file: page
      - file: other
      - file: glossary
"""


def _small_book(root: Path) -> Path:
    src = root / "src"
    src.mkdir()
    (src / "_toc.yml").write_text(TOC, encoding="utf-8")
    (src / "index.md").write_text("# Home\n\nThe small book.\n", encoding="utf-8")
    (src / "page.md").write_text(PAGE, encoding="utf-8")
    (src / "other.md").write_text("# Other page\n\nNothing here.\n", encoding="utf-8")
    (src / "glossary.md").write_text(GLOSSARY, encoding="utf-8")
    return src


def _sphinx(src: Path, out: Path, builder: str, **config) -> str:
    settings = {
        "extensions": ["myst_nb", "sphinx_exercise", "sphinx_external_toc", "chunklab_book"],
        "external_toc_path": str(src / "_toc.yml"),
        "master_doc": "index",
        "html_theme": "sphinx_book_theme",
        "numfig": True,
        "nb_execution_mode": "off",
        "gettext_compact": False,
        "locale_dirs": ["locales/"],
        **config,
    }
    warnings = out / "warnings.txt"
    # the book's own extension, found as the book finds it (_config.yml's local_extensions: _ext/),
    # so that this test does not rely on an earlier one having put _ext on sys.path
    ext = str(ROOT / "_ext")
    added = ext not in sys.path
    if added:
        sys.path.insert(0, ext)
    try:
        return _build(src, out, builder, settings, warnings)
    finally:
        if added:
            sys.path.remove(ext)


def _build(src: Path, out: Path, builder: str, settings: dict, warnings: Path) -> str:
    from sphinx.application import Sphinx
    from sphinx.util.docutils import docutils_namespace, patch_docutils

    with open(warnings, "w", encoding="utf-8") as stream, patch_docutils(None), docutils_namespace():
        app = Sphinx(
            str(src),
            None,
            str(out / builder),
            str(out / f"doctrees-{builder}"),
            builder,
            confoverrides=settings,
            status=None,
            warning=stream,
            freshenv=True,
        )
        app.build()
    return warnings.read_text(encoding="utf-8")


def _spanish(msgid: str) -> str:
    """A stand-in translation: the message with its words marked, its markup untouched."""
    return "ES " + msgid.replace("Small page", "Página pequeña").replace(
        "The small table", "La tabla pequeña"
    )


@pytest.fixture(scope="module")
def small_book(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("small-book")
    src = _small_book(root)
    unexecuted = root / "off"
    unexecuted.mkdir()
    _sphinx(src, unexecuted, "gettext")
    executed = root / "on"
    executed.mkdir()
    _sphinx(src, executed, "gettext", nb_execution_mode="force")
    return src, unexecuted / "gettext", executed / "gettext", root


def test_captions_extracted_without_execution_are_the_ones_the_executed_book_looks_up(small_book):
    _, unexecuted, executed, _ = small_book
    without = catalogs.messages(unexecuted / "page.pot")
    with_outputs = catalogs.messages(executed / "page.pot")
    caption = "The small table, with `code` and a {term}`chunk`, on two lines."
    assert caption in with_outputs, sorted(with_outputs)
    assert without == with_outputs


def test_translated_build_translates_glue_numref_links_admonitions_captions_and_terms(small_book):
    from babel.messages.catalog import Catalog
    from babel.messages.pofile import write_po

    src, unexecuted, _, root = small_book
    locale = src / "locales" / LANG / "LC_MESSAGES"
    locale.mkdir(parents=True)
    for name in ("index", "page", "other", "glossary"):
        spanish = Catalog(locale=LANG)
        for msgid in sorted(catalogs.messages(unexecuted / f"{name}.pot")):
            spanish.add(msgid, "fragmento (chunk)" if msgid == "chunk" else _spanish(msgid))
        with open(locale / f"{name}.po", "wb") as handle:
            write_po(handle, spanish)
    out = root / "es"
    out.mkdir()
    warnings = _sphinx(src, out, "html", language=LANG, nb_execution_mode="force")
    assert "WARNING" not in warnings, warnings
    html = (out / "html" / "page.html").read_text(encoding="utf-8")
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))
    assert "Página pequeña" in text  # heading
    assert "ES Before you start" in text  # admonition title
    assert re.search(r"ES You read\s+42\s+documents", text)  # glue value in translated prose
    assert "Tabla 1" in text  # {numref} with the Spanish table label
    assert 'href="other.html"' in html  # link target kept
    assert "La tabla pequeña" in text  # caption from code-cell metadata
    assert "ES The first part" in text  # a part caption of _toc.yml (sidebar)
    assert re.search(r"Ejercicio 1\s*\(ES Token windows with overlap\)", text), text  # exercise title
    assert re.search(r'href="glossary.html#term-chunk"', html)  # English {term} still resolves
    assert "ES A" in text and "chunk_fixed" in text
    assert re.search(r"ES A .*The difference is\s+<strong>established</strong>", html, re.S)  # {glue:md}
    switch = re.search(r'<a class="[^"]*chunklab-language-switch[^"]*" href="([^"]+)"[^>]*>\s*(\w+)', html)
    assert switch and switch.groups() == ("../html/page.html", "English")
    glossary = (out / "html" / "glossary.html").read_text(encoding="utf-8")
    assert "fragmento (chunk)" in glossary


def test_english_build_links_each_page_to_its_spanish_twin(small_book):
    src, _, _, root = small_book
    out = root / "en"
    out.mkdir()
    _sphinx(src, out, "html", language="en")
    for page, href in (("page", "../html-es/page.html"), ("glossary", "../html-es/glossary.html")):
        html = (out / "html" / f"{page}.html").read_text(encoding="utf-8")
        switch = re.search(
            r'<a class="[^"]*chunklab-language-switch[^"]*" href="([^"]+)"[^>]*>\s*(\w+)', html
        )
        assert switch and switch.groups() == (href, "Español"), page


def test_built_spanish_glossary_shows_the_spanish_terms():
    """When ``make book-es`` has run: the glossary page lists the terms in Spanish."""
    page = ROOT / "_build" / "html-es" / "glossary.html"
    if not page.is_file():
        pytest.skip("the Spanish edition is not built (make book-es)")
    html = page.read_text(encoding="utf-8")
    assert '<html lang="es"' in html
    terms = [
        " ".join(unescape(re.sub(r"<[^>]+>", " ", t)).split())
        for t in re.findall(r"<dt[^>]*>(.*?)</dt>", html, re.S)
    ]
    for english, spanish in SPANISH_TERMS.items():
        assert any(spanish in t and english in t for t in terms), (
            f"no glossary term with {spanish!r} ({english!r})"
        )


def test_every_static_figure_of_the_book_has_a_spanish_drawing():
    """Static images carry words too: Sphinx swaps in ``<name>.es<ext>`` for the Spanish build
    (``figure_language_filename``), so every drawn figure the pages include needs one."""
    pages = [*ROOT.glob("*.md"), *ROOT.glob("chapters/*.md")]
    included = {
        (page.parent / m).resolve()
        for page in pages
        for m in re.findall(r"\{figure\}\s+(\S+\.(?:svg|png|jpg))", page.read_text(encoding="utf-8"))
    }
    assert included, "no static figure found: the pattern no longer matches the pages"
    for image in included:
        spanish = image.with_name(f"{image.stem}.es{image.suffix}")
        assert spanish.is_file(), f"{image.relative_to(ROOT)} has no Spanish drawing {spanish.name}"
        assert spanish.read_bytes() != image.read_bytes(), f"{spanish.name} is a copy of the English drawing"


#: "recall@5" written bare in Spanish text, outside code and outside a "(recall@5)" gloss
_BARE_RECALL = re.compile(r"(?<![`\w(*/])recall@\w+")


def _outside_code(text: str) -> str:
    return re.sub(r"`+[^`]*`+", "", text)


def test_spanish_uses_the_glossary_term_for_recall_in_prose_tables_and_axes():
    """One term per metric: the glossary's "exhaustividad@k", in the catalogs and in the labels alike."""
    from babel.messages.pofile import read_po

    from chunklab.book import labels as L

    bare = []
    for po in sorted((ROOT / "locales" / LANG / "LC_MESSAGES").rglob("*.po")):
        with po.open("rb") as f:
            for m in read_po(f):
                if m.id and isinstance(m.string, str) and _BARE_RECALL.search(_outside_code(m.string)):
                    bare.append(f"{po.name}: {m.string[:60]}")
    bare += [f"labels.toml {k}" for k, e in L.labels().items() if _BARE_RECALL.search(_outside_code(e["es"]))]
    assert not bare, f"'recall@' instead of the glossary's 'exhaustividad@': {bare}"
