"""Sphinx extension of the ChunkLab book (loaded from _config.yml: sphinx.local_extensions).

Three small jobs that Jupyter Book 1's configuration cannot express:

- **Tables are numbered and captioned as tables.** A computed table is a code cell whose
  ``mystnb.figure`` name starts with ``tbl-``; myst-nb wraps its output in a figure node. This
  extension turns those nodes into :class:`table_figure` nodes, registered as enumerable with
  the figure type ``table``, so the caption reads "Table 3.2" (caption above the table) and
  ``{numref}`` says "Table", while the cell's output is rendered exactly as before.
- **Launch links only when there is a repository.** ``repository.url`` in ``_config.yml`` is
  the one setting: when it is empty, the launch buttons and the repository button are removed;
  when it is set, the repository button is shown, and the chapters (MyST ``.md``, which Colab
  cannot open) keep Binder but not Colab.
- **One top bar.** pydata-sphinx-theme's persistent navbar search box duplicates the book
  theme's own: ``navbar_persistent`` is emptied.

And the glue of the two editions (English, and Spanish from ``locales/es/LC_MESSAGES``):

- **The build's language reaches the chapters**: ``CHUNKLAB_LANG`` is set from Sphinx's
  ``language`` before any chapter executes, so :mod:`chunklab.book.labels` gives the kernels the
  edition's figure labels and number format; numbered captions read "Tabla 3.2" in Spanish.
- **A language switch**: every page links to the same page of the other edition ("Español"
  on English pages, "English" on Spanish ones), in the article header. The other edition's
  root is ``chunklab_other_edition_url`` (or the environment variable
  ``CHUNKLAB_OTHER_EDITION_URL``): by default the sibling build folder (``_build/html`` ↔
  ``_build/html-es``), so the link works served side by side and opened as files.
- **Glued values in translated messages**: myst-nb resolves ``{glue:text}``/``{glue:md}``
  through the notebook renderer it keeps on the page's document while parsing, and drops it
  after; Sphinx parses each translated message as a document of its own, later. The parser
  below keeps that renderer for the page and lends it to the page's translated messages, so a
  Spanish sentence shows the same glued numbers as the English one.
- **Exercise titles in the catalogs**: sphinx-exercise builds a title without a source, which
  Sphinx neither extracts nor translates; the title gets its page as source.
- **Part captions translated**: the toctrees of ``_toc.yml`` are inserted after Sphinx has
  translated the page, so their captions are translated here from the same catalog.
- **Captions in the catalogs**: a computed figure's caption lives in its code cell's metadata
  and becomes a node only when the cell has outputs. The catalogs are extracted without
  executing the chapters, so the ``gettext`` builder gets each such caption as a node of its
  own (exactly as myst-nb would parse it), and the Spanish build translates it like a paragraph.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.io import StringInput
from myst_nb.sphinx_ import Parser as NotebookParser
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.io import SphinxI18nReader
from sphinx.locale import init as init_locale
from sphinx.transforms import SphinxTransform
from sphinx.util import get_filetype
from sphinx.util.i18n import docname_to_domain
from sphinx.writers.html5 import HTML5Translator

TABLE_PREFIX = "tbl-"
#: the environment variable that tells the executing chapters the build's language
LANGUAGE_ENV = "CHUNKLAB_LANG"
#: where the other edition is published, when ``chunklab_other_edition_url`` is not set
OTHER_EDITION_ENV = "CHUNKLAB_OTHER_EDITION_URL"
#: what differs per edition besides the catalogs: the other edition, the link to it, and for a
#: translated edition the book's title and the numbered-caption prefixes (``numfig_format``;
#: the English ones are _config.yml's).
EDITIONS: dict[str, dict[str, Any]] = {
    "en": {
        "other": "es",
        "other_root": "../html-es/",
        "link_text": "English",
    },
    "es": {
        "other": "en",
        "other_root": "../html/",
        "link_text": "Español",
        "title": "ChunkLab: troceado para la generación aumentada por recuperación",
        "numfig_format": {
            "figure": "Fig. %s",
            "table": "Tabla %s",
            "code-block": "Listado %s",
            "section": "Sección %s",
        },
    },
}
SWITCH_TEMPLATE = "chunklab-language-switch.html"
#: where myst-nb keeps a page's notebook renderer (for glue roles) on its document
RENDERER_KEY = "nb_renderer"


class table_figure(nodes.figure):  # noqa: N801 (docutils node classes are lower case)
    """A captioned computed table: rendered like a figure, numbered as a table."""


def _visit(self: HTML5Translator, node: table_figure) -> None:
    node["classes"] = [*node.get("classes", []), "chunklab-table"]
    self.visit_figure(node)


def _depart(self: HTML5Translator, node: table_figure) -> None:
    self.depart_figure(node)


class TablesAreTables(SphinxTransform):
    """Replace figure nodes named ``tbl-...`` by :class:`table_figure`, caption first."""

    default_priority = 200  # before labels and numbers are collected

    def apply(self, **kwargs: Any) -> None:
        for fig in list(self.document.findall(nodes.figure)):
            if isinstance(fig, table_figure):
                continue
            if not any(str(i).startswith(TABLE_PREFIX) for i in fig.get("ids", [])):
                continue
            table = table_figure(fig.rawsource, **fig.attributes)
            captions = [c for c in fig.children if isinstance(c, nodes.caption)]
            rest = [c for c in fig.children if not isinstance(c, nodes.caption)]
            # docutils closes <figcaption> only when the caption is the figure's last child:
            # a caption placed first needs its closing tag right after it.
            close = [nodes.raw("", "</figcaption>\n", format="html")] if captions else []
            table.extend(captions + close + rest)
            table.source, table.line = fig.source, fig.line
            fig.replace_self(table)
            for node_id in table["ids"]:  # labels resolve through document.ids
                self.document.ids[node_id] = table


class CaptionsForCatalogs(SphinxTransform):
    """For the ``gettext`` builder: give each captioned code cell without outputs its caption.

    myst-nb builds a cell's figure and caption (from ``mystnb: figure: caption:``) only around
    outputs, and the catalogs are extracted without executing the chapters. The caption is
    parsed the way myst-nb parses it (MyST, first paragraph = caption, the rest = legend), so
    its message is the one the executed Spanish build looks up.
    """

    default_priority = 15  # after parsing, before anything reads messages

    def apply(self, **kwargs: Any) -> None:
        if self.app.builder.name != "gettext":
            return
        for cell in list(self.document.findall(nodes.container)):
            if cell.get("nb_element") != "cell_code" or next(cell.findall(nodes.figure), None):
                continue
            figure = ((cell.get("cell_metadata") or {}).get("mystnb") or {}).get("figure")
            caption = str(figure.get("caption") or "") if isinstance(figure, dict) else ""
            if caption.strip():
                cell += self._caption_figure(caption, cell.line or 0)

    def _caption_figure(self, text: str, line: int) -> nodes.figure:
        source = self.document["source"]
        reader = SphinxI18nReader()
        reader.setup(self.app)
        parser = self.app.registry.create_source_parser(
            self.app, get_filetype(self.config.source_suffix, source)
        )
        parsed = reader.read(
            source=StringInput(source=text, source_path=f"{source}:{line}:<translated>"),
            parser=parser,
            settings=self.document.settings,
        )
        figure = nodes.figure()
        figure.source, figure.line = source, line
        blocks = list(parsed.children)
        if blocks and isinstance(blocks[0], nodes.paragraph):
            first = blocks.pop(0)
            caption = nodes.caption(first.rawsource, "", *first.children)
            caption.source, caption.line = source, line
            figure += caption
        for block in blocks:  # the legend: its paragraphs are messages too
            for para in block.findall(nodes.TextElement):
                para.source, para.line = source, line
        if blocks:
            figure += nodes.legend("", *blocks)
        return figure


def _language_code(language: str | None) -> str:
    """The edition's language code: ``es`` for ``es``/``es_ES``, ``en`` when unset or unknown."""
    code = (language or "en").replace("-", "_").split("_")[0].lower()
    return code if code in EDITIONS else "en"


