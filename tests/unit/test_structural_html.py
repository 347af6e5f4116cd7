"""chunk_html: sections from semantic elements and headings, raw offsets, visible text only."""

from __future__ import annotations

import html as html_lib
import os
import warnings

import pytest
from bs4 import BeautifulSoup, XMLParsedAsHTMLWarning
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from chunklab.chunk import check_chunks, embedding_text
from chunklab.chunkers.structural import chunk_html
from chunklab.chunkers.structural.html.furniture import has_one_main_landmark, is_furniture, is_main_landmark
from chunklab.chunkers.structural.html.tags import SECTIONING, TRACKED
from chunklab.documents import decode_bytes


def ok(chunks, html, max_chars=1500):
    problems = check_chunks(chunks, html, max_size=max_chars, html=True)
    assert problems == [], problems


def visible(html: str, keep_boilerplate: bool = False) -> str:
    """An independent oracle: BeautifulSoup's text without script/style/template/head.

    Unless ``keep_boilerplate``, also without page furniture (the rule chunk_html documents:
    ``is_furniture`` decides per element, this walks BeautifulSoup's own tree) and, on a page
    with one main landmark, without everything outside it.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
        soup = BeautifulSoup(html, "html.parser")
    for t in soup(["script", "style", "template", "noscript", "head", "title"]):
        t.decompose()
    if not keep_boilerplate:
        mains = [t for t in soup.find_all(TRACKED) if is_main_landmark(t.name, _attr(t, "role"))]
        root = mains[0] if len(mains) == 1 and has_one_main_landmark(html) else None
        sectioning = [*SECTIONING]
        furniture = [
            t
            for t in soup.find_all(TRACKED)
            if t is not root
            and (root is None or t not in root.parents)  # the landmark is content wherever it is
            and is_furniture(
                t.name,
                _attr(t, "role"),
                _attr(t, "class"),
                _attr(t, "id"),
                t.find_parent(sectioning) is not None or (root is not None and root in t.parents),
            )
        ]
        for t in furniture:
            if not t.decomposed:
                t.decompose()
        if root is not None:
            return "".join(root.get_text().split())
    return "".join(soup.get_text().split())


def _attr(tag, name: str) -> str | None:
    value = tag.get(name)
    return " ".join(value) if isinstance(value, list) else value


def squash(chunks) -> str:
    return "".join("".join(c.text.split()) for c in chunks).replace("|", "")


PAGE = """<!DOCTYPE html>
<html><head><title>Kit docs</title><style>body { color: red }</style>
<script>var s = "<section>not real</section>";</script></head>
<body>
<nav id="menu"><a href="/">Home</a> <a href="/a">About</a></nav>
<main>
<section id="install"><h2>Install</h2><p>Run <code>pip install kit</code>.</p></section>
<article id="usage"><h2>Usage</h2><p>Import it &amp; call it.</p><ul><li>one<li>two</ul></article>
<aside><p>Side note.</p></aside>
</main>
<template><p>template text</p></template>
</body></html>"""


def test_semantic_elements_become_sections_with_tag_id_and_exact_markup_spans():
    chunks = chunk_html(PAGE)
    ok(chunks, PAGE)
    by_id = {c.metadata["id"]: c for c in chunks}
    sec = by_id["install"]
    assert sec.metadata["tag"] == "section"
    # the span holds the element's markup (wrapper tags opened just before it included)
    assert sec.start <= sec.metadata["element_start"] < sec.end
    assert PAGE[sec.metadata["element_start"] : sec.end].startswith('<section id="install">')
    assert PAGE[sec.start : sec.end].endswith("</section>")
    assert sec.text == "Install\nRun pip install kit."
    usage = by_id["usage"]
    assert usage.metadata["tag"] == "article" and usage.text == "Usage\nImport it & call it.\none\ntwo"
    assert usage.metadata["headings"] == ["Usage"]
    assert "menu" not in by_id  # navigation is page furniture, dropped by default
    kept = {c.metadata["id"]: c for c in chunk_html(PAGE, keep_boilerplate=True)}
    assert kept["menu"].text == "Home About"


def test_script_style_template_and_head_content_are_dropped():
    chunks = chunk_html(PAGE)
    text = "\n".join(c.text for c in chunks)
    assert "not real" not in text and "color" not in text and "template text" not in text
    assert all(c.metadata["title"] == "Kit docs" for c in chunks)
    assert embedding_text(chunks[0]).startswith("Kit docs")


def test_pages_without_semantic_elements_use_the_heading_hierarchy():
    page = (
        "<html><body><h1>Guide</h1><p>Intro.</p><h2>Install</h2><p>Step.</p>"
        "<h3>Linux</h3><p>apt.</p><h2>Usage</h2><p>Call.</p></body></html>"
    )
    chunks = chunk_html(page, max_chars=40)
    ok(chunks, page, 40)
    paths = [c.metadata["headings"] for c in chunks]
    assert paths == [["Guide"], ["Guide", "Install"], ["Guide", "Install", "Linux"], ["Guide", "Usage"]]
    assert [c.metadata["tag"] for c in chunks] == ["h1", "h2", "h3", "h2"]


def test_div_soup_is_split_by_classed_divs_within_budget():
    cards = "".join(
        f'<div class="card"><div><span>Card {i}</span></div><div>' + f"text of card {i} " * 6 + "</div></div>"
        for i in range(20)
    )
    page = f'<html><body><div id="wrap"><div class="cards">{cards}</div></div></body></html>'
    chunks = chunk_html(page, max_chars=300)
    ok(chunks, page, 300)
    assert len(chunks) > 5
    for i in range(20):  # a card is never cut in two
        holders = [c for c in chunks if f"Card {i}\n" in c.text + "\n"]
        assert len(holders) == 1 and f"text of card {i} " * 5 in holders[0].text + " "


def test_section_over_budget_splits_by_blocks_then_text_and_spans_stay_ordered():
    paras = "".join(f"<p>Paragraph {i}: " + "lorem ipsum " * 15 + "</p>" for i in range(10))
    huge = "<pre>" + "x = 1\n" * 200 + "</pre>"
    page = f"<section id='s'><h2>Big</h2>{paras}{huge}</section>"
    chunks = chunk_html(page, max_chars=250)
    ok(chunks, page, 250)
    assert all(len(c.text) <= 250 for c in chunks)
    starts = [c.start for c in chunks]
    assert starts == sorted(starts) and len(set(starts)) == len(starts)
    assert len({c.id for c in chunks}) == len(chunks)
    assert all(c.metadata["headings"] == ["Big"] for c in chunks)


def test_xml_declaration_string_and_bytes_with_declared_encoding():
    page = (
        '<?xml version="1.0" encoding="iso-8859-1"?>\n'
        "<html><body><h1>Caf\u00e9</h1><p>cr\u00e8me</p></body></html>"
    )
    chunks = chunk_html(page)
    ok(chunks, page)
    assert chunks[0].text == "Caf\u00e9\ncr\u00e8me"
    raw = page.encode("iso-8859-1")
    chunks = chunk_html(raw)
    ok(chunks, decode_bytes(raw, "html").text)
    assert chunks[0].text == "Caf\u00e9\ncr\u00e8me"
    meta = b'<html><head><meta charset="windows-1252"></head><body><p>\x93quoted\x94</p></body></html>'
    assert chunk_html(meta)[0].text == "\u201cquoted\u201d"


def test_tables_rows_become_lines_with_cells_separated():
    page = "<table><tr><th>Name<th>Age</tr><tr><td>Ann</td><td>31</td></tr></table>"
    chunks = chunk_html(page)
    assert chunks[0].text == "Name | Age\nAnn | 31"


@pytest.mark.parametrize(
    "page",
    ["", "   ", "<html></html>", "<script>only()</script>", "<!-- c -->", "<br><img src=x>", "\ufeff"],
)
def test_pages_without_visible_text_give_no_chunks(page):
    assert chunk_html(page) == [] or "".join(c.text for c in chunk_html(page)).strip()


@pytest.mark.parametrize(
    "page",
    [
        "<p>unclosed <b>bold <i>italic",
        "<div><p>a</div></p>text</span>",
        "<a href='x>y'>quoted > in attribute</a>",
        "<p>1 < 2 and 3 > 2</p>",
        "<<<>>> <!-- unclosed comment",
        "<p>&amp; &lt; &#169; &unknown; &#xZZ;</p>",
        "text before <html> text after </html> trailing",
        "<h1>a</h1><h1>b</h1><h6>c</h6>",
        "<head><title>t</title><p>body content without body tag",
        "<textarea><p>raw?</p></textarea>",
    ],
)
def test_malformed_html_never_raises_and_keeps_the_contract(page):
    chunks = chunk_html(page, max_chars=20)
    if chunks:
        ok(chunks, page, 20)


@pytest.mark.parametrize("kwargs", [{"max_chars": 0}, {"max_chars": None}, {"doc_id": 5}])
def test_bad_arguments_raise_value_error(kwargs):
    with pytest.raises(ValueError):
        chunk_html("<p>x</p>", **kwargs)


_WORDS = st.text(alphabet="abcxyz &<>\"'é\u00a0\n\t", min_size=1, max_size=12)
_BLOCK_TAGS = [
    "p",
    "div",
    "section",
    "article",
    "li",
    "h1",
    "h2",
    "h3",
    "pre",
    "blockquote",
    "main",
    "aside",
    "nav",
    "header",
    "footer",
]
_INLINE = ["b", "i", "a", "span", "code", "em"]


@st.composite
def element(draw, depth=0):
    kind = draw(st.integers(0, 5 if depth < 3 else 1))
    if kind <= 1:
        return html_lib.escape(draw(_WORDS), quote=False)
    if kind == 2:
        tag = draw(st.sampled_from(_INLINE))
        return f"<{tag}>{html_lib.escape(draw(_WORDS), quote=False)}</{tag}>"
    if kind == 3:
        return draw(
            st.sampled_from(
                ["<script>var a='<p>x</p>';</script>", "<style>p{}</style>", "<br>", "<!-- hi -->", "<hr/>"]
            )
        )
    tag = draw(st.sampled_from(_BLOCK_TAGS))
    plain = ["", ' class="c"', ' id="i1"', " class='a b' id=z"]
    # furniture and landmark attributes on elements no sibling closes implicitly (BeautifulSoup's
    # html.parser tree nests <p><p> where HTML, and the chunker, close the first)
    attrs = draw(
        st.sampled_from(
            plain
            if tag in ("p", "li", "dt", "dd", "h1", "h2", "h3")
            else [
                *plain,
                ' role="main"',
                ' role="contentinfo"',
                ' class="footer"',
                ' class="wy-nav-content"',
                ' id="sidebar"',
                ' class="md-header"',
            ]
        )
    )
    inner = "".join(draw(st.lists(element(depth + 1), max_size=4)))
    return f"<{tag}{attrs}>{inner}</{tag}>"


@st.composite
def page(draw):
    body = "".join(draw(st.lists(element(), max_size=8)))
    prefix = draw(
        st.sampled_from(["", "<!DOCTYPE html>", '<?xml version="1.0" encoding="utf-8"?>\n', "\ufeff"])
    )
    wrap = draw(st.booleans())
    nl = draw(st.sampled_from(["\n", "\r\n"]))
    doc = f"{prefix}<html><head><title>T</title></head><body>{body}</body></html>" if wrap else prefix + body
    return doc.replace("\n", nl)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=page(), max_chars=st.integers(5, 300))
@example(
    doc="<li><aside><li></li>&lt;</aside></li>", max_chars=5
)  # a new <li> does not close the outer one through <aside>
def test_property_generated_pages_keep_every_visible_character_and_bounds(doc, max_chars):
    for keep in (False, True):
        chunks = chunk_html(doc, max_chars=max_chars, keep_boilerplate=keep)
        expected = visible(doc, keep_boilerplate=keep).replace("|", "").replace("\ufeff", "")
        assert squash(chunks) == expected
        if chunks:
            ok(chunks, doc, max_chars)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    doc=st.text(alphabet="<>/!-?abpdivhsecton =\"'&;#\n\r\t\ufeff", max_size=200),
    max_chars=st.integers(1, 100),
)
def test_property_random_markup_never_raises_and_spans_cover_the_page(doc, max_chars):
    chunks = chunk_html(doc, max_chars=max_chars)
    if chunks:
        ok(chunks, doc, max_chars)
    as_bytes = chunk_html(doc.encode("utf-8"), max_chars=max_chars)
    assert isinstance(as_bytes, list)


def _installed_html_files() -> list[str]:
    """HTML files shipped with the installed packages and the system docs."""
    from chunklab.datasets.corpora.code import site_package_dirs

    files: list[str] = []
    for root in [*site_package_dirs(), "/usr/share/doc"]:
        for dirpath, _dirs, names in os.walk(root):
            files += [os.path.join(dirpath, n) for n in names if n.endswith((".html", ".htm"))]
    return sorted(f for f in files if os.path.isfile(f))


def test_a_sample_of_installed_html_files_chunks_without_failure():
    files = _installed_html_files()[::12]
    assert files, "no HTML files found to test against"
    for path in files:
        with open(path, "rb") as fh:
            raw = fh.read()
        chunks = chunk_html(raw, path=path)
        if chunks:
            problems = check_chunks(chunks, decode_bytes(raw, "html").text, max_size=1500, html=True)
            assert problems == [], (path, problems[:3])


def slice_visible(source: str, chunk) -> str:
    """What an independent parser sees in the chunk's raw span, whitespace and cell bars removed."""
    return visible(source[chunk.start : chunk.end]).replace("|", "").replace("\ufeff", "")


