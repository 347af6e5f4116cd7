"""Render the built book's pages in headless Chromium and save PNG screenshots outside the repo.

Usage (after ``make book``)::

    python scripts/screenshots.py                  # intro, every chapter, the exercises page
    python scripts/screenshots.py --tiles          # whole pages, cut into screen-sized tiles
    python scripts/screenshots.py --out /tmp/shots --height 4000 chapters/01-fixed
    python scripts/screenshots.py --check-overflow --width 400   # listings or pages wider than the window

Pages are taken from ``_toc.yml`` in reading order. Screenshots go to ``/tmp/chunklab-shots``
by default (never into the repository). Chromium runs with networking features off, so a
page that needs the network to render shows it. Install it with
``apt-get install -y chromium`` if it is missing.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = Path(tempfile.gettempdir()) / "chunklab-shots"


def main(argv: list[str] | None = None) -> int:
    """Screenshot the requested pages (all pages of the toc by default); return an exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pages", nargs="*", help="docnames such as intro or chapters/01-fixed (default: all)")
    parser.add_argument("--html", type=Path, default=ROOT / "_build" / "html", help="the built book")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where the PNGs go (outside the repo)")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=2400)
    parser.add_argument(
        "--tiles",
        action="store_true",
        help="render each whole page (up to --page-height) and save it cut into tiles of --height",
    )
    parser.add_argument("--page-height", type=int, default=16000)
    parser.add_argument("--chromium", default=None, help="the browser binary (default: chromium on PATH)")
    parser.add_argument(
        "--check-overflow",
        action="store_true",
        help="instead of screenshots, report code listings and pages wider than --width",
    )
    args = parser.parse_args(argv)

    browser = args.chromium or shutil.which("chromium") or shutil.which("chromium-browser")
    if not browser:
        print("chromium not found: apt-get update && apt-get install -y chromium", file=sys.stderr)
        return 2
    if not (args.html / "intro.html").is_file():
        print(f"no built book at {args.html}: run `make book` first", file=sys.stderr)
        return 2
    if args.check_overflow:
        pages = args.pages or toc_pages(ROOT / "_toc.yml")
        bad = 0
        for page in pages:
            report = overflow_report(browser, args.html / f"{page}.html", args.width)
            ok = report is not None and not report["pre"] and not report["page"]
            bad += not ok
            print(("ok     " if ok else "WIDE   ") + f"{page} at {args.width} px: {report}")
        return 1 if bad else 0
    out = args.out.resolve()
    if out == ROOT or ROOT in out.parents:
        print(f"--out must lie outside the repository ({ROOT})", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)

    pages = args.pages or toc_pages(ROOT / "_toc.yml")
    failures = 0
    with tempfile.TemporaryDirectory(prefix="chunklab-chromium-") as profile:
        for page in pages:
            page_file = args.html / f"{page}.html"
            if not page_file.is_file():
                print(f"MISSING {page_file}", file=sys.stderr)
                failures += 1
                continue
            png = out / f"{page.replace('/', '__')}.png"
            height = args.page_height if args.tiles else args.height
            ok = shoot(browser, page_file.as_uri(), png, args.width, height, profile)
            if ok and args.tiles:
                for tile in cut_tiles(png, args.height):
                    print("saved  " + str(tile))
            else:
                print(("saved  " if ok else "FAILED ") + str(png))
            failures += not ok
    return 1 if failures else 0


def toc_pages(toc: Path) -> list[str]:
    """Docnames in reading order: the root, then every ``file:`` entry of ``_toc.yml``."""
    import yaml

    data = yaml.safe_load(toc.read_text(encoding="utf-8"))
    pages = [data["root"]]

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if "file" in node:
                pages.append(str(node["file"]))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(data.get("parts") or data.get("chapters") or [])
    return [p.removesuffix(".md").removesuffix(".ipynb") for p in pages]


def cut_tiles(png: Path, height: int) -> list[Path]:
    """Trim the blank bottom of a whole-page screenshot and cut it into tiles ``height`` high.

    The tiles replace ``png``: ``name-01.png``, ``name-02.png``, ... (Pillow, which matplotlib
    already needs).
    """
    import numpy as np
    from PIL import Image

    with Image.open(png) as full:
        image = full.convert("RGB")
    # The page ends where a long run of empty rows starts (a footer may be pinned further down).
    pixels = np.asarray(image).astype(int)
    # The most frequent row is the empty page (with the navigation bar's border).
    weights = np.random.default_rng(0).integers(1, 1 << 20, size=pixels.shape[1:])
    signature = (pixels * weights).sum(axis=(1, 2))
    values, counts = np.unique(signature, return_counts=True)
    reference = pixels[np.flatnonzero(signature == values[counts.argmax()])[0]]
    busy = np.abs(pixels - reference).sum(axis=2).max(axis=1) > 24
    bottom, blank = image.height, 0
    for row, is_busy in enumerate(busy):
        blank = 0 if is_busy else blank + 1
        if blank >= 1200:
            bottom = row - blank + 60
            break
    tiles = []
    for k, top in enumerate(range(0, bottom, height), start=1):
        tile = png.with_name(f"{png.stem}-{k:02d}.png")
        image.crop((0, top, image.width, min(bottom, top + height))).save(tile)
        tiles.append(tile)
    png.unlink()
    return tiles