class _KeepsRenderer(dict):
    """A document's attributes that remember myst-nb's renderer when myst-nb removes it."""

    kept: Any = None

    def pop(self, key: str, *default: Any) -> Any:
        value = super().pop(key, *default)
        if key == RENDERER_KEY:
            self.kept = value
        return value


class TranslatableNotebookParser(NotebookParser):
    """myst-nb's parser, whose glued values also reach the page's translated messages."""

    def parse(self, inputstring: str, document: nodes.document) -> None:
        env = document.settings.env
        if not document.current_source.endswith("<translated>"):
            attributes = _KeepsRenderer(document.attributes)
            document.attributes = attributes
            try:
                super().parse(inputstring, document)
            finally:
                document.attributes = dict(attributes)
            if attributes.kept is not None:
                env.temp_data[RENDERER_KEY] = attributes.kept  # lives while this page is read
            return
        renderer = env.temp_data.get(RENDERER_KEY)
        if renderer is not None:
            document.attributes[RENDERER_KEY] = renderer
        try:
            super().parse(inputstring, document)
        finally:
            document.attributes.pop(RENDERER_KEY, None)


class ExerciseTitlesAreMessages(SphinxTransform):
    """Make an exercise's own title (``{exercise} Token windows``) a translatable message.

    sphinx-exercise translates its "Exercise" label itself, but builds the title after it
    from the directive's argument without a source, and Sphinx extracts and translates only
    nodes that have one: the title gets its page as source and its text as message. For the
    ``gettext`` builder, which extracts after sphinx-exercise has rebuilt the title, the
    message is also kept in a paragraph of its own.
    """

    default_priority = 15  # before the Locale transform (20) replaces messages

    def apply(self, **kwargs: Any) -> None:
        for subtitle in list(self.document.findall(nodes.subtitle)):
            if type(subtitle).__name__ != "exercise_subtitle" or subtitle.source:
                continue
            if not all(isinstance(child, nodes.Text) for child in subtitle.children):
                continue  # a title with inline markup: its MyST source is not known here
            subtitle.rawsource = subtitle.astext()
            subtitle.source = self.document["source"]
            exercise = subtitle.parent.parent if subtitle.parent is not None else None
            subtitle.line = getattr(exercise, "line", None) or 0
            if self.app.builder.name == "gettext" and exercise is not None:
                message = nodes.paragraph(subtitle.rawsource, subtitle.rawsource)
                message.source, message.line = subtitle.source, subtitle.line
                exercise += message