def test_split_pieces_of_a_long_paragraph_have_exact_offsets_across_character_references():
    words = " ".join(f"w{i}&amp;x &lt;{i}&gt; caf&eacute;" for i in range(60))
    page = f"<html><body><section id='s'><h2>Long</h2><p>{words}</p></section></body></html>"
    chunks = chunk_html(page, max_chars=80)
    ok(chunks, page, 80)
    pieces = [c for c in chunks if c.metadata["kind"] == "split"]
    assert len(pieces) > 5
    for c in chunks:
        assert "split_offsets" not in c.metadata
        assert slice_visible(page, c) == "".join(c.text.split()).replace("|", "")
    for c in pieces[1:-1]:  # inner pieces: their span is exactly the raw text they came from
        raw = page[c.start : c.end]
        assert "<" not in raw and " ".join(html_lib.unescape(raw).split()) == c.text
        assert not raw.startswith(("amp;", "lt;", "gt;", "eacute;"))


def test_a_cut_never_falls_inside_a_reference_that_expands_to_two_characters():
    page = "<p>" + "&acE;" * 40 + "</p>"  # &acE; is two characters, the text has no spaces
    chunks = chunk_html(page, max_chars=5)
    ok(chunks, page, 5)
    assert "".join(c.text for c in chunks) == html_lib.unescape("&acE;") * 40
    for c in chunks:
        assert len(c.text) <= 5 and len(c.text) % 2 == 0
        assert html_lib.unescape(page[c.start : c.end].replace("<p>", "").replace("</p>", "")) == c.text
    tiny = chunk_html(page, max_chars=1)  # smaller than one reference: kept whole, marked oversize
    ok(tiny, page, 1)
    assert len(tiny) == 40 and all(c.metadata.get("oversize") and len(c.text) == 2 for c in tiny)
    assert all(page[c.start : c.end].replace("<p>", "").replace("</p>", "") == "&acE;" for c in tiny)


