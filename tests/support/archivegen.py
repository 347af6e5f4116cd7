"""Archives made at test time, as the pinned corpora ship them: tarballs and Debian packages."""

from __future__ import annotations

import io
import tarfile
from collections.abc import Mapping


def tar_bytes(members: Mapping[str, bytes | str], mode: str = "w:gz") -> bytes:
    """A tar archive (``mode`` picks the compression: ``w:gz``, ``w:xz``, ``w``) of ``members``.

    Text members are written as UTF-8.
    """
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as tf:
        for name, body in members.items():
            data = body.encode("utf-8") if isinstance(body, str) else body
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def ar_bytes(members: Mapping[str, bytes]) -> bytes:
    """An ``ar`` archive: the magic line, then a 60-byte header and the body of each member."""
    out = [b"!<arch>\n"]
    for name, data in members.items():
        header = f"{name + '/':<16}{0:<12}{0:<6}{0:<6}{100644:<8}{len(data):<10}`\n".encode("ascii")
        out += [header, data, b"\n" if len(data) % 2 else b""]
    return b"".join(out)


def deb_bytes(files: Mapping[str, bytes | str], package: str = "demo") -> bytes:
    """A Debian binary package installing ``files`` (names like ``./usr/share/...``), xz-compressed."""
    return ar_bytes(
        {
            "debian-binary": b"2.0\n",
            "control.tar.xz": tar_bytes({"./control": f"Package: {package}\n"}, "w:xz"),
            "data.tar.xz": tar_bytes(files, "w:xz"),
        }
    )
