"""Page furniture of documentation sites, recognised by structure rather than one theme's class name.

Sphinx, MkDocs, Docusaurus, Javadoc and pdoc pages wrap the same article in the same
furniture: a top bar, navigation sidebars, breadcrumbs, an "on this page" table of contents,
previous/next links and a copyright footer. Each generator names them differently
(``div.footer`` with ``role="contentinfo"`` in Sphinx, ``footer.md-footer`` in MkDocs Material,
``aside.theme-doc-sidebar-container`` in Docusaurus, ``div.sub-nav`` in Javadoc), but they
share three signals, used here in this order:

1. the element: ``nav`` and ``aside``; ``header`` and ``footer`` outside sectioning content;
2. its ARIA landmark role: navigation, banner, contentinfo, complementary, search, ...;
3. the words of its ``class`` and ``id`` (split at ``-``, ``_`` and spaces): ``footer``,
   ``sidebar``, ``breadcrumbs``, ``toc``, ... (``header``, and any id word, only outside sectioning
   content, where an id is a slug of a title; never on paragraphs, items, cells or headings);
   ``nav`` beside a word naming content is not (``wy-nav-content`` is Read the Docs' article).

A page with exactly one main landmark (``<main>`` or ``role="main"``) keeps only what is
inside it: whatever a theme puts around the article is furniture by construction.
"""

from __future__ import annotations

import re

__all__ = ["has_one_main_landmark", "is_furniture", "is_main_landmark"]

#: ARIA landmark (and DPUB) roles that mark page furniture
FURNITURE_ROLES = frozenset(
    {"navigation", "banner", "contentinfo", "complementary", "search", "menubar", "toolbar", "doc-toc"}
)
#: class/id words naming furniture in the common generators' themes
FURNITURE_WORDS = frozenset(
    {
        "footer",
        "sidebar",
        "sphinxsidebar",
        "sphinxsidebarwrapper",
        "sidenav",
        "navbar",
        "nav",
        "navigation",
        "topnav",
        "subnav",
        "breadcrumb",
        "breadcrumbs",
        "related",
        "menu",
        "pagination",
        "paginator",
        "copyright",
        "legal",
        "toc",
    }
)
#: furniture named by several words together
FURNITURE_PHRASES = (
    "table-of-contents",
    "on-this-page",
    "edit-this-page",
    "skip-link",
    "skip-to-content",
    "prev-next",
)
#: words that name a page header: furniture only outside sectioning content, like <header>
HEADER_WORDS = frozenset({"header", "masthead", "topbar"})
#: a word that names the content column itself vetoes "nav" beside it (``wy-nav-content``)
CONTENT_WORDS = frozenset({"content", "main", "body", "article", "document", "markdown"})
_NAV_ONLY = frozenset({"nav", "navigation"})

_WORD = re.compile(r"[-_\s]+")
_MAIN_TAG = re.compile(r"<main(?=[\s>/])([^>]*)", re.I)
_MAIN_ROLE = re.compile(r"""\brole\s*=\s*["']?main\b""", re.I)


def has_one_main_landmark(html: str) -> bool:
    """Whether the page marks exactly one element as its main content (``<main>`` or ``role="main"``)."""
    tags = _MAIN_TAG.findall(html)  # the attributes of each <main> tag
    roles = len(_MAIN_ROLE.findall(html)) - sum(1 for attrs in tags if _MAIN_ROLE.search(attrs))
    return len(tags) + roles == 1


#: elements a sibling closes implicitly (``<p>``, list items, rows, cells, headings): never a landmark
_IMPLIED_END = frozenset({"p", "li", "dt", "dd", "tr", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6"})


#: the page and its sections: their ids are slugs of titles, their classes the writer's
_CONTAINERS = frozenset({"html", "body", "section", "article"})


def is_main_landmark(tag: str, role: str | None) -> bool:
    """Whether this element is the page's main landmark."""
    if tag == "main":
        return True
    return tag not in _IMPLIED_END and role is not None and "main" in role.lower().split()


def is_furniture(tag: str, role: str | None, cls: str | None, id_: str | None, in_section: bool) -> bool:
    """Whether an element is page furniture; ``in_section``: it has a sectioning ancestor."""
    if role and not FURNITURE_ROLES.isdisjoint(role.lower().split()):
        return True
    if tag in ("nav", "aside"):
        return True
    if tag in ("header", "footer") and not in_section:
        return True
    if tag in _IMPLIED_END or tag in _CONTAINERS:  # content by its kind, whatever its class or id
        return False
    # an id inside the content is usually a slug of its title (<section id="navigation">)
    names = f"{cls or ''} {'' if in_section else id_ or ''}".lower()
    if not names.strip():
        return False
    words = set(_WORD.split(names))
    if "section" in words:  # the sectioning div of HTML 4 writers (``div.section#navigation``)
        return False
    hits = FURNITURE_WORDS & words
    if hits and hits <= _NAV_ONLY and not CONTENT_WORDS.isdisjoint(words):
        return False
    if hits or any(p in names for p in FURNITURE_PHRASES):
        return True
    return not in_section and not HEADER_WORDS.isdisjoint(words)