class TranslateTocCaptions(SphinxTransform):
    """Translate the part captions of ``_toc.yml`` ("The strategies" -> "Las estrategias").

    sphinx-external-toc inserts the toctrees after Sphinx's Locale transform has run, so
    their captions are extracted into the root page's catalog but never translated; this
    applies the same catalog to them, the way Locale translates a toctree.
    """

    default_priority = 101  # right after sphinx-external-toc's InsertToctrees (100)

    def apply(self, **kwargs: Any) -> None:
        if _language_code(self.config.language) == "en":
            return
        toctrees = [n for n in self.document.findall(addnodes.toctree) if not n.get("translated")]
        if not toctrees:
            return
        domain = docname_to_domain(self.env.docname, self.config.gettext_compact)
        dirs = [str(Path(self.env.srcdir, d)) for d in self.config.locale_dirs]
        catalog, found = init_locale(dirs, self.config.language, domain)
        if not found:
            return
        for toctree in toctrees:
            for message in toctree.extract_original_messages():
                translated = catalog.gettext(message)
                if translated and translated != message:
                    toctree.apply_translated_message(message, translated)
            toctree["translated"] = True


def _edition(language: str | None) -> dict[str, Any]:
    """The edition settings of ``language``."""
    return EDITIONS[_language_code(language)]


def _edition_config_inited(app: Sphinx, config: Any) -> None:
    """Apply the edition's settings, and hand its language to the chapters' kernels."""
    edition = _edition(config.language)
    os.environ[LANGUAGE_ENV] = _language_code(config.language)
    config.chunklab_other_edition_url = (
        config.chunklab_other_edition_url
        or os.environ.get(OTHER_EDITION_ENV, "").strip()
        or edition["other_root"]
    )
    if "numfig_format" in edition:
        config.numfig_format = {**dict(config.numfig_format or {}), **edition["numfig_format"]}
    if "title" in edition:
        config.html_title = edition["title"]
    templates = str(Path(__file__).with_name("templates"))
    if templates not in config.templates_path:
        config.templates_path = [*config.templates_path, templates]


