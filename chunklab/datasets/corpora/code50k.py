"""The pinned 50K-file code corpus: ``.py`` files read straight out of fetched wheels.

``wheel_corpus("code-50k")`` (also reached as ``chunklab.datasets.corpus("code-50k")``) lists every
``.py`` member of every wheel pinned in ``chunklab/data/corpora/code-50k.txt``, once
``chunklab corpus fetch code-50k`` has downloaded them. Nothing is installed or imported: a
file is a zip member, read when asked for. The order is fixed by the pin list (sorted by
project) and the member names (sorted); files whose bytes equal an earlier file's are
dropped, as in the installed corpus. Each file carries its project, version and module path.
"""

from __future__ import annotations

import os
import zipfile
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

from chunklab.datasets.corpora.code import CodeCorpus, CorpusFile
from chunklab.datasets.corpora.pinned import check_fetched, corpus_dir
from chunklab.datasets.corpora.wheels import WheelPin, load_pins

__all__ = ["WheelFile", "module_path", "wheel_corpus"]


@dataclass(frozen=True, slots=True)
class WheelFile(CorpusFile):
    """One ``.py`` member of a wheel. ``path`` is ``<wheel>!/<member>``; ``root`` is ``project==version``."""

    wheel: str = ""
    member: str = ""
    distribution: str = ""
    version: str = ""

    @property
    def project(self) -> str:
        """The distribution the file ships in (``Django``, ``azure-core``, ...)."""
        return self.distribution

    def read_bytes(self) -> bytes:
        """The member's bytes, decompressed from the wheel (nothing is extracted to disk)."""
        return _open_zip(self.wheel, os.getpid()).read(self.member)


def module_path(member: str) -> str | None:
    """The import path of a wheel member (``pkg/mod.py``), or ``None`` for wheel metadata.

    Members under ``<name>.data/purelib/`` or ``platlib/`` install into site-packages, so
    that prefix is dropped; ``.data/scripts/...`` keeps its place under ``scripts/``;
    ``*.dist-info/`` holds no code.
    """
    parts = member.split("/")
    if parts[0].endswith(".dist-info"):
        return None
    if parts[0].endswith(".data") and len(parts) > 2:
        if parts[1] in ("purelib", "platlib"):
            return "/".join(parts[2:])
        return "/".join(parts[1:])
    return member


def wheel_corpus(
    name: str = "code-50k", *, cache_dir: str | os.PathLike[str] | None = None, dedupe: str = "content"
) -> CodeCorpus:
    """Every ``.py`` file of the fetched wheels of corpus ``name``, in a deterministic order.

    Raises ``FileNotFoundError`` naming the fetch command when wheels are missing, and
    ``ValueError`` when one is present but does not match its pinned size and sha256
    (checked by size here, :func:`~chunklab.datasets.corpora.pinned.check_fetched`; ``chunklab corpus
    fetch`` checks the hash). ``dedupe`` is
    ``"content"`` (drop files whose bytes equal an earlier one's) or ``"path"`` (keep all).
    """
    if dedupe not in ("content", "path"):
        raise ValueError(f"dedupe must be 'content' or 'path', got {dedupe!r}")
    directory = str(corpus_dir(name, cache_dir))
    return _wheel_corpus(name, directory, dedupe)


@lru_cache(maxsize=4)
def _wheel_corpus(name: str, directory: str, dedupe: str) -> CodeCorpus:
    pins = sorted(load_pins(name), key=lambda p: (p.project.lower(), p.filename))
    check_fetched(name, [p.pin for p in pins], directory, "wheel")
    files: list[WheelFile] = []
    crcs: list[int] = []
    for pin in pins:
        for f, crc in _members(pin, directory):
            files.append(f)
            crcs.append(crc)
    if dedupe == "content":
        keep = _first_of_identical(files, crcs)
        files = [f for f, k in zip(files, keep) if k]
    return CodeCorpus(files)


def _members(pin: WheelPin, directory: str) -> Iterator[tuple[WheelFile, int]]:
    wheel = os.path.join(directory, pin.filename)
    root = pin.spec
    with zipfile.ZipFile(wheel) as zf:
        infos = sorted(
            (i for i in zf.infolist() if i.filename.endswith(".py") and not i.is_dir()),
            key=lambda i: i.filename,
        )
    for info in infos:
        rel = module_path(info.filename)
        if rel is None:
            continue
        yield (
            WheelFile(
                f"{wheel}!/{info.filename}",
                root,
                rel,
                info.file_size,
                wheel,
                info.filename,
                pin.project,
                pin.version,
            ),
            info.CRC,
        )


def _first_of_identical(files: list[WheelFile], crcs: list[int]) -> list[bool]:
    """Keep the first of each group of identical files: candidates share size and CRC-32; bytes decide."""
    groups: dict[tuple[int, int], list[int]] = defaultdict(list)
    for i, (f, crc) in enumerate(zip(files, crcs)):
        groups[(f.size, crc)].append(i)
    keep = [True] * len(files)
    for indices in groups.values():
        if len(indices) < 2:
            continue
        first_of: dict[bytes, int] = {}
        for i in indices:
            data = files[i].read_bytes()
            if data in first_of:
                keep[i] = False
            else:
                first_of[data] = i
    return keep


@lru_cache(maxsize=8)
def _open_zip(wheel: str, pid: int) -> zipfile.ZipFile:
    """An open wheel, cached per process (``pid`` in the key: a forked worker never shares its parent's)."""
    return zipfile.ZipFile(wheel)
