"""Documentation-site furniture is recognised by structure, and a heading never becomes a chunk alone.

The pages are cut-down copies of the markup each generator emits (Sphinx's classic and Read the
Docs themes, MkDocs Material, Docusaurus, Javadoc, pdoc): the article must survive whole and
every piece of furniture around it must go, whatever the theme calls it.
"""

from __future__ import annotations

import pytest

from chunklab.chunk import check_chunks
from chunklab.chunkers.structural import chunk_html
from chunklab.chunkers.structural.html.furniture import has_one_main_landmark, is_furniture

ARTICLE = (
    "<h1>asyncio.gather<a class='headerlink' href='#g' title='Permalink to this heading'>\u00b6</a></h1>"
    "<p>Run awaitable objects concurrently.</p>"
    "<dl><dt id='asyncio.wait'>asyncio.wait(aws)<a class='headerlink' href='#asyncio.wait'>\u00b6</a></dt>"
    "<dd><p>Wait until the condition is met.</p></dd></dl>"
)
FURNITURE = ("Home", "Previous topic", "Next topic", "Quick search", "Copyright 2001", "Edit this page")

THEMES = {
    "sphinx classic": (
        "<div class='related' role='navigation'><ul><li>Home</li></ul></div>"
        "<div class='document'><div class='documentwrapper'><div class='bodywrapper'>"
        f"<div class='body' role='main'><section id='g'>{ARTICLE}</section></div></div></div>"
        "<div class='sphinxsidebar' role='navigation'><h4>Previous topic</h4><h4>Next topic</h4>"
        "<h3>Quick search</h3></div></div>"
        "<div class='footer'>\u00a9 Copyright 2001 Python Software Foundation. Edit this page</div>"
    ),
    "read the docs": (
        "<nav class='wy-nav-side'><div class='wy-side-scroll'>Home</div></nav>"
        "<section class='wy-nav-content-wrap'><div class='wy-nav-content'><div class='rst-content'>"
        "<div role='navigation' aria-label='breadcrumbs'>Previous topic</div>"
        f"<div role='main' class='document'>{ARTICLE}</div>"
        "<footer><div class='rst-footer-buttons'>Next topic</div>"
        "<p>Copyright 2001. Quick search. Edit this page</p></footer></div></div></section>"
    ),
    "mkdocs material": (
        "<header class='md-header'><nav class='md-header__inner'>Home</nav></header>"
        "<div class='md-container'><main class='md-main'><div class='md-main__inner'>"
        "<div class='md-sidebar md-sidebar--primary'>Previous topic Next topic</div>"
        f"<div class='md-content'><article class='md-content__inner md-typeset'>{ARTICLE}</article></div>"
        "<div class='md-sidebar md-sidebar--secondary'>Quick search</div></div></main>"
        "<footer class='md-footer'>Copyright 2001. Edit this page</footer></div>"
    ),
    "docusaurus": (
        "<nav class='navbar navbar--fixed-top'>Home</nav><div class='main-wrapper'>"
        "<aside class='theme-doc-sidebar-container'>Previous topic</aside><main class='docMainContainer'>"
        f"<div class='theme-doc-breadcrumbs'>Next topic</div><article><div class='markdown'>{ARTICLE}</div>"
        "<footer class='theme-doc-footer'><a class='theme-edit-this-page'>Edit this page</a></footer>"
        "</article><div class='table-of-contents'>Quick search</div></main></div>"
        "<footer class='footer'>Copyright 2001</footer>"
    ),
    "javadoc": (
        "<header role='banner'><nav role='navigation'><div class='top-nav'>Home</div>"
        "<div class='sub-nav'>Previous topic Next topic</div></nav></header>"
        f"<div class='flex-content'><main role='main'><div class='header'>{ARTICLE}</div></main>"
        "<footer role='contentinfo'><p class='legal-copy'>Copyright 2001. Quick search. Edit this page"
        "</p></footer></div>"
    ),
    "pdoc": (
        "<nav class='pdoc'><input type='search' placeholder='Quick search'>Home Previous topic Next topic"
        f"</nav><main class='pdoc'><section class='module-info'>{ARTICLE}</section></main>"
        "<div class='attribution'>Copyright 2001. Edit this page</div>"
    ),
}