def test_crlf_and_lone_cr_line_endings_keep_exact_offsets():
    page = (
        "<html>\r\n<head><title>T</title></head>\r\n<body>\r\n"
        "<section id='a'>\r\n<h2>One</h2>\r\n<p>first\r\npara</p>\r\n</section>\r"
        "<section id='b'>\r<h2>Two</h2>\r<p>"
        + "long text &amp; more\r\n" * 30
        + "</p></section>\r\n</body></html>"
    )
    chunks = chunk_html(page, max_chars=120)
    ok(chunks, page, 120)
    a = next(c for c in chunks if c.metadata["id"] == "a")
    assert page[a.metadata["element_start"] :].startswith("<section id='a'>")
    assert page[a.start : a.end].endswith("</section>") and a.text == "One\nfirst para"
    b_first = next(c for c in chunks if c.metadata["id"] == "b")
    assert page[b_first.metadata["element_start"] :].startswith("<section id='b'>")
    for c in chunks:
        assert slice_visible(page, c) == "".join(c.text.split())
        assert c.metadata["line_start"] == page.count("\n", 0, c.start) + 1


def test_byte_order_mark_in_str_and_bytes_keeps_offsets_in_the_decoded_text():
    page = "\ufeff<section id='x'><h1>Title</h1><p>caf\u00e9 &amp; cr\u00e8me</p></section>"
    chunks = chunk_html(page)
    ok(chunks, page)
    assert chunks[0].text == "Title\ncaf\u00e9 & cr\u00e8me"
    assert page[chunks[0].metadata["element_start"] :].startswith("<section id='x'>")
    raw = page.encode("utf-8-sig")[3:]
    for data in (b"\xef\xbb\xbf" + raw, page.encode("utf-16")):
        decoded = decode_bytes(data, "html").text
        got = chunk_html(data)
        ok(got, decoded)
        assert got[0].text == chunks[0].text
        assert decoded[got[0].metadata["element_start"] :].startswith("<section id='x'>")