def _config_inited(app: Sphinx, config: Any) -> None:
    options = dict(config.html_theme_options or {})
    repository = str(options.get("repository_url") or "").strip()
    if not repository:
        options.pop("launch_buttons", None)
        options.pop("repository_url", None)
        options["use_repository_button"] = False
    else:
        options["use_repository_button"] = True
        # The chapters are MyST Markdown: Colab cannot open a .md, so the chapters offer Binder
        # (which reads MyST through jupytext) and the exercises page links Colab to .ipynb files.
        launch = dict(options.get("launch_buttons") or {})
        launch.pop("colab_url", None)
        options["launch_buttons"] = launch
    options["navbar_persistent"] = []
    header_end = options.get("article_header_end") or ["article-header-buttons.html"]
    if isinstance(header_end, str):
        header_end = [part.strip() for part in header_end.split(",") if part.strip()]
    if SWITCH_TEMPLATE not in header_end:
        options["article_header_end"] = [SWITCH_TEMPLATE, *header_end]
    config.html_theme_options = options


def other_edition_href(pagename: str, other_root: str) -> str:
    """The link from page ``pagename`` to the same page of the edition rooted at ``other_root``.

    A relative ``other_root`` is taken from this edition's root (``../html-es/``: the sibling
    build folder), so the link climbs out of the page's folders first; an absolute one (a URL,
    or a path starting with ``/``) is used as it is.
    """
    if not other_root:
        raise ValueError("other_root must not be empty")
    root = other_root if other_root.endswith("/") else other_root + "/"
    if "://" not in root and not root.startswith("/"):
        root = "../" * pagename.count("/") + root
    return f"{root}{pagename}.html"


def _page_context(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """Give the page template the link to the same page in the other edition."""
    edition = _edition(app.config.language)
    other = EDITIONS[edition["other"]]
    root = app.config.chunklab_other_edition_url or edition["other_root"]  # set at config-inited
    context["chunklab_other_edition"] = {
        "href": other_edition_href(pagename, root),
        "text": other["link_text"],
        "lang": edition["other"],
    }


def _unique_scripts(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """Each script once: sphinx-thebe adds its inline ``const THEBE_JS_URL = ...`` again every time
    the environment reads documents, and a second ``const`` is a console error on every page."""
    seen: set[tuple[str, str]] = set()
    unique = []
    for script in context.get("script_files", []):  # added twice: filename None, then ""
        key = (
            str(getattr(script, "filename", script) or ""),
            str(sorted(getattr(script, "attributes", {}).items())),
        )
        if key not in seen:
            seen.add(key)
            unique.append(script)
    context["script_files"] = unique


def _separate_outputs(app: Sphinx) -> None:
    """Each edition writes its executed notebooks to its own folder (``jupyter_execute-es``), the
    templates build to ``jupyter_execute-gettext``."""
    config = getattr(app.env, "mystnb_config", None)
    language = _language_code(app.config.language)
    # the message templates (gettext, nothing executed) must not overwrite the executed notebooks
    suffix = "gettext" if app.builder.name == "gettext" else language
    if config is None or suffix == "en":
        return
    folder = Path(config.output_folder)
    app.env.mystnb_config = config.copy(output_folder=str(folder.with_name(f"{folder.name}-{suffix}")))


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the table node, the transforms, the edition settings and the language switch."""
    app.add_config_value("chunklab_other_edition_url", "", "html", [str])
    app.add_enumerable_node(table_figure, "table", html=(_visit, _depart))
    app.add_transform(TablesAreTables)
    app.add_transform(CaptionsForCatalogs)
    app.add_transform(ExerciseTitlesAreMessages)
    app.add_transform(TranslateTocCaptions)
    app.add_source_parser(TranslatableNotebookParser, override=True)
    app.connect("config-inited", _config_inited)
    app.connect("config-inited", _edition_config_inited)
    app.connect("builder-inited", _separate_outputs, priority=900)  # after myst-nb's own
    app.connect("html-page-context", _page_context)
    app.connect("html-page-context", _unique_scripts, priority=999)  # after every handler that adds scripts
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
