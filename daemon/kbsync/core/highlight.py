"""Marking the words of a query in a text, pure: what a search result shows highlighted.

A term is matched case-insensitively anywhere in the text; a term that mixes Chinese and other
characters (`合同deploy`) is matched piece by piece, as the search index matches it (every run of
CJK characters and every word on its own). Overlapping matches merge into one marked stretch.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_PIECE = re.compile(f"[{CJK}]+|[^\\W_{CJK}]+")
_SPACE = re.compile(r"\s+")
ELLIPSIS = "…"


@dataclass(frozen=True)
class Segment:
    text: str
    marked: bool


def pieces(terms: tuple[str, ...] | list[str]) -> list[str]:
    """The pieces a match is looked for by, longest first, each once."""
    found = {p.casefold(): p for t in terms for p in _PIECE.findall(t)}
    return sorted(found.values(), key=lambda p: (-len(p), p))


def spans(text: str, terms: tuple[str, ...] | list[str]) -> list[tuple[int, int]]:
    """(start, end) of each marked stretch of `text`, in order, overlapping matches merged."""
    found = sorted(m.span() for p in pieces(terms) for m in re.finditer(re.escape(p), text, re.IGNORECASE))
    merged: list[tuple[int, int]] = []
    for start, end in found:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def mark(text: str, terms: tuple[str, ...] | list[str]) -> list[Segment]:
    """`text` cut into plain and marked segments (the plain ones may be empty only when the text is)."""
    out: list[Segment] = []
    pos = 0
    for start, end in spans(text, terms):
        if start > pos:
            out.append(Segment(text[pos:start], False))
        out.append(Segment(text[start:end], True))
        pos = end
    if pos < len(text) or not out:
        out.append(Segment(text[pos:], False))
    return out


def snippet(text: str, terms: tuple[str, ...] | list[str], width: int = 160) -> str:
    """About `width` characters of `text` (whitespace collapsed) around its first match; its start without one."""
    flat = _SPACE.sub(" ", text).strip()
    if len(flat) <= width:
        return flat
    found = spans(flat, terms)
    start = max(0, found[0][0] - width // 3) if found else 0
    end = min(len(flat), start + width)
    start = max(0, end - width)
    return (ELLIPSIS if start else "") + flat[start:end].strip() + (ELLIPSIS if end < len(flat) else "")
