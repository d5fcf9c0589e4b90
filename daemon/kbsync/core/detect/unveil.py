"""What a text says under simple disguises, for the secret scan and the instruction detector. Pure.

`normalise`: NFKC (full-width and other compatibility letters folded to ASCII) with zero-width and other
invisible format characters removed; line breaks are never added or removed, so line numbers hold. It
runs only on a text holding an invisible character or one that NFKC folds into an ASCII letter, digit
or token punctuation: most text (Chinese prose with its full-width commas and colons included) is
scanned as it is, at no cost but one search.

`runs`: the encoded runs of a text, each decoded once, for both kbsync.core.detect.secrets and
kbsync.core.detect.injection (the last few texts' runs are kept, so a file that both check is decoded once):
- a run of the base64 alphabet (standard or URL-safe, `=` padding allowed) of MIN_RUN characters and
  more: hex when it is all pairs of hex digits (a leading `0x` allowed), else base64, and the runs of
  hex digit pairs inside it between separators (`id-4865…`);
- `\\x41` escapes, percent-encoding, Unicode tag characters (invisible letters);
- a line written backwards (one holding a reversed instruction word: `snoitcurtsni`, `略忽`), whatever
  its length.
A run of the others is kept when it decodes to UTF-8 text of MIN_DECODED characters and more with no control character
(tab and line breaks apart); binary payloads decode to no such text and are left out. Each consumer then
asks for what it needs: the detector for readable runs (mostly letters, `readable`), the secret scan
for runs long enough to hide a token, and the runs inside those (`nested`, up to MAX_DEPTH layers:
"base64/hex" is hex inside base64).
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Final, Iterator

from ahocorasick_rs import BytesAhoCorasick, Implementation

MIN_RUN: Final = 20  # characters of the base64 alphabet: 15 bytes, the shortest sentence or token worth a look
MIN_DECODED: Final = 12  # characters of decoded text
MAX_DEPTH: Final = 2
_INVISIBLE_CHARS = ("\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e"
                    "\u2060-\u2064\u2066-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0")
_INVISIBLE = re.compile(f"[{_INVISIBLE_CHARS}]")
# what NFKC folds into the letters, digits and punctuation of a token: full-width forms, mathematical,
# enclosed, super- and subscript letters and digits, modifier letters, ligatures, small forms
_FOLDS_TO_TOKEN = ("\uff0b\uff0d\uff0f\uff10-\uff19\uff1d\uff21-\uff3a\uff3f\uff41-\uff5a\U0001d400-\U0001d7ff"
                   "\u2460-\u24ff\U0001f100-\U0001f1ff\u2070-\u209f\u2100-\u214f\u02b0-\u02ff\u1d2c-\u1dbf"
                   "\ufb00-\ufb06\ufe50-\ufe6f\u3251-\u32bf")
_DISGUISED = re.compile(f"[{_INVISIBLE_CHARS}{_FOLDS_TO_TOKEN}]")

_HEX: Final = re.compile(r"(?:0x)?((?:[0-9a-fA-F]{2})+)")
_HEX_PART: Final = re.compile(r"(?<![0-9A-Za-z])(?:[0-9a-fA-F]{2}){%d,}(?![0-9A-Za-z])" % (MIN_RUN // 2))
_X_ESCAPES: Final = re.compile(r"(?:\\x[0-9a-fA-F]{2}){8,}")
_PCT_RUN: Final = re.compile(r"(?<![A-Za-z0-9._~+/=:%-])(?:%[0-9A-Fa-f]{2}|[A-Za-z0-9._~+/=:-]){16,}")
_PCT_HINT: Final = re.compile(r"%[0-9A-Fa-f]{2}")
_PCT_BYTE: Final = re.compile(rb"%([0-9A-Fa-f]{2})")
_TAGS: Final = re.compile("[\U000e0020-\U000e007e]{4,}")
_TAG_HINT: Final = re.compile("[\U000e0020-\U000e007e]")
_NOT_TEXT: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffd]")
_REVERSED_HINTS: Final = ("snoitcurtsni", "erongi", "dragersid", "tpmorp", "drowssap", "noitasrevnoc", "eteled",
                          "tnatsissa", " eht ", "uoy ", "ruoy ", "令指", "略忽", "码密", "除删", "答回")
_REVERSED_BYTES: Final = BytesAhoCorasick([h.encode("utf-8") for h in _REVERSED_HINTS],
                                          implementation=Implementation.DFA)


@dataclass(frozen=True)
class Run:
    start: int  # the run's span in the text it was found in (the outermost text for nested runs)
    end: int
    encoding: str  # base64, hex, percent, tags, reversed; "base64/hex" for a nested run
    text: str  # what it decodes to


def normalise(text: str) -> str:
    """NFKC without invisible characters; a text with nothing to fold or remove is returned as it is."""
    if text.isascii() or not _DISGUISED.search(text):
        return text
    return unicodedata.normalize("NFKC", _INVISIBLE.sub("", text))


@lru_cache(maxsize=8)
def runs(text: str) -> tuple[Run, ...]:
    """Every encoded run of `text` that decodes to text (see the module), in order of position."""
    return _decoded(text)


def nested(text: str) -> Iterator[Run]:
    """Each run of `text` and the runs inside what it decodes to, up to MAX_DEPTH layers."""
    return _nested(runs(text), 1)


def _nested(found: tuple[Run, ...], depth: int) -> Iterator[Run]:
    for run in found:
        yield run
        if depth < MAX_DEPTH:
            for inner in _nested(_decoded(run.text), depth + 1):
                yield Run(run.start, run.end, f"{run.encoding}/{inner.encoding}", inner.text)


def _decoded(text: str) -> tuple[Run, ...]:
    data = text.encode("utf-8", "surrogatepass")  # looked through by the bytes searches of both
    found = [*_alphabet_runs(text, data), *_escaped_runs(text, data), *_reversed_lines(text, data)]
    return tuple(sorted(found, key=lambda r: (r.start, r.end)))


def readable(text: str) -> bool:
    """Whether decoded text looks like words: mostly letters, with some spaces or CJK characters."""
    letters = sum(c.isalpha() for c in text)
    wide = sum("\u4e00" <= c <= "\u9fff" for c in text)
    return letters >= 0.6 * len(text.replace(" ", "")) and (text.count(" ") >= 2 or wide >= 4)


def _alphabet_runs(text: str, data: bytes) -> Iterator[Run]:
    for at, end in _long_runs(text, data):
        for r in _run_decoded(text[at:end]):
            yield Run(at + r.start, at + r.end, r.encoding, r.text)


_ALPHABET: Final = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-")
# UTF-8 bytes marked: the alphabet's `a`, continuation bytes (each the second, third or fourth of a character) `c`,
# the rest spaces
_MARKED: Final = bytes(97 if c in _ALPHABET else 99 if 0x80 <= c < 0xC0 else 32 for c in range(256))
# MIN_RUN `a`s and more: a literal prefix, which the search finds without restarting inside every shorter run
_LONG: Final = re.compile(b"a" * (MIN_RUN - 1) + b"a+")


def _long_runs(text: str, data: bytes) -> list[tuple[int, int]]:
    """The spans of the maximal runs of the alphabet of MIN_RUN characters and more, each with up to two `=` after it,
    in order: what `re.finditer("[A-Za-z0-9+/_-]{20,}={0,2}", text)` finds, at a fraction of its cost (its search
    restarts inside every shorter run). They are found in `data`, the text's UTF-8; a byte offset less the
    continuation bytes before it is the offset in the text."""
    marked, out = data.translate(_MARKED), []
    shift = last = 0
    for m in _LONG.finditer(marked):
        at, end = m.span()
        shift, last = shift + marked.count(b"c", last, at), at
        at, end = at - shift, end - shift
        out.append((at, end + (text[end:end + 2] == "==") + (text[end:end + 1] == "=")))
    return out


@lru_cache(maxsize=4096)
def _run_decoded(run: str) -> tuple[Run, ...]:
    """The decoded runs of one run of the alphabet (offsets within it): the same identifiers and paths recur in a
    workspace's files, each decoded once."""
    if hexed := _HEX.fullmatch(run):
        return tuple(_kept(0, len(run), "hex", _from_hex(hexed.group(1))))
    found = [*_kept(0, len(run), "base64", _from_base64(run))]
    for part in _HEX_PART.finditer(run):  # hex digits between separators: `id-4865…`
        found += _kept(part.start(), part.end(), "hex", _from_hex(part.group()))
    return tuple(found)