def test_malformed_markup_unclosed_and_stray_tags_keep_exact_spans():
    page = (
        "<div class='a'><p>one <b>bold<p>two</span></i>"
        "<div class='b'><ul><li>x<li>y</ul></p></p>stray</section>"
        "<h2>Next<p>under next</div></div><table><tr><td>c1<td>c2<tr><td>c3</table>"
    )
    chunks = chunk_html(page, max_chars=12)
    ok(chunks, page, 12)
    assert squash(chunks) == visible(page)
    for c in chunks:
        assert slice_visible(page, c) == "".join(c.text.split()).replace("|", "")
    starts = [c.start for c in chunks]
    assert starts == sorted(starts)
    assert all(a.end <= b.start for a, b in zip(chunks, chunks[1:]))


def test_xml_declaration_cdata_and_processing_instructions_are_not_text():
    page = (
        '<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html>\n'
        "<html><body><?php echo 1; ?><h1>Head</h1><![CDATA[ raw ]]><p>body &#169; 2024</p></body></html>"
    )
    chunks = chunk_html(page.encode("utf-8"))
    ok(chunks, page)
    assert [c.text for c in chunks] == ["Head\nbody \u00a9 2024"]
    assert (chunks[0].start, chunks[0].end) == (0, len(page))  # the declarations belong to the first chunk


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=page(), max_chars=st.integers(5, 120))
def test_property_every_chunk_span_holds_exactly_its_visible_text(doc, max_chars):
    # A span parsed alone has lost its ancestors, so whether a header or footer in it is page
    # furniture cannot be judged from the slice: compare slices with boilerplate kept, and the
    # default (boilerplate dropped) against the oracle on the whole page.
    for c in chunk_html(doc, max_chars=max_chars, keep_boilerplate=True):
        expected = visible(doc[c.start : c.end], keep_boilerplate=True).replace("|", "").replace("\ufeff", "")
        assert expected == "".join(c.text.split()).replace("|", "").replace("\ufeff", "")
    kept = "".join("".join(c.text.split()) for c in chunk_html(doc, max_chars=max_chars))
    assert kept.replace("|", "").replace("\ufeff", "") == visible(doc).replace("|", "").replace("\ufeff", "")


