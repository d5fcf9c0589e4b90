"""A line diff of two texts laid side by side, the changed words of a changed line marked; pure.

Lines are matched as `difflib` matches them. Within a block of replaced lines, the lines are paired
in order and each pair is compared word by word (a word is a run of letters or digits, one CJK
character, one other character, or a run of spaces); lines left over are removed or added whole.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Literal

from kbsync.core.highlight import CJK, Segment

Kind = Literal["same", "changed", "removed", "added"]
_TOKEN = re.compile(f"[{CJK}]|[^\\W{CJK}]+|\\s+|[^\\w\\s]")


@dataclass(frozen=True)
class Side:
    number: int  # 1-based line number in its version
    segments: tuple[Segment, ...]  # marked: changed words


@dataclass(frozen=True)
class Row:
    kind: Kind
    old: Side | None  # None: the line is only in the new version
    new: Side | None  # None: the line is only in the old version


def tokens(line: str) -> list[str]:
    return _TOKEN.findall(line)


def _joined(parts: list[tuple[str, bool]]) -> tuple[Segment, ...]:
    out: list[Segment] = []
    for text, marked in parts:
        if out and out[-1].marked == marked:
            out[-1] = Segment(out[-1].text + text, marked)
        elif text:
            out.append(Segment(text, marked))
    return tuple(out) or (Segment("", False),)


def word_marks(old: str, new: str) -> tuple[tuple[Segment, ...], tuple[Segment, ...]]:
    """Both lines as segments, the words that differ marked."""
    a, b = tokens(old), tokens(new)
    left: list[tuple[str, bool]] = []
    right: list[tuple[str, bool]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        left.append(("".join(a[i1:i2]), tag != "equal"))
        right.append(("".join(b[j1:j2]), tag != "equal"))
    return _joined(left), _joined(right)


def _whole(number: int, line: str, marked: bool) -> Side:
    return Side(number, (Segment(line, marked),))


def _replaced(old: list[str], new: list[str], i1: int, j1: int) -> list[Row]:
    rows: list[Row] = []
    for k in range(max(len(old), len(new))):
        if k < len(old) and k < len(new):
            left, right = word_marks(old[k], new[k])
            rows.append(Row("changed", Side(i1 + k + 1, left), Side(j1 + k + 1, right)))
        elif k < len(old):
            rows.append(Row("removed", _whole(i1 + k + 1, old[k], True), None))
        else:
            rows.append(Row("added", None, _whole(j1 + k + 1, new[k], True)))
    return rows


def line_diff(old_text: str, new_text: str) -> list[Row]:
    """Every line of both versions, aligned: the same, changed (paired, words marked), removed or added."""
    old, new = old_text.splitlines(), new_text.splitlines()
    rows: list[Row] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            rows += [Row("same", _whole(i1 + k + 1, old[i1 + k], False), _whole(j1 + k + 1, new[j1 + k], False))
                     for k in range(i2 - i1)]
        else:
            rows += _replaced(old[i1:i2], new[j1:j2], i1, j1)
    return rows
