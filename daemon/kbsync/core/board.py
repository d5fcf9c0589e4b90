"""The knowledge board, LEARNING_BOARD.md: parse, render, validate, repair, edit. Pure.

The file is kept as raw blocks (preamble, section headings, section text, one
block per entry), so rendering a parsed board gives back the same bytes, and a
person's formatting of an entry survives until the program rewrites that entry.
Entries themselves are kbsync.core.boardentry's (re-exported here). See docs/board.md.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from dataclasses import dataclass
from typing import Final

from kbsync.core.boardentry import (
    CONFIDENCES as CONFIDENCES,
)
from kbsync.core.boardentry import (
    FIELD_NAMES as FIELD_NAMES,
)
from kbsync.core.boardentry import (
    FIELDS as FIELDS,
)
from kbsync.core.boardentry import (
    HEADING,
    REPAIR_HINT,
    eol,
    strip_eol,
    with_status,
)
from kbsync.core.boardentry import (
    LABELS as LABELS,
)
from kbsync.core.boardentry import (
    MAX_SUMMARY as MAX_SUMMARY,
)
from kbsync.core.boardentry import (
    REQUIRED as REQUIRED,
)
from kbsync.core.boardentry import (
    STATUSES as STATUSES,
)
from kbsync.core.boardentry import (
    TYPES as TYPES,
)
from kbsync.core.boardentry import (
    Entry as Entry,
)
from kbsync.core.boardentry import (
    EntryBlock as EntryBlock,
)
from kbsync.core.boardentry import (
    Note as Note,
)
from kbsync.core.boardentry import (
    canonical_enum as canonical_enum,
)
from kbsync.core.boardentry import (
    entry_from_dict as entry_from_dict,
)
from kbsync.core.boardentry import (
    entry_from_fields as entry_from_fields,
)
from kbsync.core.boardentry import (
    entry_key as entry_key,
)
from kbsync.core.boardentry import (
    entry_problems as entry_problems,
)
from kbsync.core.boardentry import (
    field_line as field_line,
)
from kbsync.core.boardentry import (
    field_problems as field_problems,
)
from kbsync.core.boardentry import (
    normalize_date as normalize_date,
)
from kbsync.core.boardentry import (
    parse_entry as parse_entry,
)
from kbsync.core.boardentry import (
    render_entry as render_entry,
)
from kbsync.core.boardentry import (
    split_key as split_key,
)
from kbsync.core.boardentry import (
    split_list as split_list,
)
from kbsync.core.findings import Finding
from kbsync.core.protocol import BOARD_MD, BOARD_SECTIONS

RECORDS: Final = BOARD_SECTIONS[2]
_FENCE = re.compile(r"^[ \t]*(```|~~~)")

@dataclass(frozen=True)
class Section:
    start: int
    heading: str  # the heading line as written, with its line ending
    name: str | None  # the board section it is (even when drifted), or None for an extra section
    intro: str  # text after the heading, before the first entry
    entries: tuple[EntryBlock, ...]
    note: Note | None = None  # heading drift, with its repair


@dataclass(frozen=True)
class Board:
    preamble: str
    sections: tuple[Section, ...]

    def entries(self) -> list[EntryBlock]:
        return [b for s in self.sections if s.name == RECORDS for b in s.entries]

    def find(self, key: str) -> EntryBlock | None:
        return next((b for b in self.entries() if b.entry.key == key), None)


def _headings(lines: list[str]) -> list[tuple[int, int, str]]:
    """(index, level, text) of every ATX heading outside fenced code."""
    out: list[tuple[int, int, str]] = []
    fence: str | None = None
    for i, line in enumerate(lines):
        f = _FENCE.match(line)
        if f:
            fence = None if fence == f.group(1) else (fence or f.group(1))
            continue
        m = None if fence else HEADING.match(strip_eol(line))
        if m:
            out.append((i, len(m.group(1)), m.group(2)))
    return out


def _section_name(text: str) -> tuple[str, str] | None:
    """(section, note after a colon) when a heading's text names a board section."""
    parts = re.split(r"[:：]", text, maxsplit=1)
    name = parts[0].strip()
    return (name, parts[1].strip() if len(parts) > 1 else "") if name in BOARD_SECTIONS else None


# ---- the board ------------------------------------------------------------------

def _is_section_heading(level: int, text: str) -> bool:
    return level == 2 or (level in (1, 3) and _section_name(text) is not None)