def _kept(start: int, end: int, encoding: str, decoded: str | None) -> Iterator[Run]:
    if decoded is not None:
        yield Run(start, end, encoding, decoded)


def _escaped_runs(text: str, data: bytes) -> Iterator[Run]:
    decoders: list[tuple[str, re.Pattern[str], Callable[[str], str | None]]] = []
    if "\\x" in text:
        decoders.append(("hex", _X_ESCAPES, lambda run: _from_hex(run.replace("\\x", ""))))
    if "%" in text:
        yield from _percent_runs(text)
    if b"\xf3\xa0" in data and _TAG_HINT.search(text):  # tag characters are F3 A0 80 xx and F3 A0 81 xx in UTF-8
        decoders.append(("tags", _TAGS, lambda run: _as_text("".join(chr(ord(c) - 0xE0000) for c in run))))
    for encoding, pattern, decode in decoders:
        for m in pattern.finditer(text):
            yield from _kept(m.start(), m.end(), encoding, decode(m.group()))


def _percent_runs(text: str) -> Iterator[Run]:
    """The percent-encoded runs, searched for only on the lines that hold an escape (no run crosses a line)."""
    end = -1
    for hint in _PCT_HINT.finditer(text):
        if hint.start() < end:
            continue
        start, end = text.rfind("\n", 0, hint.start()) + 1, text.find("\n", hint.start())
        end = len(text) if end < 0 else end
        for m in _PCT_RUN.finditer(text, start, end):
            yield from _kept(m.start(), m.end(), "percent", _from_percent(m.group()))


