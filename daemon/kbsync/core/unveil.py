"""What a text says under simple disguises, for the secret scan. Pure.

`normalise`: NFKC (full-width and other compatibility letters folded to ASCII) with zero-width and other
invisible format characters removed; line breaks are never added or removed, so line numbers hold. It
runs only on a text holding an invisible character or one that NFKC folds into an ASCII letter, digit
or token punctuation: most text (Chinese prose with its full-width commas and colons included) is
scanned as it is, at no cost but one search.
`decoded_runs`: the base64 (standard or URL-safe), hex and percent-encoded runs long enough to hide a
token (MIN_DECODED bytes and more), decoded, where the result is text; runs inside decoded text are
decoded too, up to MAX_DEPTH layers ("base64/hex": hex inside base64).
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata
from dataclasses import dataclass
from typing import Iterator

MIN_DECODED = 16  # bytes: the shortest token the rules know (an AWS key id) is 20
MAX_DEPTH = 2
_INVISIBLE_CHARS = ("\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e"
                    "\u2060-\u2064\u2066-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0")
_INVISIBLE = re.compile(f"[{_INVISIBLE_CHARS}]")
# what NFKC folds into the letters, digits and punctuation of a token: full-width forms, mathematical,
# enclosed, super- and subscript letters and digits, modifier letters, ligatures, small forms
_FOLDS_TO_TOKEN = ("\uff0b\uff0d\uff0f\uff10-\uff19\uff1d\uff21-\uff3a\uff3f\uff41-\uff5a\U0001d400-\U0001d7ff"
                   "\u2460-\u24ff\U0001f100-\U0001f1ff\u2070-\u209f\u2100-\u214f\u02b0-\u02ff\u1d2c-\u1dbf"
                   "\ufb00-\ufb06\ufe50-\ufe6f\u3251-\u32bf")
_DISGUISED = re.compile(f"[{_INVISIBLE_CHARS}{_FOLDS_TO_TOKEN}]")
_B64_RUN = re.compile(r"[A-Za-z0-9+/_-]{%d,}={0,2}" % ((MIN_DECODED + 2) // 3 * 4))  # a run is matched whole
_HEX = re.compile(r"(?:0x)?((?:[0-9a-fA-F]{2}){%d,})" % MIN_DECODED)
_PCT_RUN = re.compile(r"(?<![A-Za-z0-9._~+/=:%-])(?:%[0-9A-Fa-f]{2}|[A-Za-z0-9._~+/=:-]){" + str(MIN_DECODED) + r",}")
_ESCAPE = re.compile(rb"%([0-9A-Fa-f]{2})")
_NOT_TEXT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffd]")


@dataclass(frozen=True)
class Run:
    start: int  # where the encoded run begins in the text it was found in (the outermost text for nested runs)
    encoding: str
    text: str


def normalise(text: str) -> str:
    """NFKC without invisible characters; a text with nothing to fold or remove is returned as it is."""
    if text.isascii() or not _DISGUISED.search(text):
        return text
    return unicodedata.normalize("NFKC", _INVISIBLE.sub("", text))


def decoded_runs(text: str, depth: int = 1) -> Iterator[Run]:
    """Each encoded run of `text` that decodes to text, and the runs inside those (see the module)."""
    for start, encoding, decoded in _runs(text):
        yield Run(start, encoding, decoded)
        if depth < MAX_DEPTH:
            for inner in decoded_runs(decoded, depth + 1):
                yield Run(start, f"{encoding}/{inner.encoding}", inner.text)


def _runs(text: str) -> Iterator[tuple[int, str, str]]:
    for m in _B64_RUN.finditer(text):
        run = m.group()
        hexed = _HEX.fullmatch(run)
        decoded = _from_hex(hexed.group(1)) if hexed else None
        if decoded is not None:
            yield m.start(), "hex", decoded
        elif (decoded := _from_base64(run)) is not None:
            yield m.start(), "base64", decoded
    if "%" in text:
        for m in _PCT_RUN.finditer(text):
            if "%" in m.group() and (decoded := _as_text(_ESCAPE.sub(_byte, m.group().encode("ascii")))):
                yield m.start(), "percent", decoded


def _byte(m: re.Match[bytes]) -> bytes:
    return bytes((int(m.group(1), 16),))


def _from_hex(digits: str) -> str | None:
    return _as_text(bytes.fromhex(digits))


def _from_base64(run: str) -> str | None:
    body = run.rstrip("=").replace("-", "+").replace("_", "/")
    body = body[: len(body) - 1] if len(body) % 4 == 1 else body
    try:
        data = base64.b64decode(body + "=" * (-len(body) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None
    return _as_text(data)


def _as_text(data: bytes) -> str | None:
    """`data` as UTF-8 text, or None where it is not text (binary, or too short to hide a token)."""
    if len(data) < MIN_DECODED:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return None if _NOT_TEXT.search(text) else normalise(text)