def test_references_without_semicolon_or_unknown_names_map_character_by_character():
    # "&notit;" reads as "\u00acit;" and "&copyright" as "\u00a9right"; "&unknown;" stays as written
    body = "&notit; &unknown; &copyright &amp;x " * 12
    page = f"<p>{body}</p>"
    for max_chars in (1, 3, 7, 12):
        chunks = chunk_html(page, max_chars=max_chars)
        ok(chunks, page, max_chars)
        assert all(len(c.text) <= max_chars and not c.metadata.get("oversize") for c in chunks)
        assert "".join(c.text for c in chunks).replace(" ", "") == html_lib.unescape(body).replace(" ", "")
        for c in chunks:
            raw = page[c.start : c.end].replace("<p>", "").replace("</p>", "")
            assert " ".join(html_lib.unescape(raw).split()) == c.text, (max_chars, raw, c.text)


def test_html_nav_header_footer_aside_boilerplate_dropped_by_default_and_kept_on_request():
    page = (
        "<html><body><header><a href='/'>Site name</a>"
        "<nav><a href='/a'>Alpha</a> <a href='/b'>Beta</a></nav></header>"
        "<div role='navigation'><ul><li>libffi</li><li>libc</li></ul></div>"
        "<main><article><header><h1>Real title</h1></header><p>The content people search for.</p>"
        "<footer>Article footnote.</footer></article><aside>Related links</aside></main>"
        "<footer>Copyright 2024</footer></body></html>"
    )
    chunks = chunk_html(page)
    ok(chunks, page)
    text = "\n".join(c.text for c in chunks)
    assert (
        text == "Real title\nThe content people search for.\nArticle footnote."
    )  # sectioned header/footer stay
    assert (chunks[0].start, chunks[-1].end) == (0, len(page.rstrip()))  # the markup is still covered
    kept = "\n".join(c.text for c in chunk_html(page, keep_boilerplate=True))
    for furniture in ("Site name", "Alpha", "libffi", "Related links", "Copyright 2024"):
        assert furniture in kept and furniture not in text
    assert squash(chunk_html(page, keep_boilerplate=True)) == visible(page, keep_boilerplate=True)