def _reversed_lines(text: str, data: bytes) -> Iterator[Run]:
    """Each line holding a reversed hint (in any case), read backwards. The hints are looked for first in `data`, the
    text's UTF-8, with its ASCII letters lower-cased: that is the lower-cased text's UTF-8 unless the text holds one
    of the two characters whose lower case holds an ASCII letter (İ, the Kelvin sign: looked for in `data` too)."""
    low = data.lower()
    if not _REVERSED_BYTES.find_matches_as_indexes(low) and b"\xc4\xb0" not in data and b"\xe2\x84\xaa" not in data:
        return
    at = 0
    for line in text.split("\n"):
        if any(h in line.lower() for h in _REVERSED_HINTS):
            yield Run(at, at + len(line), "reversed", line[::-1])
        at += len(line) + 1


def _from_hex(digits: str) -> str | None:
    return _from_bytes(bytes.fromhex(digits))


def _from_base64(run: str) -> str | None:
    body = run.rstrip("=").replace("-", "+").replace("_", "/")
    body = body[: len(body) - 1] if len(body) % 4 == 1 else body
    try:
        data = base64.b64decode(body + "=" * (-len(body) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None
    return _from_bytes(data)


def _from_percent(run: str) -> str | None:
    return _from_bytes(_PCT_BYTE.sub(lambda m: bytes((int(m.group(1), 16),)), run.encode("utf-8"))) if "%" in run \
        else None


def _from_bytes(data: bytes) -> str | None:
    try:
        return _as_text(data.decode("utf-8"))
    except UnicodeDecodeError:
        return None


def _as_text(text: str) -> str | None:
    """`text` where it is text: MIN_DECODED characters and more, no control character; None otherwise."""
    return None if len(text) < MIN_DECODED or _NOT_TEXT.search(text) else text
