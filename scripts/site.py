"""Assemble the published site from the two built editions: ``site/en/``, ``site/es/`` and a landing page.

Usage (``make site`` builds both editions first, then calls this)::

    python scripts/site.py                      # _build/html + _build/html-es -> site/
    python scripts/site.py --out /tmp/site --check

Each edition is built with its language switch pointing at the sibling build folder
(``../html-es/…`` ↔ ``../html/…``); in the site the folders are ``en/`` and ``es/``, still
siblings, so only that prefix of the switch links changes. The landing page sends a visitor to
the edition of the browser's preferred language (English otherwise) and lists both for readers
without JavaScript. ``--check`` (and :func:`check_site`) verifies that both editions are there and
that every language-switch link resolves to a page inside the site.
"""

from __future__ import annotations

import argparse
import html
import re
import shutil
import sys
from pathlib import Path
from urllib.parse import urldefrag

ROOT = Path(__file__).resolve().parent.parent
#: site folder -> (built edition folder, the language's name in itself)
EDITIONS = {"en": ("_build/html", "English"), "es": ("_build/html-es", "Español")}
#: the switch link, as the book's template writes it (_ext/templates/chunklab-language-switch.html)
SWITCH = re.compile(r'(<a class="[^"]*\bchunklab-language-switch\b[^"]*" href=")([^"]+)(")')


def assemble(out: Path, editions: dict[str, Path] | None = None) -> Path:
    """Copy the editions into ``out/<lang>/``, point their switch links at each other, add a landing page."""
    sources = editions or {lang: ROOT / folder for lang, (folder, _) in EDITIONS.items()}
    missing = [str(path) for path in sources.values() if not (path / "index.html").is_file()]
    if missing:
        raise FileNotFoundError(f"build the editions first (make book book-es): no index.html in {missing}")
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    built_names = {Path(EDITIONS[lang][0]).name: lang for lang in sources}
    for lang, source in sources.items():
        shutil.copytree(source, out / lang, ignore=shutil.ignore_patterns(".buildinfo", ".doctrees"))
        for page in (out / lang).rglob("*.html"):
            text = page.read_text(encoding="utf-8")
            fixed = SWITCH.sub(lambda m: m.group(1) + _site_href(m.group(2), built_names) + m.group(3), text)
            if fixed != text:
                page.write_text(fixed, encoding="utf-8")
    (out / "index.html").write_text(landing_page(list(sources)), encoding="utf-8")
    (out / ".nojekyll").write_text("")  # GitHub Pages: serve folders that start with "_" as they are
    return out


def _site_href(href: str, built_names: dict[str, str]) -> str:
    """``../html-es/chapters/x.html`` -> ``../es/chapters/x.html``: the sibling folder's site name."""
    parts = href.split("/")
    for i, part in enumerate(parts):
        if part != "..":
            if part in built_names:
                parts[i] = built_names[part]
            break
    return "/".join(parts)


def landing_page(languages: list[str]) -> str:
    """The site's index: the browser's preferred language, else English; plain links without JavaScript."""
    links = "\n".join(
        f'    <li><a href="{lang}/index.html" hreflang="{lang}" lang="{lang}">'
        f"{html.escape(EDITIONS[lang][1])}</a></li>"
        for lang in languages
    )
    known = ", ".join(f'"{lang}"' for lang in languages)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>ChunkLab</title>
  <script>
    (function () {{
      var known = [{known}];
      var wanted = (navigator.languages || [navigator.language || "en"]);
      for (var i = 0; i < wanted.length; i++) {{
        var code = String(wanted[i]).slice(0, 2).toLowerCase();
        if (known.indexOf(code) >= 0) {{ window.location.replace(code + "/index.html"); return; }}
      }}
      window.location.replace("en/index.html");
    }})();
  </script>
</head>
<body>
  <h1>ChunkLab — chunking for retrieval-augmented generation</h1>
  <ul>
{links}
  </ul>
</body>
</html>
"""


def check_site(site: Path) -> list[str]:
    """Problems with an assembled site: a missing edition, a switch link that leaves the site or 404s."""
    problems = []
    site = site.resolve()
    for lang in EDITIONS:
        if not (site / lang / "index.html").is_file():
            problems.append(f"{lang}/index.html is missing")
    if not (site / "index.html").is_file():
        problems.append("index.html (the landing page) is missing")
    for page in sorted(site.rglob("*.html")):
        for match in SWITCH.finditer(page.read_text(encoding="utf-8")):
            href = urldefrag(match.group(2)).url
            target = (page.parent / href).resolve()
            rel = page.relative_to(site)
            if "://" in href or href.startswith("/"):
                problems.append(f"{rel}: the language switch leaves the site ({href})")
            elif not target.is_relative_to(site) or not target.is_file():
                problems.append(f"{rel}: the language switch points at {href}, which is not in the site")
    return problems


def main(argv: list[str] | None = None) -> int:
    """Assemble ``site/`` (or ``--out``) from the built editions; ``--check`` verifies it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "site", help="the site folder (default: site/)")
    parser.add_argument("--check", action="store_true", help="verify the assembled site")
    args = parser.parse_args(argv)
    try:
        site = assemble(args.out)
    except FileNotFoundError as exc:
        print(f"site: {exc}", file=sys.stderr)
        return 2
    pages = sum(1 for _ in site.rglob("*.html"))
    print(f"site assembled in {site}: {pages} pages, editions {', '.join(EDITIONS)}")
    if args.check:
        problems = check_site(site)
        for problem in problems:
            print(f"site: {problem}", file=sys.stderr)
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