def test_permalink_markers_are_stripped_from_headings_and_their_paths():
    page = (
        "<h1>Guide<a class='headerlink' href='#guide' title='Permalink'>\u00b6</a></h1><p>Intro.</p>"
        "<h2 id='install'>Install <a href='#install'>#</a></h2><p>See <a href='#usage'>usage</a>.</p>"
        "<h2>Usage<a class='anchor' href='#usage'>\U0001f517</a></h2>"
        "<p>Call <a href='#install'>Install</a>.</p>"
    )
    chunks = chunk_html(page, max_chars=30)
    ok(chunks, page, 30)
    assert [c.metadata["headings"] for c in chunks] == [["Guide"], ["Guide", "Install"], ["Guide", "Usage"]]
    assert [c.text for c in chunks] == ["Guide\nIntro.", "Install\nSee usage.", "Usage\nCall Install."]


def test_structural_strategy_and_chunk_document_pass_keep_boilerplate():
    from chunklab.chunkers.catalog import get_strategy
    from chunklab.chunkers.structural import chunk_document
    from chunklab.documents import Document

    page = "<nav>Menu</nav><main><p>Body.</p></main>"
    doc = Document.from_text(page, doc_id="p.html", format="html")
    assert [c.text for c in get_strategy("structural")(doc)] == ["Body."]
    assert [c.text for c in get_strategy("structural", keep_boilerplate=True)(doc)] == ["Menu", "Body."]
    assert [c.text for c in chunk_document(page, format="html", keep_boilerplate=True)] == ["Menu", "Body."]


def test_a_marked_section_html_parser_cannot_read_falls_back_with_its_reason():
    chunks = chunk_html("<p>a<![foo[ x ]]>b</p>")
    assert chunks and chunks[0].metadata["fallback"] is True
    assert chunks[0].metadata["fallback_reason"].startswith("html.parser:")


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("recursive", {"size": 80}),
        ("recursive", {"size": 80, "overlap": 20}),
        ("fixed", {"size": 60}),
        ("paragraphs", {"max_chars": 60, "overlap_paragraphs": 0}),
        ("hierarchical", {"levels": (40, 10), "unit": "words"}),
    ],
)
def test_plain_text_strategies_on_html_chunk_the_visible_text_with_spans_on_the_markup(name, params):
    from chunklab.chunkers.catalog import get_strategy
    from chunklab.chunkers.structural.html import html_text_map
    from chunklab.documents import Document

    page = PAGE.replace("<p>Run", "<p>" + "Plain words to fill the budget. " * 8 + "Run")
    doc = Document.from_text(page, doc_id="page.html", format="html")
    chunks = get_strategy(name, **params)(doc)
    text, where = html_text_map(page)
    assert len(where) == len(text) + 1
    assert check_chunks(chunks, page, html=True) == []  # the spans cover the whole page
    for c in chunks:
        assert "<" not in c.text and "not real" not in c.text  # visible text, never markup or script
        assert text[c.metadata["visible_start"] : c.metadata["visible_end"]] == c.text
        assert c.start <= where[c.metadata["visible_start"]] < c.end
    leaves = [c for c in chunks if not c.metadata.get("child_ids")]
    if not params.get("overlap"):
        assert "".join("".join(c.text.split()) for c in leaves if c.level in (None, 1)) == "".join(
            text.split()
        )
    ids = {c.id for c in chunks}
    assert all(c.metadata["parent_id"] in ids for c in chunks if c.metadata.get("parent_id"))
    assert all(set(c.metadata["child_ids"]) <= ids for c in chunks if c.metadata.get("child_ids"))
