"""The one pinned fetch (chunklab.datasets.corpora.pinned) over real HTTP: verified, atomic, resumable; and
``chunklab corpus list | info | fetch`` taking one path for every kind of pinned corpus."""

from __future__ import annotations

import hashlib
import http.server
import json
import socket
import threading
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunklab.datasets.corpora import archives, code_poly, pinned, wheels
from chunklab.datasets.corpora.archives import ArchivePin, fetch_archives
from chunklab.datasets.corpora.pdfdocs import load_manifest, manifest_path
from chunklab.datasets.registry import corpora
from tests.support.archivegen import tar_bytes

JS = "/** Add one to a number. */\nfunction inc(x) {\n  return x + 1;\n}\n"
# hex digests compress poorly: the archive stays several kilobytes, so a download can break mid-file
NOISE = "".join(f"// {hashlib.sha256(str(i).encode()).hexdigest()}\n" for i in range(400))


class Server:
    """A local HTTP server of fixed files that honours ``Range`` and can cut a response short."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files, self.ranges, self.cut_after = files, [], None
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                data = server.files.get(self.path.lstrip("/"))
                if data is None:
                    self.send_error(404)
                    return
                start, status = 0, 200
                if rng := self.headers.get("Range"):
                    server.ranges.append(rng)
                    start, status = int(rng.removeprefix("bytes=").rstrip("-")), 206
                    if start >= len(data):
                        self.send_error(416)
                        return
                body = data[start:]
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if server.cut_after is not None:  # the connection drops mid-file, once
                    body, server.cut_after = body[: server.cut_after], None
                    self.close_connection = True
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Two npm-style archives served over HTTP, pinned in a 'toy.pins' manifest; (server, pins)."""
    blobs = {
        "inc-1.0.0.tgz": tar_bytes({"package/inc.js": JS}),
        "big-2.0.0.tgz": tar_bytes({"package/big.js": JS.replace("inc", "big") + NOISE}),
    }
    server = Server(blobs)
    lines = []
    for filename, data in blobs.items():
        name, version = filename.removesuffix(".tgz").rsplit("-", 1)
        digest = hashlib.sha256(data).hexdigest()
        lines.append(f"npm {name} {version} {digest} {len(data)} {server.url}/{filename}")
    pins_dir = tmp_path / "pins"
    pins_dir.mkdir()
    (pins_dir / "toy.pins").write_text("# toy\n" + "\n".join(lines) + "\n")
    monkeypatch.setattr(archives, "CORPORA_DIR", pins_dir)
    monkeypatch.setattr(wheels, "CORPORA_DIR", pins_dir)  # no wheel corpora in the toy folder
    code_poly._poly_corpus.cache_clear()
    yield server, archives.load_archive_pins("toy")
    server.close()


def test_fetch_over_http_places_verified_files_and_leaves_no_staging(served, tmp_path: Path) -> None:
    server, pins = served
    report = fetch_archives("toy", cache_dir=tmp_path / "c", progress=False)
    assert (report.archives, report.present, report.downloaded) == (2, 0, 2)
    assert sorted(p.name for p in report.directory.iterdir()) == sorted(p.filename for p in pins)
    assert all(archives.archive_status(p, report.directory) == "ok" for p in pins)
    again = fetch_archives("toy", cache_dir=tmp_path / "c", progress=False)
    assert (again.present, again.downloaded, server.ranges) == (2, 0, [])


def test_a_dropped_connection_is_a_clear_error_and_the_rerun_resumes_with_a_range(
    served, tmp_path: Path
) -> None:
    server, pins = served
    big = next(p for p in pins if p.name == "big")
    server.cut_after = 1000
    with pytest.raises(ConnectionError, match=rf"downloading {big.url} failed .*1000 bytes kept"):
        fetch_archives("toy", cache_dir=tmp_path / "c", pins=[big], progress=False)
    folder = pinned.corpus_dir("toy", tmp_path / "c")
    assert not (folder / big.filename).exists()  # nothing unverified under its final name
    assert (folder / pinned.PARTIAL / big.filename).stat().st_size == 1000
    report = fetch_archives("toy", cache_dir=tmp_path / "c", pins=[big], progress=False)
    assert server.ranges == ["bytes=1000-"] and report.downloaded == 1
    assert archives.archive_status(big, folder) == "ok" and not (folder / pinned.PARTIAL).exists()


def test_bytes_that_differ_from_the_pin_are_refused_and_deleted(served, tmp_path: Path) -> None:
    server, pins = served
    server.files["inc-1.0.0.tgz"] = b"not the pinned archive"
    with pytest.raises(
        ValueError, match=r"archive npm-inc-1.0.0.tgz \(http://.*\) failed verification: 22 bytes"
    ):
        fetch_archives("toy", cache_dir=tmp_path / "c", progress=False)
    folder = pinned.corpus_dir("toy", tmp_path / "c")
    assert sorted(p.name for p in folder.iterdir()) == []  # the manifest order put inc first


def test_an_unreachable_server_is_a_connection_error_naming_the_url(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the with ends: nobody listens there
    url = f"http://127.0.0.1:{port}/x.tgz"
    pin = ArchivePin("npm", "x", "1", "0" * 64, 10, url)
    with pytest.raises(ConnectionError, match=rf"downloading {url} failed"):
        fetch_archives("t", cache_dir=tmp_path, pins=[pin], progress=False)


@given(st.lists(st.integers(0, 50), max_size=30), st.integers(1, 7))
def test_batches_keep_every_item_once_in_order(items: list[int], size: int) -> None:
    batches = list(pinned.batches_of(size)(items))
    assert [i for b in batches for i in b] == items
    assert all(1 <= len(b) <= size for b in batches)


def test_the_committed_manifests_read_as_pins_one_file_name_each() -> None:
    """Every manifest keeps its format; the registry's pins are exactly the manifests' records."""
    entries = corpora()
    expected = {
        "code-50k": [p.pin for p in wheels.load_pins("code-50k")],
        "code-poly": [p.pin for p in archives.load_archive_pins("code-poly")],
        "pdf-docs": [f.pin for f in load_manifest().files],
        "real-docs": [f.pin for f in load_manifest(manifest_path("real-docs")).files],
    }
    for name, pins in expected.items():
        assert entries[name].pinned and entries[name].pins() == pins
        assert len({p.name for p in pins}) == len(pins) > 0
        assert all(len(p.sha256) == 64 and p.size > 0 for p in pins)
    assert {n for n, e in entries.items() if e.pinned} == set(expected)


def test_cli_lists_describes_and_fetches_an_archive_corpus_the_same_way(served, tmp_path: Path, capsys):
    from chunklab.cli import main

    cache = str(tmp_path / "c")
    assert main(["corpus", "list", "--cache-dir", cache]) == 0
    listing = capsys.readouterr().out
    assert "toy" in listing and "2 archives" in listing and "0/2 fetched" in listing
    assert "pdf-docs" in listing  # every pinned corpus, whatever it is made of
    assert main(["corpus", "fetch", "toy", "--cache-dir", cache, "--no-progress"]) == 0
    assert "toy: 2 archives in" in capsys.readouterr().out
    assert main(["corpus", "info", "toy", "--cache-dir", cache, "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert (info["archives"], info["fetched"], info["files"], info["languages"]) == (
        2,
        2,
        2,
        {"javascript": 2},
    )
    assert main(["corpus", "fetch", "toy", "--cache-dir", cache, "--batch-size", "2"]) == 2
    assert "--batch-size applies to wheel corpora" in capsys.readouterr().err
    assert main(["corpus", "info", "installed"]) == 2
    assert "pinned corpus" in capsys.readouterr().err
