"""The append-only files (index.md, the logs) checked as a stream: they grow with the workspace without bound
(at 100,000 sessions index.md is 20 MB, one row per save, and the tool-call log 32 MB), so their check reads
them in slices and holds one line at a time.

The findings are those of reading a file whole (`validate_text`, then for index.md a warning per row naming
a session that is gone), with the same messages and line numbers: a first pass over the open file makes
`decode`'s checks (a NUL byte anywhere, else the first line that is not UTF-8, which is all that is said
then) and notes its size; the checks of the lines then read it again from the start, up to that size, so
that rows appended meanwhile wait for the next check. What is held is a slice, the longest line, and the
findings.
"""

from __future__ import annotations

import io
import os
import stat
from pathlib import Path
from typing import BinaryIO, Callable, Iterator

from kbsync.core.findings import Finding
from kbsync.core.validate import append_only_findings, may_hold_markers
from kbsync.errors import InputError
from kbsync.store import fsio
from kbsync.store.workspace import BINARY, BOM, NOT_UTF8, Workspace

CHUNK = 256 * 1024


def findings(ws: Workspace, relpath: str) -> list[Finding]:
    """The findings of the append-only file `relpath`; InputError (naming the line) when it is no text."""
    root = str(ws.root) + "/"

    def exists(path: str) -> bool:  # os.path.isfile's answer, for a relative path
        if ".." in path.split("/"):
            return False
        try:
            return stat.S_ISREG(os.stat(root + path).st_mode)
        except (OSError, ValueError):
            return False

    with ws.open_checked(relpath) as (fh, path):
        return _findings(fh, path, relpath, exists)


def text_findings(relpath: str, data: bytes) -> list[Finding]:
    """`validate_text`'s findings for the bytes of the append-only file `relpath`, found without decoding them
    whole (for a reader that holds them already); InputError as `decode` raises it when they are no text."""
    return _findings(io.BytesIO(data), Path(relpath), relpath, None)


def _findings(fh: BinaryIO, path: Path, relpath: str, exists: Callable[[str], bool] | None) -> list[Finding]:
    size, marked = _checked(fh, path, relpath)
    return list(append_only_findings(relpath, lambda: _lines(fh, path, size, relpath), exists, marked))


def _parts(fh: BinaryIO, path: Path, limit: int | None = None) -> Iterator[bytes]:
    """The file from the start, up to `limit` bytes (None: all), in slices of whole lines but the last."""
    fh.seek(0)
    pending = bytearray()  # the start of a line whose end is not read yet
    left = limit
    while True:
        chunk = fsio.read_chunk(fh, CHUNK if left is None else min(CHUNK, left), path) if left != 0 else b""
        left = None if left is None else left - len(chunk)
        pending += chunk
        cut = pending.rfind(b"\n") + 1 if chunk else len(pending)
        if cut:
            yield bytes(pending[:cut])
            del pending[:cut]
        if not chunk:
            return


def _checked(fh: BinaryIO, path: Path, relpath: str) -> tuple[int, bool]:
    """The file's size and whether it may hold a conflict marker, once `decode`'s checks have passed."""
    size, newlines, bad, marked = 0, 0, None, False
    for part in _parts(fh, path):
        if b"\x00" in part:
            raise InputError(BINARY, path=relpath)
        size += len(part)
        if bad is None:
            try:
                marked = marked or may_hold_markers(part.decode("utf-8"))
            except UnicodeDecodeError as exc:
                bad = newlines + part[: exc.start].count(b"\n") + 1
        newlines += part.count(b"\n")
    if bad is not None:
        raise InputError(NOT_UTF8, path=relpath, line=bad)
    return size, marked


def _lines(fh: BinaryIO, path: Path, size: int, relpath: str) -> Iterator[str]:
    """The first `size` bytes of the file as the lines of its text: `str.split("\\n")` of it with CRLF read as
    LF and the byte order mark left out, a slice at a time."""
    tail, first = "", True  # what follows the last line break: a line of its own, empty when the text ends with one
    for part in _parts(fh, path, size):
        try:
            text = part.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError("changed while it was checked; check it again", path=relpath) from None
        if first:
            text, first = text.removeprefix(BOM), False
        lines = text.replace("\r\n", "\n").split("\n")
        tail = lines.pop()
        yield from lines
    yield tail
