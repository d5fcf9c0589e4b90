"""Passages of a record, pure: its `##` sections, a long one cut at paragraph or line boundaries.

A passage is what a search names as the best place of a hit and what a context
pack quotes first. A record's body is split at its `## ` headings (outside code
fences); a section longer than about PASSAGE_TOKENS (kbsync.retrieval.context's
estimate) is cut into pieces of about that size at blank lines (paragraphs, a
dialogue's turns), and a paragraph still longer at its line breaks; a single
line is never cut. The split is a function of the text alone, so the same file
always gives the same passages. Board entries and facts are whole: one passage.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kbsync.retrieval.context import estimate_tokens

PASSAGE_TOKENS = 200
_HEADING = re.compile(r"^##[ \t]+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_BLANK = re.compile(r"\n[ \t]*\n")


@dataclass(frozen=True)
class Passage:
    ordinal: int  # 0-based, in file order
    heading: str  # the `##` heading it stands under ("" before the first)
    text: str


def split(body: str, *, whole: bool = False) -> list[Passage]:
    """The passages of `body` (one, headed "", when `whole`); none for a body of blank space."""
    if whole:
        return [Passage(0, "", body.strip())] if body.strip() else []
    out: list[Passage] = []
    for heading, text in sections(body):
        for piece in _pieces(text):
            out.append(Passage(len(out), heading, piece))
    return out


def sections(body: str) -> list[tuple[str, str]]:
    """(heading, text) of each `##` section of `body`, the text before the first under ""."""
    found: list[tuple[str, list[str]]] = [("", [])]
    fence = ""
    for line in body.split("\n"):
        m = _FENCE.match(line)
        if m and (not fence or m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence)):
            fence = "" if fence else m.group(1)
        head = None if fence else _HEADING.match(line)
        if head:
            found.append((head.group(1), []))
        else:
            found[-1][1].append(line)
    return [(h, "\n".join(lines).strip()) for h, lines in found if "\n".join(lines).strip()]


def _pieces(text: str) -> list[str]:
    """`text` in pieces of about PASSAGE_TOKENS, cut between paragraphs, else between lines."""
    if estimate_tokens(text) <= PASSAGE_TOKENS:
        return [text]
    units: list[tuple[str, str]] = []  # (text, the separator it had before it)
    for para in _BLANK.split(text):
        if estimate_tokens(para) <= PASSAGE_TOKENS:
            units.append((para.strip("\n"), "\n\n"))
        else:
            units += [(line, "\n") for line in para.split("\n")]
    pieces: list[str] = []
    size = 0
    for unit, sep in (u for u in units if u[0].strip()):
        cost = estimate_tokens(unit) + 1  # the separator's token: the sum bounds the estimate of the whole
        if pieces and size + cost <= PASSAGE_TOKENS:
            pieces[-1] += sep + unit
            size += cost
        else:
            pieces.append(unit)
            size = cost - 1
    return pieces
