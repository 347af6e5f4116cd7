"""Test scaffolding: a real ``chroma run`` server on a free loopback port, killed and restarted at will.

Used by the ``server`` fixture (tests/integration/conftest.py), tests/integration/test_server_faults.py and
benchmarks/server_faults.py (which puts tests/support/ on sys.path).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

__all__ = ["ChromaServer", "chroma_command", "free_port"]


def chroma_command() -> Path | None:
    """The ``chroma`` CLI beside this interpreter (None when chromadb's server is not installed)."""
    chroma = Path(sys.executable).parent / "chroma"
    return chroma if chroma.exists() else None


def free_port() -> int:
    """A loopback TCP port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ChromaServer:
    """``chroma run --path DIR --port P``: :meth:`start`, :meth:`kill` (SIGKILL), :meth:`start` again."""

    def __init__(self, folder: Path, port: int | None = None) -> None:
        chroma = chroma_command()
        if chroma is None:
            raise RuntimeError("the chroma command (chromadb's server) is not installed")
        self.chroma = chroma
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def start(self, wait: bool = True, timeout: float = 120.0) -> float:
        """Start the server on the same path and port; seconds until it answered (0 without ``wait``)."""
        t0 = time.monotonic()
        self.starts += 1
        log = (self.folder / f"server-{self.starts}.log").open("wb")
        self.proc = subprocess.Popen(
            [str(self.chroma), "run", "--path", str(self.folder / "data"), "--host", "127.0.0.1"]
            + ["--port", str(self.port)],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        if wait:
            self.wait_up(timeout)
        return time.monotonic() - t0 if wait else 0.0

    def wait_up(self, timeout: float = 120.0) -> None:
        """Block until the heartbeat answers (RuntimeError with the log's tail if it never does)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(f"{self.url}/api/v2/heartbeat", timeout=2):
                    return
            except OSError:
                if (self.proc is not None and self.proc.poll() is not None) or time.monotonic() > deadline:
                    log = (self.folder / f"server-{self.starts}.log").read_text(errors="replace")
                    raise RuntimeError(f"chroma server did not start: {log[-2000:]}") from None
                time.sleep(0.2)

    def kill(self) -> None:
        """SIGKILL the server (no shutdown, no flush) and reap it."""
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)
        self.proc = None

    def stop(self) -> None:
        """Terminate the server politely (SIGKILL after 30 s)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()
        self.proc = None
