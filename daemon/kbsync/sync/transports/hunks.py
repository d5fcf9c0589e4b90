"""Unified-diff hunks applied to the bytes they were made from: GitHub's `patch` of a compared file.

Pure and strict: every context and removed line must match, or the answer is
None and the caller fetches the blob instead. The caller also checks the result
against the blob sha GitHub named, so a hunk read wrongly can never pass.
"""

from __future__ import annotations

import re

HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")


def lines(data: bytes) -> list[bytes]:
    """`data` cut after each newline; a last line without one is kept as it is."""
    parts = data.split(b"\n")
    return [p + b"\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def apply(old: bytes, patch: str) -> bytes | None:
    """`old` with the hunks of `patch` applied; None when they do not fit it."""
    source, out, pos, last = lines(old), list[bytes](), 0, b""
    for raw in patch.encode("utf-8", "surrogatepass").split(b"\n"):  # a lone surrogate from JSON never matches
        head = HUNK.match(raw)
        if head:
            start = int(head.group(1)) - (0 if head.group(2) == b"0" else 1)
            if start < pos or start > len(source):
                return None
            out += source[pos:start]
            pos, last = start, b""
        elif raw[:1] in (b" ", b"-"):
            if pos >= len(source) or source[pos].removesuffix(b"\n") != raw[1:]:
                return None
            if raw[:1] == b" ":
                out.append(source[pos])
            pos, last = pos + 1, raw[:1]
        elif raw[:1] == b"+":
            out.append(raw[1:] + b"\n")
            last = b"+"
        elif raw.startswith(b"\\"):
            if last in (b" ", b"+"):
                out[-1] = out[-1].removesuffix(b"\n")
        elif raw:
            return None
    return b"".join(out + source[pos:])
