"""The library never imports the course: chunklab/course/ is used only by commands and notebooks."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "chunklab"
ALLOWED = ("course", "commands")  # the course itself and the thin CLI commands


def imported_modules(path: Path, package_dir: Path = PACKAGE) -> set[str]:
    """Every module a file imports: absolute names, relative imports resolved, ``import_module()`` too."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = list(path.relative_to(package_dir.parent).parts[:-1])
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            parts = package[: len(package) - node.level + 1] if node.level else []
            base = ".".join([*parts, *([node.module] if node.module else [])])
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
        ):
            if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                found.add(node.args[0].value)
    return found


def library_modules() -> list[Path]:
    """The modules of chunklab/ outside course/ and commands/ (cli.py included)."""
    return [p for p in sorted(PACKAGE.rglob("*.py")) if p.relative_to(PACKAGE).parts[0] not in ALLOWED]


def _course_imports(path: Path, package_dir: Path = PACKAGE) -> list[str]:
    return sorted(
        m for m in imported_modules(path, package_dir) if m.split(".")[:2] == ["chunklab", "course"]
    )


def test_the_scan_sees_course_imports_of_every_form(tmp_path):
    probe = tmp_path / "chunklab" / "structural" / "probe.py"
    probe.parent.mkdir(parents=True)
    forms = [
        "import chunklab.course.grader",
        "from chunklab import course",
        "from ..course import checkpoints",
        "importlib.import_module('chunklab.course.paths')",
    ]
    expected = [
        "chunklab.course.grader",
        "chunklab.course",
        "chunklab.course.checkpoints",
        "chunklab.course.paths",
    ]
    for form, module in zip(forms, expected, strict=True):
        probe.write_text(f"import importlib\n\ndef f():\n    {form}\n", encoding="utf-8")
        assert module in _course_imports(probe, tmp_path / "chunklab"), form
    probe.write_text("from ..chunk import Chunk\nimport chunklab.courses_of_action\n", encoding="utf-8")
    assert _course_imports(probe, tmp_path / "chunklab") == []


def test_no_library_module_imports_the_course():
    modules = library_modules()
    assert len(modules) > 10 and PACKAGE / "cli.py" in modules  # the scan really looked at the package
    offenders = {str(p.relative_to(PACKAGE.parent)): _course_imports(p) for p in modules}
    offenders = {k: v for k, v in offenders.items() if v}
    assert not offenders, f"library modules must not import chunklab.course: {offenders}"
