"""Regenerate the message templates from the English sources and merge them into the catalogs.

Usage (``make catalogs``)::

    python scripts/catalogs.py              # _build/gettext/**.pot, then sphinx-intl update (es)
    python scripts/catalogs.py --check      # report what is left to translate; change nothing

The templates come from Sphinx's ``gettext`` builder with execution off (seconds, no chapter
runs), computed figure and table captions included (``_ext/chunklab_book.py``). The merge is
``sphinx-intl update``: a new English paragraph becomes an empty entry, a changed one keeps
its old translation marked fuzzy, a removed one stays in the file as obsolete (``#~``).
Before and after the merge every translated message is compared: if one were lost, the
catalogs are put back as they were and the command fails.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from babel.messages.pofile import PoFileError, read_po

sys.path.insert(0, str(Path(__file__).resolve().parent))
from book_edition import BUILD, LOCALE_DIR, ROOT, TRANSLATIONS, build  # noqa: E402

POT_DIR = BUILD / "gettext"

#: a MyST role, ``{name}`content```
ROLE = re.compile(r"\{([A-Za-z][\w:.+-]*)\}`([^`]*)`")
#: roles whose content may be ``title <target>``: the title is translated, the target is not
TITLED_ROLES = frozenset({"term", "ref", "numref", "doc", "download", "eq"})
EXPLICIT_TARGET = re.compile(r"^(.*?)\s*<([^<>]+)>$", re.S)
CODE = re.compile(r"(`+)(.+?)\1", re.S)
LINK_TARGET = re.compile(r"\]\(\s*<?([^)\s>]+)>?")
AUTOLINK = re.compile(r"<((?:https?|mailto):[^>\s]+)>")
HTML_TAG = re.compile(r"</?[A-Za-z][\w-]*(?:\s[^<>]*)?/?>")
SUBSTITUTION = re.compile(r"\{\{[^{}]*\}\}")


@dataclass(frozen=True)
class CatalogState:
    """What one ``.po`` file holds, counted the way the completeness test counts."""

    path: Path
    translated: int
    untranslated: int
    fuzzy: int
    obsolete: int

    @property
    def done(self) -> bool:
        """Every entry translated, none fuzzy, none obsolete."""
        return self.untranslated == self.fuzzy == self.obsolete == 0


def extract(pot_dir: Path = POT_DIR, *, quiet: bool = True) -> dict[str, set[str]]:
    """Write the ``.pot`` templates of the current English sources into ``pot_dir``.

    Returns each catalog's messages: ``{"chapters/01-fixed": {msgid, ...}, ...}``. Warnings of
    the unexecuted build (unknown glue keys, figure labels) are expected and not errors.
    """
    pot_dir = Path(pot_dir)
    if pot_dir.exists():
        shutil.rmtree(pot_dir)
    with tempfile.TemporaryDirectory(prefix="chunklab-gettext-") as doctrees:
        status = build(
            "en",
            builder="gettext",
            outdir=pot_dir,
            doctreedir=Path(doctrees),
            warnings_are_errors=False,
            quiet=quiet,
        )
    if status:
        raise RuntimeError(f"the gettext build failed with status {status}")
    shutil.rmtree(pot_dir / "_static", ignore_errors=True)
    return {domain: messages(path) for domain, path in templates(pot_dir).items()}


def markup(text: str) -> Counter[str]:
    """The pieces of MyST markup in a message that a translation must keep unchanged.

    Roles by name and target (``{glue:text}`n_docs```, ``{numref}`tbl-x``` — a role's title
    may be translated: ``{term}`fragmento <chunk>``` keeps the target ``chunk``), inline code,
    link targets (not their text), autolinks, HTML tags and substitutions, each with its count.
    Emphasis is not counted: a translation moves it with the words it marks.
    """
    found: Counter[str] = Counter()

    def role(match: re.Match[str]) -> str:
        name, content = match.groups()
        explicit = EXPLICIT_TARGET.match(content) if name in TITLED_ROLES else None
        target = explicit.group(2) if explicit else content
        found[f"{{{name}}}`{' '.join(target.split())}`"] += 1
        return " "

    def code(match: re.Match[str]) -> str:
        found[f"`{' '.join(match.group(2).split())}`"] += 1
        return " "

    rest = CODE.sub(code, ROLE.sub(role, text))
    found.update(f"]({m})" for m in LINK_TARGET.findall(rest))
    found.update(f"<{m}>" for m in AUTOLINK.findall(rest))
    found.update(HTML_TAG.findall(AUTOLINK.sub(" ", rest)))
    found.update(SUBSTITUTION.findall(rest))
    return found


def markup_problems(msgid: str, msgstr: str) -> str | None:
    """What markup of ``msgid`` the translation ``msgstr`` drops or adds (``None``: all kept)."""
    want, got = markup(msgid), markup(msgstr)
    if want == got:
        return None
    dropped, added = want - got, got - want
    parts = [
        f"dropped {sorted(dropped.elements())}" if dropped else "",
        f"added {sorted(added.elements())}" if added else "",
    ]
    return "; ".join(p for p in parts if p)


def templates(pot_dir: Path) -> dict[str, Path]:
    """The templates under ``pot_dir`` by catalog name (``chapters/01-fixed``)."""
    return {
        p.relative_to(pot_dir).with_suffix("").as_posix(): p for p in sorted(Path(pot_dir).rglob("*.pot"))
    }


def catalogs(language: str = "es", locale_dir: Path = ROOT / LOCALE_DIR) -> dict[str, Path]:
    """The ``.po`` files of ``language`` by catalog name."""
    base = Path(locale_dir) / language / "LC_MESSAGES"
    return {p.relative_to(base).with_suffix("").as_posix(): p for p in sorted(base.rglob("*.po"))}


def messages(path: Path) -> set[str]:
    """The msgids of a ``.pot`` or ``.po`` file (the header and obsolete entries excluded)."""
    with open(path, "rb") as handle:
        return {m.id for m in read_po(handle) if m.id}


def check_syntax(path: Path) -> None:
    """Raise ``ValueError`` naming ``path`` and the line when the file is not a valid catalog.

    babel's reader skips what it cannot parse: merging a damaged file would silently drop the
    entries in the damaged part, so a merge refuses it instead.
    """
    try:
        with open(path, "rb") as handle:
            read_po(handle, abort_invalid=True)
    except PoFileError as error:
        raise ValueError(f"{path} is not a valid catalog ({error}); repair it before merging") from error


def translations(path: Path) -> dict[str, str]:
    """Every translated message of a ``.po`` file, obsolete ones included: msgid -> msgstr."""
    with open(path, "rb") as handle:
        catalog = read_po(handle)
    found = {m.id: m.string for m in catalog if m.id and m.string}
    found.update({m.id: m.string for m in catalog.obsolete.values() if m.id and m.string})
    return found


def state(path: Path) -> CatalogState:
    """Count the entries of one ``.po`` file by state."""
    with open(path, "rb") as handle:
        catalog = read_po(handle)
    entries = [m for m in catalog if m.id]
    return CatalogState(
        path=Path(path),
        translated=sum(1 for m in entries if m.string and not m.fuzzy),
        untranslated=sum(1 for m in entries if not m.string),
        fuzzy=sum(1 for m in entries if m.string and m.fuzzy),
        obsolete=len(catalog.obsolete),
    )


def update(
    pot_dir: Path = POT_DIR, languages: Iterable[str] = TRANSLATIONS, locale_dir: Path = ROOT / LOCALE_DIR
) -> None:
    """Merge the templates into the catalogs with ``sphinx-intl update``, losing no translation.

    A translation survives when its text is still in the catalog: under its msgid, under the
    changed msgid it was matched to (fuzzy), or as an obsolete entry. A catalog where one
    would not is put back as it was, and the merge fails naming the messages.
    """
    locale_dir = Path(locale_dir)
    languages = list(languages)
    before: dict[Path, tuple[bytes, dict[str, str]]] = {}
    for lang in languages:
        for path in catalogs(lang, locale_dir).values():
            check_syntax(path)
            before[path] = (path.read_bytes(), translations(path))
    command = [sys.executable, "-m", "sphinx_intl", "update", "-p", str(pot_dir), "-d", str(locale_dir)]
    for lang in languages:
        command += ["-l", lang]
    subprocess.run(command, check=True)
    lost: list[tuple[Path, str]] = []
    for path, (content, old) in before.items():
        kept = set(translations(path).values()) if path.exists() else set()
        missing = [msgid for msgid, text in old.items() if text not in kept]
        if missing:
            path.write_bytes(content)
            lost += [(path, msgid) for msgid in missing]
    if lost:
        shown = "\n".join(f"  {path.relative_to(locale_dir)}: {msgid[:70]!r}" for path, msgid in lost[:10])
        raise RuntimeError(
            f"sphinx-intl update would lose {len(lost)} translations; those catalogs are restored:\n{shown}"
        )


def report(language: str = "es", locale_dir: Path = ROOT / LOCALE_DIR) -> list[CatalogState]:
    """Print one line per catalog (translated / untranslated / fuzzy / obsolete); return the states."""
    states = [state(p) for p in catalogs(language, locale_dir).values()]
    for s in states:
        name = s.path.relative_to(Path(locale_dir) / language / "LC_MESSAGES")
        print(
            f"{language}/{name}: {s.translated} translated, {s.untranslated} untranslated, "
            f"{s.fuzzy} fuzzy, {s.obsolete} obsolete"
        )
    total = sum(s.translated for s in states)
    left = sum(s.untranslated + s.fuzzy for s in states)
    print(f"{language}: {total} messages translated, {left} to do")
    return states


def markup_report(language: str = "es", locale_dir: Path = ROOT / LOCALE_DIR) -> list[str]:
    """One line per translation that drops or adds markup of its English message."""
    problems = []
    for name, path in catalogs(language, locale_dir).items():
        with open(path, "rb") as handle:
            for message in read_po(handle):
                problem = (
                    markup_problems(message.id, message.string) if message.id and message.string else None
                )
                if problem:
                    problems.append(f"{language}/{name}: {message.id[:60]!r}: {problem}")
    return problems


def main(argv: list[str] | None = None) -> int:
    """Command line: extract and merge (default), or only report with ``--check``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only report the catalogs' state")
    parser.add_argument("--pot-dir", type=Path, default=POT_DIR)
    args = parser.parse_args(argv)
    if not args.check:
        extract(args.pot_dir)
        update(args.pot_dir)
    states = [s for lang in TRANSLATIONS for s in report(lang)]
    problems = [p for lang in TRANSLATIONS for p in markup_report(lang)]
    print("\n".join(problems) if problems else "markup: every translation keeps the English markup")
    return 0 if not args.check or (all(s.done for s in states) and not problems) else 1


if __name__ == "__main__":
    sys.exit(main())
