"""Build one edition of the book with Jupyter Book's own configuration, or its message templates.

Usage (``make book-es`` and ``make catalogs`` call it)::

    python scripts/book_edition.py --language es            # the Spanish edition: _build/html-es
    python scripts/book_edition.py --language es --other-edition-url https://example.org/en/
    python scripts/book_edition.py --builder gettext --out _build/gettext   # .pot templates

``_config.yml`` and ``_toc.yml`` are read exactly as ``jupyter-book build`` reads them; only
what differs per edition is overridden: ``language``, the catalogs (``locale_dirs``, one
catalog per page), and the build's own folders. A translated edition executes its chapters
again (their figure labels and glued numbers are in its language: ``_ext/chunklab_book.py``
hands the language to the kernels), so it has its own execution cache
(``_build/.jupyter_cache-es``) and doctrees: building it never touches the English build.
The ``gettext`` builder runs with execution off, which takes seconds; the figure and table
captions kept in code-cell metadata are extracted all the same (see ``_ext/chunklab_book.py``).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "_build"
LOCALE_DIR = "locales"
#: the languages the book is translated into (English is the source language)
TRANSLATIONS = ("es",)
#: the author line of each translation (English: ``author`` in _config.yml)
AUTHORS = {"es": "el equipo de ChunkLab"}


def edition_overrides(language: str) -> dict[str, Any]:
    """The Sphinx settings that make ``language``'s edition out of the English configuration."""
    if language != "en" and language not in TRANSLATIONS:
        raise ValueError(f"language must be 'en' or one of {TRANSLATIONS}, not {language!r}")
    overrides: dict[str, Any] = {
        "language": language,
        "locale_dirs": [f"{LOCALE_DIR}/"],
        "gettext_compact": False,
    }
    if language != "en":
        overrides["nb_execution_cache_path"] = str(BUILD / f".jupyter_cache-{language}")
        overrides["author"] = AUTHORS[language]  # the footer reads "By {author}", translated
    return overrides


def default_outdir(language: str, builder: str) -> Path:
    """Where a build goes: ``_build/html`` (English), ``_build/html-es``, ``_build/gettext``."""
    if builder == "gettext":
        return BUILD / "gettext"
    return BUILD / ("html" if language == "en" else f"html-{language}")


def build(
    language: str = "es",
    *,
    builder: str = "html",
    outdir: Path | None = None,
    doctreedir: Path | None = None,
    overrides: dict[str, Any] | None = None,
    warnings_are_errors: bool = True,
    quiet: bool = False,
    fresh: bool = False,
) -> int:
    """Build ``language``'s edition with ``builder``; return Sphinx's exit status (0: success).

    ``builder="gettext"`` writes the message templates without executing a chapter.
    ``quiet`` silences Sphinx's progress and its warnings; ``fresh`` re-reads every page
    (executions still come from the cache).
    """
    if builder not in ("html", "gettext"):
        raise ValueError(f"builder must be 'html' or 'gettext', not {builder!r}")
    from jupyter_book.cli.main import builder_specific_actions
    from jupyter_book.sphinx import build_sphinx

    outdir = Path(outdir) if outdir is not None else default_outdir(language, builder)
    if doctreedir is None:
        suffix = "gettext" if builder == "gettext" else language
        doctreedir = (BUILD if outdir.parent == BUILD else outdir.parent) / f".doctrees-{suffix}"
    settings: dict[str, Any] = {
        "external_toc_path": (ROOT / "_toc.yml").as_posix(),
        "latex_individualpages": False,
        **edition_overrides(language),
    }
    if builder == "gettext":
        settings["nb_execution_mode"] = "off"
    settings.update(overrides or {})
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    result = build_sphinx(
        ROOT,
        outdir,
        use_external_toc=True,
        noconfig=True,
        path_config=str(ROOT / "_config.yml"),
        confoverrides=settings,
        doctreedir=doctreedir,
        builder=builder,
        warningiserror=warnings_are_errors,
        keep_going=warnings_are_errors,
        quiet=quiet,
        really_quiet=quiet,
        freshenv=fresh,
    )
    if isinstance(result, Exception):
        print(f"the {language} {builder} build failed: {result!r}", file=sys.stderr)
        return 1
    if result == 0 and builder == "html":
        builder_specific_actions(result, "html", outdir, "book", None, print)  # the redirecting index.html
    return int(result)


def main(argv: list[str] | None = None) -> int:
    """Command line: build one edition (or the templates); return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--language", default="es", help="en, or a translation: " + ", ".join(TRANSLATIONS))
    parser.add_argument("--builder", default="html", choices=["html", "gettext"])
    parser.add_argument("--out", type=Path, default=None, help="output folder (default: _build/html-LANG)")
    parser.add_argument(
        "--other-edition-url",
        default="",
        help="root of the other edition for the language switch (default: the sibling build folder)",
    )
    parser.add_argument("--all", action="store_true", help="re-read every page (executions stay cached)")
    parser.add_argument("--no-warnings-as-errors", action="store_true")
    args = parser.parse_args(argv)
    overrides = {"chunklab_other_edition_url": args.other_edition_url} if args.other_edition_url else {}
    return build(
        args.language,
        builder=args.builder,
        outdir=args.out,
        overrides=overrides,
        warnings_are_errors=args.builder == "html" and not args.no_warnings_as_errors,
        fresh=args.all,
    )


if __name__ == "__main__":
    sys.exit(main())