#: injected into a copy of a page: lists the <pre> blocks that scroll sideways and whether the
#: page itself is wider than the window (tables may scroll inside their own box: that is fine)
_OVERFLOW_SCRIPT = """
<script>
window.addEventListener('load', () => {
  const shown = e => e.offsetParent !== null;
  const wide = [...document.querySelectorAll('pre')]
    .filter(e => shown(e) && e.scrollWidth > e.clientWidth + 1)
    .map(e => e.textContent.trim().split('\\n')[0].slice(0, 60));
  const page = document.documentElement.scrollWidth > window.innerWidth + 1;
  const column = (document.querySelector('article') || document.body).getBoundingClientRect();
  const scroller = e => {
    for (let box = e.parentElement; box && box !== document.body; box = box.parentElement) {
      const x = getComputedStyle(box).overflowX;
      if (x === 'auto' || x === 'scroll') return box;
    }
    return null;
  };
  const tables = [...document.querySelectorAll('article table')].filter(shown).filter(t => {
    if (t.getBoundingClientRect().right <= column.right + 1) return false;  // fits the column
    const box = scroller(t);
    return !(box && box.getBoundingClientRect().right <= column.right + 1);  // else: its own box scrolls
  }).map(t => (t.closest('figure') || t).id || t.textContent.trim().slice(0, 40));
  const captions = [...document.querySelectorAll('figure.chunklab-table > figcaption')].filter(shown)
    .filter(c => { const r = c.getBoundingClientRect();
                   return r.left < column.left - 1 || r.right > column.right + 1; })
    .map(c => c.textContent.trim().slice(0, 40));
  const out = document.createElement('pre');
  out.id = 'chunklab-overflow-report';
  out.textContent = JSON.stringify({pre: wide, page: page, tables: tables, captions: captions});
  document.body.appendChild(out);
});
</script>
"""


def overflow_report(browser: str, page_file: Path, width: int) -> dict | None:
    """Render ``page_file`` at ``width`` px: ``{"pre": [listings that scroll], "page": bool, "tables":
    [tables wider than the column without a scrolling box of their own], "captions": [table captions
    outside the column]}``; None on failure."""
    import json
    import re

    if not page_file.is_file():
        return None
    probe = page_file.with_name(page_file.stem + ".overflow-probe.html")
    html = page_file.read_text(encoding="utf-8")
    probe.write_text(html.replace("</body>", _OVERFLOW_SCRIPT + "</body>", 1), encoding="utf-8")
    try:
        with tempfile.TemporaryDirectory(prefix="chunklab-chromium-") as profile:
            cmd = _chromium(browser, profile, width, 900, "--dump-dom", probe.as_uri())
            try:
                dom = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False).stdout
            except subprocess.TimeoutExpired:
                return None
    finally:
        probe.unlink(missing_ok=True)
    found = re.search(r'id="chunklab-overflow-report"[^>]*>([^<]*)<', dom)
    if not found:
        return None
    import html as html_lib

    return json.loads(html_lib.unescape(found.group(1)))


def console_errors(browser: str, page_file: Path, width: int = 1280) -> list[str] | None:
    """The JavaScript errors Chromium logs while loading ``page_file``; None when it could not run."""
    import re

    with tempfile.TemporaryDirectory(prefix="chunklab-chromium-") as profile:
        cmd = _chromium(
            browser, profile, width, 900, "--enable-logging=stderr", "--v=0", "--dump-dom", page_file.as_uri()
        )
        try:
            log = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False).stderr
        except subprocess.TimeoutExpired:
            return None
    return re.findall(r':CONSOLE[^\]]*\] "((?:Uncaught|Error)[^"]*)"', log)


def shoot(browser: str, url: str, png: Path, width: int, height: int, profile: str) -> bool:
    """One headless screenshot of ``url``; True when the PNG was written."""
    png.unlink(missing_ok=True)
    cmd = _chromium(browser, profile, width, height, f"--screenshot={png}", url)
    try:
        subprocess.run(cmd, capture_output=True, timeout=120, check=False)
    except subprocess.TimeoutExpired:
        return False
    return png.is_file() and png.stat().st_size > 0


def _chromium(browser: str, profile: str, width: int, height: int, *args: str) -> list[str]:
    """A headless Chromium command line with networking features off, then ``args``."""
    return [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--hide-scrollbars",
        f"--user-data-dir={profile}",
        f"--window-size={width},{height}",
        "--virtual-time-budget=4000",
        *args,
    ]


if __name__ == "__main__":
    sys.exit(main())