def _section(lines: list[str], start: int, end: int, heads: list[tuple[int, int, str]]) -> Section:
    heading = lines[start]
    level, text = next((lv, t) for i, lv, t in heads if i == start)
    named = _section_name(text)
    name = named[0] if named else None
    note = None
    canon = f"## {name}"
    if named and strip_eol(heading) != canon:
        repl = canon + (eol(heading) or "\n") + named[1] if named[1] else canon
        note = Note(start, "error", f"heading {strip_eol(heading)!r} should be {canon!r}; {REPAIR_HINT} fixes it", repl)
    cuts = [i for i, lv, t in heads if start < i < end and lv == 3 and _section_name(t) is None] if name == RECORDS else []
    bounds = cuts + [end]
    intro = "".join(lines[start + 1:bounds[0]])
    entries = tuple(parse_entry("".join(lines[a:b]), a) for a, b in zip(bounds, bounds[1:]))
    return Section(start, heading, name, intro, entries, note)


@functools.lru_cache(maxsize=4)  # a Board is immutable: one read of a page parses each text once, not per part
def parse_board(text: str) -> Board:
    """Parse LEARNING_BOARD.md; never fails; render_board(parse_board(t)) == t."""
    lines = text.splitlines(keepends=True)
    heads = _headings(lines)
    starts = [i for i, lv, t in heads if _is_section_heading(lv, t)]
    bounds = starts + [len(lines)]
    preamble = "".join(lines[: bounds[0]])
    return Board(preamble, tuple(_section(lines, a, b, heads) for a, b in zip(bounds, bounds[1:])))


def render_board(board: Board) -> str:
    parts = [board.preamble]
    for s in board.sections:
        parts += [s.heading, s.intro, *(b.raw for b in s.entries)]
    return "".join(parts)


NEW_BOARD: Final = """# 学习看板

## 长期说明

这里记录跨会话仍然有用的经验：每条记录是一个三级标题，下面是它的字段和核心内容。
开始一项任务前，先按场景和主题查找相关记录；用 `kbsync board add` 添加或更新记录，
用 `kbsync board feedback` 记录它是否有用。

## 长期趋势

## 学习记录
"""


# ---- validation and repair ------------------------------------------------------

def _board_notes(board: Board) -> list[Note]:
    notes: list[Note] = []
    names = [s.name for s in board.sections if s.name]
    for name in BOARD_SECTIONS:
        if name not in names:
            notes.append(Note(0, "error", f"section '## {name}' is missing; {REPAIR_HINT} adds it"))
    for s in board.sections:
        notes += [s.note] if s.note else []
        if s.name and names.count(s.name) > 1 and s is not next(x for x in board.sections if x.name == s.name):
            notes.append(Note(s.start, "warning", f"section '## {s.name}' appears again; merge it by hand"))
    present = [n for n in dict.fromkeys(names)]
    if len(present) == len(BOARD_SECTIONS) and present != list(BOARD_SECTIONS):
        notes.append(Note(0, "warning", f"sections are out of order; expected {' '.join(BOARD_SECTIONS)}"))
    seen: dict[str, int] = {}
    for b in board.entries():
        notes += list(b.notes)
        if b.entry.key in seen:
            notes.append(Note(b.start, "error", f"entry {b.entry.key} appears twice (first on line {seen[b.entry.key] + 1}); "
                              "keep one by hand"))
        seen.setdefault(b.entry.key, b.start)
    return notes


def validate_board(text: str, path: str = BOARD_MD) -> list[Finding]:
    """Every finding for a board's text; the file is valid when none is an error."""
    return sorted(Finding(path, n.line + 1, n.level, n.message) for n in _board_notes(parse_board(text)))


def _insert_missing(text: str) -> tuple[str, list[str]]:
    board = parse_board(text)
    names = [s.name for s in board.sections]
    fixes: list[str] = []
    for pos, name in enumerate(BOARD_SECTIONS):
        if name in names:
            continue
        later = next((s for s in board.sections if s.name in BOARD_SECTIONS[pos + 1:]), None)
        lines = text.splitlines(keepends=True)
        block = f"## {name}\n\n"
        if later is None:
            body = text if not text or text.endswith("\n") else text + "\n"
            text = body + ("\n" if body.strip() and not body.endswith("\n\n") else "") + block.rstrip("\n") + "\n"
        else:
            text = "".join(lines[: later.start] + [block] + lines[later.start:])
        fixes.append(f"added the missing section '## {name}'")
        board = parse_board(text)
        names = [s.name for s in board.sections]
    return text, fixes


