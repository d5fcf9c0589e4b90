"""Files that only grow (index.md, the logs): after an append, the daemon checks what was appended instead
of the whole file again.

index.md gains a row with every save; checking all of it (12,000 rows, 2.4 MB: the secret scan and the
validation) after each one cost the daemon about half a second of CPU a save. Both checks are local to
a line (a row is valid or not by itself; only the first two lines must be the header), so once a file was
found valid and free of secrets, a later version that begins with exactly those bytes needs only its new
lines checked: with the file's first two lines before them for the validation, and for the secret scan
with what of the old part a match that reaches the new lines can begin in (scan_start). Anything else (the
file rewritten, shortened, a byte of the old part changed, the new part not valid) is checked whole, as
every other file is.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cache

from kbsync.core import protocol
from kbsync.core.detect import secrets

KINDS = ("index", "log")
OVERLAP = 64 * 1024  # how far back a multi-line rule's match may begin: longer than any private key block
LINES_BEFORE = 2  # a single-line rule searches from its keyword's line (and the newline before it) to the next line


@dataclass(frozen=True)
class Checked:
    """What a file held when it was last found valid and free of secrets."""

    size: int
    digest: bytes

    @classmethod
    def of(cls, data: bytes) -> Checked:
        return cls(len(data), _hash(data).digest())


@dataclass(frozen=True)
class Appended:
    head: bytes  # the file's first two lines (for the validation of the new lines)
    scan: bytes  # the new lines with the old bytes a match reaching them may begin in (for the secret scan)
    lines: bytes  # the new lines
    checked: Checked  # the whole file, to be remembered once its new lines are found clean


def applies(relpath: str) -> bool:
    return protocol.classify(relpath) in KINDS


def appended(before: Checked | None, data: bytes) -> Appended | None:
    """What was appended to a file that held `before` when checked: None unless `data` begins with exactly
    those bytes, they ended a line, and there is something after them."""
    if before is None or before.size == 0 or len(data) <= before.size:
        return None
    view = memoryview(data)
    if data[before.size - 1] != 0x0A:
        return None
    digest = _hash(view[:before.size])
    if digest.digest() != before.digest:
        return None
    digest.update(view[before.size:])
    second = data.find(b"\n", data.find(b"\n") + 1)
    return Appended(data[:second + 1], data[scan_start(data, before.size):], data[before.size:],
                    Checked(len(data), digest.digest()))


def _hash(data: bytes | memoryview) -> hashlib._Hash:
    """The hash a checked version is known by: SHA-256, which has instructions of its own on most CPUs (twice
    blake2b's speed here); it carries on over appended lines."""
    return hashlib.sha256(data)


def scan_start(data: bytes, size: int) -> int:
    """Where the secret scan of the lines after `data[:size]` (whole lines) must begin so that it finds every
    match a scan of all of `data` finds that reaches them. A single-line rule's window runs from the line of a
    keyword (with the newline before it) to the end of the next line, so only a keyword on the old part's last
    line reaches the new lines: the scan begins LINES_BEFORE lines back. A multi-line rule's window runs from its
    keyword to the end of the text: the scan begins at the line of the first such keyword within OVERLAP bytes."""
    floor = max(0, size - OVERLAP)
    start = size
    for _ in range(LINES_BEFORE):
        start = max(floor, data.rfind(b"\n", floor, start - 1) + 1) if start > floor else floor
    old = data[floor:start].lower()
    first = min((at for at in (old.find(k) for k in _spanning_keywords()) if at >= 0), default=-1)
    return start if first < 0 else max(floor, data.rfind(b"\n", floor, floor + first) + 1)


@cache
def _spanning_keywords() -> tuple[bytes, ...]:
    """The keywords of the rules whose matches may span lines, as the scanner matches them (ASCII lower case)."""
    return tuple(sorted({k.encode("utf-8") for r in secrets.default_rules().rules if r.multiline for k in r.keywords}))

