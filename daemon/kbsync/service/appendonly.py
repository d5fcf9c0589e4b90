"""Files that only grow (index.md, the logs): after an append, the daemon checks what was appended instead
of the whole file again.

index.md gains a row with every save; checking all of it (12,000 rows, 2.4 MB: the secret scan and the
validation) after each one cost the daemon about half a second of CPU a save. Both checks are local to
a line (a row is valid or not by itself; only the first two lines must be the header), so once a file was
found valid and free of secrets, a later version that begins with exactly those bytes needs only its new
lines checked: with the file's first two lines before them for the validation, and with OVERLAP bytes
before them for the secret scan (a secret may begin on the line before). Anything else (the file
rewritten, shortened, a byte of the old part changed, the new part not valid) is checked whole, as every
other file is.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from kbsync.core import protocol

KINDS = ("index", "log")
OVERLAP = 64 * 1024  # longer than any secret the rules match


@dataclass(frozen=True)
class Checked:
    """What a file held when it was last found valid and free of secrets."""

    size: int
    digest: bytes

    @classmethod
    def of(cls, data: bytes) -> Checked:
        return cls(len(data), _digest(memoryview(data)))


@dataclass(frozen=True)
class Appended:
    head: bytes  # the file's first two lines (for the validation of the new lines)
    scan: bytes  # the new lines with OVERLAP bytes before them (for the secret scan)
    lines: bytes  # the new lines


def applies(relpath: str) -> bool:
    return protocol.classify(relpath) in KINDS


def appended(before: Checked | None, data: bytes) -> Appended | None:
    """What was appended to a file that held `before` when checked: None unless `data` begins with exactly
    those bytes, they ended a line, and there is something after them."""
    if before is None or before.size == 0 or len(data) <= before.size:
        return None
    view = memoryview(data)
    if data[before.size - 1] != 0x0A or _digest(view[:before.size]) != before.digest:
        return None
    second = data.find(b"\n", data.find(b"\n") + 1)
    return Appended(data[:second + 1], data[max(0, before.size - OVERLAP):], data[before.size:])


def _digest(data: memoryview) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()