def repair_board(text: str) -> tuple[str, list[str]]:
    """Fix what can be fixed without losing a character; idempotent. Returns (text, fixes)."""
    lines = text.splitlines(keepends=True)
    fixes: list[str] = []
    for note in _board_notes(parse_board(text)):
        if note.replacement is not None:
            lines[note.line] = note.replacement + eol(lines[note.line])
            fixes.append(f"line {note.line + 1}: {note.message}")
    text = "".join(lines)
    closed: list[str] = []
    if not set(BOARD_SECTIONS) <= {s.name for s in parse_board(text).sections}:
        text, closed = _close_open_fence(text)
    text, added = _insert_missing(text)
    return text, fixes + closed + added


def _close_open_fence(text: str) -> tuple[str, list[str]]:
    """A code fence left open to the end of the file closed on a line of its own, so that the sections a
    repair adds after it are headings (and a second repair finds them: repair stays idempotent)."""
    fence: str | None = None
    opened = 0
    for i, line in enumerate(text.splitlines()):
        f = _FENCE.match(line)
        if f and fence is None:
            fence, opened = f.group(1), i
        elif f and f.group(1) == fence:
            fence = None
    if fence is None:
        return text, []
    body = text if text.endswith("\n") else text + "\n"
    return body + fence + "\n", [f"line {opened + 1}: closed the code fence left open to the end"]


# ---- edits ------------------------------------------------------------------

def upsert(text: str, entry: Entry) -> tuple[str, str]:
    """The board with `entry` added or replaced by key; ("added"|"updated"|"unchanged")."""
    board = parse_board(text if text.strip() else NEW_BOARD)
    if board.find(entry.key) is not None:
        return replace_entry(render_board(board), entry.key, entry)
    return _append_entry(board, entry), "added"


def replace_entry(text: str, key: str, entry: Entry) -> tuple[str, str]:
    """The board with the entry `key` replaced, in its place, by `entry` (whose key may differ).

    KeyError if there is no entry `key`; ValueError if `entry` would take another entry's key.
    """
    board = parse_board(text)
    found = board.find(key)
    if found is None:
        raise KeyError(key)
    if entry.key != key and board.find(entry.key) is not None:
        raise ValueError(f"an entry {entry.key} exists already")
    if found.entry == entry:
        return text, "unchanged"
    trail = found.raw[len(found.raw.rstrip("\r\n")):]
    blank = trail[1:] if trail.startswith("\n") else trail
    return _replace_block(board, found, render_entry(entry) + blank), "updated"


def _replace_block(board: Board, old: EntryBlock, raw: str) -> str:
    sections = tuple(
        dataclasses.replace(s, entries=tuple(dataclasses.replace(b, raw=raw) if b is old else b for b in s.entries))
        for s in board.sections
    )
    return render_board(dataclasses.replace(board, sections=sections))


def _with_blank_line(raw: str) -> str:
    """`raw` ending in one blank line, so that a block can follow it."""
    return raw if raw.endswith("\n\n") else raw + ("\n" if raw.endswith("\n") else "\n\n")


def _append_entry(board: Board, entry: Entry) -> str:
    if RECORDS not in [s.name for s in board.sections]:
        board = parse_board(_insert_missing(render_board(board))[0])
    records = [s for s in board.sections if s.name == RECORDS][-1]
    idx = board.sections.index(records)
    block = render_entry(entry) + ("\n" if idx + 1 < len(board.sections) else "")
    new = EntryBlock(0, block, entry, ())
    if records.entries:
        last = dataclasses.replace(records.entries[-1], raw=_with_blank_line(records.entries[-1].raw))
        records = dataclasses.replace(records, entries=records.entries[:-1] + (last, new))
    else:
        head = _with_blank_line(records.heading + records.intro)
        records = dataclasses.replace(records, heading="", intro=head, entries=(new,))
    sections = board.sections[:idx] + (records,) + board.sections[idx + 1:]
    return render_board(dataclasses.replace(board, sections=sections))


def remove_entry(text: str, key: str) -> str:
    """The board without the entry `key` (KeyError if there is none); the text around it stays."""
    board = parse_board(text)
    found = board.find(key)
    if found is None:
        raise KeyError(key)
    return _replace_block(board, found, "")


def set_status(text: str, key: str, status: str) -> tuple[str, bool]:
    """The board with one entry's status changed in place (only its status line); (text, changed)."""
    board = parse_board(text)
    found = board.find(key)
    if found is None:
        raise KeyError(key)
    if found.entry.status == status:
        return text, False
    return _replace_block(board, found, with_status(found.raw, status)), True
