"""The README tells the truth: its commands exist and its Python example runs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_two_commands_come_first():
    first_block = re.search(r"```bash\n(.*?)```", README, re.S).group(1)
    commands = [line.split("#")[0].strip() for line in first_block.splitlines() if line.strip()]
    assert commands == ["make book", "make test"]


def test_every_make_target_shown_exists():
    targets = set(re.findall(r"^([a-z][a-z0-9-]*):", (ROOT / "Makefile").read_text(), re.M))
    shown = set(re.findall(r"\bmake ([a-z][a-z0-9-]*)", README))
    assert shown, "the README shows no make command"
    assert shown <= targets, f"README shows targets the Makefile lacks: {shown - targets}"


def test_ci_runs_the_readme_test_command():
    assert "make test" in (ROOT / ".ci/run").read_text()


def test_python_example_runs_and_prints_three_results(tmp_path):
    code = re.search(r"```python\n(.*?)```", README, re.S).group(1)
    script = tmp_path / "example.py"
    script.write_text(code, encoding="utf-8")
    out = subprocess.run(
        [sys.executable, str(script)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 3
    assert all(re.match(r"0\.\d\d warehouse-failover-runbook\[\d+:\d+\] ", line) for line in lines)


def test_cli_commands_shown_are_registered():
    from chunklab.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    shown = set(re.findall(r"bin/chunklab (\w+) ", README))
    assert shown, "the README shows no chunklab command"
    assert shown <= set(sub.choices), shown - set(sub.choices)
