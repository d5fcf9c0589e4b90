"""Runs of encoded text and what they decode to. Pure.

`decoded_runs(text)` finds base64 (standard and URL-safe), hex (plain or `\\x41`
escapes), percent-encoded text, Unicode tag characters (invisible letters) and
text written backwards, and returns each run that decodes to readable text (valid
UTF-8, mostly letters and spaces) with its span in `text`. Binary payloads, hashes
and ids decode to unreadable bytes and are left out.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from typing import Callable, Final, Iterator

MIN_DECODED: Final = 12  # characters; shorter payloads hold no sentence

_B64: Final = re.compile(r"(?<![A-Za-z0-9+/=_-])(?:[A-Za-z0-9+/]{4}){5,}(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?"
                         r"(?![A-Za-z0-9+/=])|(?<![\w-])[A-Za-z0-9_-]{24,}(?![\w-])")
_HEX: Final = re.compile(r"(?<![0-9A-Za-z])(?:[0-9a-fA-F]{2}){12,}(?![0-9A-Za-z])|(?:\\x[0-9a-fA-F]{2}){8,}")
_PCT: Final = re.compile(r"(?:%[0-9A-Fa-f]{2}[\w.~-]*){6,}")
_TAGS: Final = re.compile("[\U000e0020-\U000e007e]{4,}")
_REVERSED_HINTS: Final = ("snoitcurtsni", "erongi", "dragersid", "tpmorp", "drowssap", "noitasrevnoc", "eteled",
                          "tnatsissa", " eht ", "uoy ", "ruoy ", "令指", "略忽", "码密", "除删", "答回")


@dataclass(frozen=True)
class Decoded:
    start: int
    end: int
    kind: str  # base64, hex, percent, tags, reversed
    text: str


def readable(text: str) -> bool:
    """Whether decoded text looks like words: no control characters, mostly letters, some spaces or CJK."""
    if len(text) < MIN_DECODED or any(ord(c) < 32 and c not in "\t\n\r" for c in text) or "\ufffd" in text:
        return False
    letters = sum(c.isalpha() for c in text)
    wide = sum("\u4e00" <= c <= "\u9fff" for c in text)
    return letters >= 0.6 * len(text.replace(" ", "")) and (text.count(" ") >= 2 or wide >= 4)


def _utf8(data: bytes) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _b64(run: str) -> str | None:
    if run.isdigit() or re.fullmatch(r"[0-9a-fA-F]+", run):
        return None  # a number or a hex digest: the hex decoder's job
    padded = run + "=" * (-len(run) % 4)
    try:
        return _utf8(base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True))
    except (binascii.Error, ValueError):
        return None


def _hex(run: str) -> str | None:
    return _utf8(bytes.fromhex(run.replace("\\x", "")))


_PCT_BYTE: Final = re.compile(r"%([0-9A-Fa-f]{2})")


def _pct(run: str) -> str | None:
    """Percent-decoding (the bytes as UTF-8); None when they are not UTF-8."""
    data, at = bytearray(), 0
    for m in _PCT_BYTE.finditer(run):
        data += run[at:m.start()].encode("utf-8") + bytes([int(m.group(1), 16)])
        at = m.end()
    return _utf8(bytes(data + run[at:].encode("utf-8")))


def _tags(run: str) -> str | None:
    return "".join(chr(ord(c) - 0xE0000) for c in run)


_DECODERS: Final[tuple[tuple[str, re.Pattern[str], Callable[[str], str | None]], ...]] = (
    ("base64", _B64, _b64), ("hex", _HEX, _hex), ("percent", _PCT, _pct), ("tags", _TAGS, _tags))


def _reversed_lines(text: str, low: str) -> Iterator[Decoded]:
    if not any(h in low for h in _REVERSED_HINTS):
        return
    at = 0
    for line in text.split("\n"):
        if any(h in line.lower() for h in _REVERSED_HINTS):
            yield Decoded(at, at + len(line), "reversed", line[::-1])
        at += len(line) + 1


# Every run the decoders above find holds a long run of these characters or one of the escapes, and none
# crosses a line break.
_LONG_RUN: Final = re.compile(r"[A-Za-z0-9+/_-]{20}")
_ESCAPE: Final = re.compile(r"\\x[0-9a-fA-F]{2}|%[0-9A-Fa-f]{2}|[\U000e0020-\U000e007e]")
_ESCAPE_HINT: Final = re.compile(r"[\\%\U000e0020-\U000e007e]")


def _candidate_lines(text: str) -> Iterator[tuple[int, str]]:
    """The lines of `text` that may hold an encoded run, with their offsets, in order."""
    hits = [m.start() for m in _LONG_RUN.finditer(text)]
    if _ESCAPE_HINT.search(text):
        hits = sorted(hits + [m.start() for m in _ESCAPE.finditer(text)])
    end = -1
    for at in hits:
        if at < end:
            continue
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        yield start, text[start:end]


def _line_runs(at: int, line: str) -> Iterator[Decoded]:
    for kind, pattern, decode in _DECODERS:
        if kind == "percent" and "%" not in line:
            continue
        for m in pattern.finditer(line):
            try:
                got = decode(m.group())
            except (ValueError, UnicodeDecodeError):
                got = None
            if got is not None and readable(got):
                yield Decoded(at + m.start(), at + m.end(), kind, got)


def decoded_runs(text: str) -> list[Decoded]:
    """Every encoded run of `text` that decodes to readable text, in order of position."""
    out = [d for at, line in _candidate_lines(text) for d in _line_runs(at, line)]
    out.extend(_reversed_lines(text, text.lower()))
    return sorted(out, key=lambda d: (d.start, d.end))
