"""The HTML element tables the scanner (:mod:`chunklab.chunkers.structural.html.scan`) works from.

Which elements open blocks, which are void, skipped, page furniture or sectioning, and
what a heading's permalink anchor shows: data, kept apart from the parser that reads it; and
the :class:`Block` of visible text the scanner records.
"""

from __future__ import annotations

SEMANTIC = frozenset({"section", "article", "main", "aside", "nav"})
HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
SKIP = frozenset({"script", "style", "template", "noscript", "head"})
VOID = frozenset(
    {
        "area",
        "base",
        "br",
        "col",
        "embed",
        "hr",
        "img",
        "input",
        "link",
        "meta",
        "param",
        "source",
        "track",
        "wbr",
        "keygen",
        "command",
        "basefont",
        "frame",
        "isindex",
    }
)
BLOCK = frozenset(
    {
        "address",
        "article",
        "aside",
        "blockquote",
        "body",
        "caption",
        "center",
        "dd",
        "details",
        "dialog",
        "dir",
        "div",
        "dl",
        "dt",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "hgroup",
        "hr",
        "html",
        "legend",
        "li",
        "main",
        "menu",
        "nav",
        "ol",
        "p",
        "pre",
        "section",
        "summary",
        "table",
        "tbody",
        "tfoot",
        "thead",
        "tr",
        "ul",
        "title",
        "listing",
        "xmp",
        "plaintext",
        "frameset",
        "option",
        "select",
        "textarea",
        "button",
    }
)
#: HTML5's "special" elements a new <li>, <dt> or <dd> does not close its open sibling through
LIST_ITEM_BARRIERS = BLOCK - {"address", "div", "p", "li", "dt", "dd"}
CELLS = frozenset({"td", "th"})
TRACKED = BLOCK | CELLS  # the elements kept on the stack of open elements
NOTICED = TRACKED | SKIP | {"title", "br"}  # the start tags the scanner acts on
#: page furniture dropped unless asked to keep it (header/footer only outside a sectioning element)
BOILERPLATE = frozenset({"nav", "aside", "header", "footer"})
SECTIONING = frozenset({"article", "section", "main", "aside", "nav"})
#: what a heading's permalink anchor shows ("¶" in Sphinx, "#" in many themes)
PERMALINK_MARKS = frozenset({"", "#", "\u00b6", "\u00a7", "\U0001f517", "\u2693", "link", "permalink"})
HEAD_ONLY = frozenset({"title", "meta", "link", "style", "script", "base", "noscript", "template", "head"})


class Block:
    __slots__ = (
        "start",
        "end",
        "text",
        "tag",
        "id",
        "strength",
        "opener",
        "heading",
        "headings",
        "pre",
        "parts",
        "where",
    )

    def __init__(self, start, end, text, tag, id_, strength, opener, heading, headings, pre, parts, where):
        self.start = start
        self.end = end
        self.text = text
        self.tag = tag
        self.id = id_
        self.strength = strength
        self.opener = opener
        self.heading = heading
        self.headings = headings
        self.pre = pre
        self.parts = parts  # the strings that make up the text, before normalization
        self.where = where  # per part: its raw offset, or ~offset (negative) for an inserted separator
