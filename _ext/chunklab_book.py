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
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms import SphinxTransform
from sphinx.writers.html5 import HTML5Translator

TABLE_PREFIX = "tbl-"


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
    config.html_theme_options = options


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the table node, the transform and the configuration hook."""
    app.add_enumerable_node(table_figure, "table", html=(_visit, _depart))
    app.add_transform(TablesAreTables)
    app.connect("config-inited", _config_inited)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