@pytest.mark.parametrize("theme", sorted(THEMES))
def test_each_generators_furniture_goes_and_its_article_stays_whole(theme):
    page = f"<!DOCTYPE html><html><head><title>t</title></head><body>{THEMES[theme]}</body></html>"
    chunks = chunk_html(page, max_chars=1500)
    assert check_chunks(chunks, page, max_size=1500, html=True) == []
    text = "\n".join(c.text for c in chunks)
    assert text == (
        "asyncio.gather\nRun awaitable objects concurrently.\n"
        "asyncio.wait(aws)\nWait until the condition is met."
    )
    kept = "\n".join(c.text for c in chunk_html(page, max_chars=1500, keep_boilerplate=True))
    assert all(word in kept for word in ("Home", "Copyright 2001")), kept


@pytest.mark.parametrize(
    ("tag", "role", "cls", "id_", "in_section", "expected"),
    [
        ("div", None, "wy-nav-content", None, False, False),  # Read the Docs' article column
        ("div", None, "sphinxsidebar", None, False, True),
        ("div", None, "footer", None, True, True),
        ("div", None, "card-header", None, True, False),  # a header word inside an article is content
        ("div", None, "md-header", None, False, True),
        ("div", None, "toctree-wrapper compound", None, True, False),  # a toctree is the page's content
        ("div", None, None, "sidebar", False, True),
        ("div", "contentinfo", None, None, True, True),
        ("footer", None, None, None, True, False),  # a footer of a section belongs to it
        ("div", None, "footnote", None, False, False),
        ("div", None, "highlight-python notranslate", None, False, False),
        ("div", None, None, "navigation", True, False),  # inside content an id is a title's slug
        ("section", None, None, "pagination", False, False),
        ("div", None, "section", "navigation", False, False),  # HTML 4 Sphinx: a section, by class
        ("h2", None, "sidebar-title", None, False, False),
    ],
)
def test_furniture_is_read_from_the_element_its_role_and_its_class_words(
    tag, role, cls, id_, in_section, expected
):
    assert is_furniture(tag, role, cls, id_, in_section) is expected


def test_one_main_landmark_is_counted_once_whether_a_tag_a_role_or_both():
    assert has_one_main_landmark("<main role='main'>x</main>")
    assert has_one_main_landmark("<div role=main>x</div>")
    assert not has_one_main_landmark("<main>a</main><main>b</main>")
    assert not has_one_main_landmark("<main>a</main><div role='main'>b</div>")
    assert not has_one_main_landmark("<div class='main'>a</div>")


def test_sections_named_like_furniture_are_content():
    page = (
        "<main><section id='navigation'><h2 id='pagination'>Pagination</h2><p>Cursors.</p></section>"
        "<div class='section' id='footer'><h2>Footers</h2><p>Totals.</p></div></main>"
    )
    assert "\n".join(c.text for c in chunk_html(page)) == "Pagination\nCursors.\nFooters\nTotals."


def test_a_main_landmark_that_is_never_opened_drops_nothing():
    page = "<template><main>t</main></template><p>Visible.</p>"
    assert [c.text for c in chunk_html(page)] == ["Visible."]


def test_a_heading_joins_the_content_it_heads_even_when_that_content_must_be_split():
    body = " ".join(f"Sentence {i} about the event loop." for i in range(40))
    page = f"<section><h2>Event loop</h2><h3>Running</h3><p>{body}</p></section><h2>Next</h2><p>More.</p>"
    chunks = chunk_html(page, max_chars=200)
    assert check_chunks(chunks, page, max_size=200, html=True) == []
    assert chunks[0].text.startswith("Event loop\nRunning\nSentence 0 about")
    headings = {"Event loop", "Running", "Next"}
    assert not [c.text for c in chunks if set(c.text.split("\n")) <= headings]
    assert chunks[-1].text == "Next\nMore."


def test_a_permalink_after_a_definition_is_no_text_but_an_anchor_in_prose_is():
    page = "<dl><dt>f(x)<a class='headerlink' href='#f'>\u00b6</a></dt>"
    page += "<dd><p>See <a href='#g'>g</a>.</p></dd></dl>"
    assert [c.text for c in chunk_html(page)] == ["f(x)\nSee g."]
