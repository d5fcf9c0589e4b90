"""A text read as one byte a character, each byte naming the character's kind. Pure.

A class search (`[A-Za-z][013457]`) tests every character of a text against the class; a substring search of
bytes skips through them many times faster. `shape(text, table)` is the text's UTF-8 with every continuation
byte deleted (each character is then its lead byte alone, so offset i of the shape is character i of the text)
and every lead byte translated by `table` (`table(kinds)`: a byte naming the kind of the ASCII characters given,
and of the characters led by the given lead bytes, a space for everything else). A substring search of the
shape then finds where a sequence of kinds occurs: exactly, for kinds of ASCII characters; a superset, for kinds
named by lead bytes (a lead byte leads a block of 64 or 4,096 characters).
"""

from __future__ import annotations

from typing import Final

_CONTINUATION: Final = bytes(range(0x80, 0xC0))


def table(kinds: dict[bytes, str]) -> bytes:
    """A translation table: for each kind (one byte), the ASCII characters and lead bytes (as str of code
    points) it names; every other byte becomes a space."""
    out = bytearray(b" " * 256)
    for kind, members in kinds.items():
        for c in members:
            out[ord(c)] = kind[0]
    return bytes(out)


def utf8(text: str) -> bytes:
    """What `shape` reads: the text's UTF-8 (lone surrogates too, as three bytes each)."""
    return text.encode("utf-8", "surrogatepass")


def shape(data: bytes, tab: bytes) -> bytes:
    """A text's `utf8` as one byte a character, translated by `tab` (see the module)."""
    return data.translate(tab, _CONTINUATION)
