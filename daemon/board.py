"""The knowledge board, LEARNING_BOARD.md: parse, render, validate, repair. Pure.

The file is kept as raw blocks (preamble, section headings, section text, one
block per entry), so rendering a parsed board gives back the same bytes, and a
person's formatting of an entry survives until the program rewrites that entry.
See docs/board.md for the rendering.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from dataclasses import dataclass
from typing import Any, Final

from kbsync.findings import Finding, Level
from kbsync.protocol import BOARD_MD, BOARD_SECTIONS

TYPES: Final = ("观点", "方法", "踩坑", "工具")
CONFIDENCES: Final = ("high", "medium", "low")
STATUSES: Final = ("active", "decaying", "retired")
MAX_SUMMARY: Final = 100
FIELDS: Final = ("type", "topic", "summary", "scenarios", "confidence", "status", "source", "source_date")
REQUIRED: Final = ("type", "topic", "summary", "core_content", "source", "source_date", "scenarios", "confidence")
RECORDS: Final = BOARD_SECTIONS[2]

LABELS: Final = {
    "type": "类型", "topic": "主题", "summary": "摘要", "scenarios": "场景", "confidence": "置信度",
    "status": "状态", "source": "来源", "source_date": "来源日期", "core_content": "核心内容",
}
_ALIASES: Final = {
    "type": ("类型", "类别", "type", "kind"),
    "topic": ("主题", "话题", "topic"),
    "summary": ("摘要", "概要", "summary"),
    "scenarios": ("场景", "适用场景", "scenarios", "scenario"),
    "confidence": ("置信度", "可信度", "confidence"),
    "status": ("状态", "status"),
    "source": ("来源", "出处", "source"),
    "source_date": ("来源日期", "日期", "source_date", "source date", "source-date", "date"),
    "core_content": ("核心内容", "内容", "正文", "core_content", "core content", "core-content", "content"),
}
FIELD_NAMES: Final = {alias.casefold(): name for name, aliases in _ALIASES.items() for alias in aliases}
_VALUE_SYNONYMS: Final = {
    "type": {"观点": ("opinion", "view", "viewpoint", "insight"), "方法": ("method", "how-to", "howto", "practice"),
             "踩坑": ("pitfall", "gotcha", "trap", "坑"), "工具": ("tool", "tools")},
    "confidence": {"high": ("高",), "medium": ("中", "med"), "low": ("低",)},
    "status": {"active": ("活跃", "有效"), "decaying": ("衰退", "衰减"), "retired": ("退役", "已退役", "停用")},
}
_ENUMS: Final = {"type": TYPES, "confidence": CONFIDENCES, "status": STATUSES}

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t]*$")
_FENCE = re.compile(r"^[ \t]*(```|~~~)")
_FIELD = re.compile(
    r"^[ \t]*(?:[-*+][ \t]+)?(?:\*\*)?(?P<name>[^\s:：*#>|`-][^:：*|`]{0,23}?)(?:\*\*)?[ \t]*[:：]"
    r"(?:\*\*)?[ \t]*(?P<value>.*?)[ \t]*$"
)
_SUB_ITEM = re.compile(r"^[ \t]+[-*+][ \t]+(?P<value>.*?)[ \t]*$")
_CORE_LINE = re.compile(r"^[ \t]*(?:#{4,6}[ \t]+)?(?:\*\*)?(?P<name>[^:：*]+?)(?:\*\*)?[ \t]*[:：]?[ \t]*$")
_DATE = re.compile(r"^(\d{4})[-/.年](\d{1,2})[-/.月](\d{1,2})日?$")
_LIST_SPLIT = re.compile(r"[;；、,，]")
_REPAIR = f"`kbsync repair {BOARD_MD}`"


@dataclass(frozen=True)
class Entry:
    """One learning record. Fields missing from a hand-edited entry parse as "" or ()."""

    title: str
    type: str
    topic: str
    summary: str
    core_content: str
    source: str
    source_date: str
    scenarios: tuple[str, ...]
    confidence: str
    status: str = "active"

    @property
    def key(self) -> str:
        return entry_key(self.title, self.source_date)

    def as_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["scenarios"] = list(self.scenarios)
        return data


@dataclass(frozen=True)
class Note:
    """A problem found while parsing; `replacement` is the repaired line when it can be repaired."""

    line: int  # 0-based line index in the text parsed
    level: Level
    message: str
    replacement: str | None = None


@dataclass(frozen=True)
class EntryBlock:
    start: int  # 0-based line index of the entry's heading
    raw: str  # heading through the line before the next heading of level 3 or less
    entry: Entry
    notes: tuple[Note, ...]


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


# ---- keys -------------------------------------------------------------------

def entry_key(title: str, source_date: str) -> str:
    return f"{title}@{source_date}"


def split_key(key: str) -> tuple[str, str]:
    """`<title>@<source_date>` split at the last `@`; ValueError when there is none."""
    title, at, date = key.rpartition("@")
    if not at or not title.strip() or not date.strip():
        raise ValueError(f"{key!r} is not an entry key; write <title>@<YYYY-MM-DD>")
    return title.strip(), date.strip()


# ---- values -------------------------------------------------------------------

def normalize_date(value: str) -> str | None:
    """`YYYY-MM-DD` for a date written `2025/6/11`, `2025.06.11`, `2025年6月11日`; None if not a date."""
    m = _DATE.match(value.strip())
    if not m:
        return None
    try:
        return dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3))).isoformat()
    except ValueError:
        return None


def canonical_enum(name: str, value: str) -> str | None:
    """The enum value that `value` stands for (itself, another case, or a synonym); None if none."""
    folded = value.strip().casefold()
    for canon in _ENUMS[name]:
        if folded == canon.casefold() or folded in (s.casefold() for s in _VALUE_SYNONYMS[name][canon]):
            return canon
    return None


def split_list(value: str) -> list[str]:
    return [part.strip() for part in _LIST_SPLIT.split(value) if part.strip()]


def _value_note(name: str, value: str, index: int, line: str, m: re.Match[str]) -> tuple[str, Note | None]:
    """The value as the entry holds it, and a note if the written value is not canonical."""
    def fixed(canon: str, what: str) -> tuple[str, Note]:
        repl = line[: m.start("value")] + canon + line[m.end("value"):]
        return canon, Note(index, "error", f"{LABELS[name]} {value!r} {what}; {_REPAIR} writes {canon!r}", repl)

    if name in _ENUMS and value not in _ENUMS[name]:
        canon = canonical_enum(name, value)
        if canon is None:
            return value, Note(index, "error", f"{LABELS[name]} {value!r} is not one of {', '.join(_ENUMS[name])}")
        return fixed(canon, "is a synonym")
    if name == "source_date" and value != normalize_date(value):
        date = normalize_date(value)
        if date is None:
            return value, Note(index, "error", f"{LABELS[name]} {value!r} is not a date YYYY-MM-DD")
        return fixed(date, "is not written YYYY-MM-DD")
    return value, None


# ---- lines and headings -------------------------------------------------------

def field_line(line: str) -> tuple[str, str] | None:
    """(label as written, value) of a `- label: value` line (either colon, bullet optional)."""
    m = _FIELD.match(line.rstrip("\r\n"))
    return (m.group("name").strip(), m.group("value")) if m else None


def _strip_eol(line: str) -> str:
    return line.rstrip("\r\n")


def _eol(line: str) -> str:
    return line[len(_strip_eol(line)):]


def _headings(lines: list[str]) -> list[tuple[int, int, str]]:
    """(index, level, text) of every ATX heading outside fenced code."""
    out: list[tuple[int, int, str]] = []
    fence: str | None = None
    for i, line in enumerate(lines):
        f = _FENCE.match(line)
        if f:
            fence = None if fence == f.group(1) else (fence or f.group(1))
            continue
        m = None if fence else _HEADING.match(_strip_eol(line))
        if m:
            out.append((i, len(m.group(1)), m.group(2)))
    return out


def _section_name(text: str) -> tuple[str, str] | None:
    """(section, note after a colon) when a heading's text names a board section."""
    parts = re.split(r"[:：]", text, maxsplit=1)
    name = parts[0].strip()
    return (name, parts[1].strip() if len(parts) > 1 else "") if name in BOARD_SECTIONS else None


# ---- entries ------------------------------------------------------------------

def _core_marker(line: str) -> str | None:
    """The inline text of a `核心内容:` line ("" when none); None when the line is not one."""
    m = _FIELD.match(line)
    if m and FIELD_NAMES.get(m.group("name").strip().casefold()) == "core_content":
        return m.group("value")
    c = _CORE_LINE.match(line)
    if c and FIELD_NAMES.get(c.group("name").strip().casefold()) == "core_content":
        return ""
    return None


def _has_marker(lines: list[str]) -> bool:
    return any(_core_marker(_strip_eol(x)) is not None for x in lines)


def _sub_items(lines: list[str], i: int) -> tuple[list[str], int]:
    items: list[str] = []
    while i < len(lines) and (m := _SUB_ITEM.match(_strip_eol(lines[i]))):
        items.append(m.group("value"))
        i += 1
    return items, i


def _core_text(lines: list[str]) -> str:
    return "\n".join(_strip_eol(x) for x in lines).strip("\n")


def parse_entry(raw: str, start: int = 0) -> EntryBlock:
    """An entry block (its `### title` line and what follows), with notes on its defects."""
    lines = raw.splitlines(keepends=True)
    hm = _HEADING.match(_strip_eol(lines[0])) if lines else None
    title = hm.group(2).strip() if hm else _strip_eol(lines[0]).strip() if lines else ""
    values: dict[str, str] = {}
    scenarios: list[str] = []
    notes: list[Note] = []
    core: str | None = None
    i = 1
    while i < len(lines):
        line = _strip_eol(lines[i])
        marker = _core_marker(line)
        if not line.strip():
            i += 1
            continue
        if marker is not None:
            core = _core_text(([marker] if marker else []) + lines[i + 1:])
            break
        m = _FIELD.match(line)
        name = FIELD_NAMES.get(m.group("name").strip().casefold()) if m else None
        if m is None or (name is None and not _has_marker(lines[i:])):
            core = _core_text(lines[i:])
            break
        i += 1
        if name is None:
            notes.append(Note(start + i - 1, "warning", f"{m.group('name').strip()!r} is not a board field; "
                              f"move the line under {LABELS['core_content']}"))
            continue
        if name in values or (name == "scenarios" and scenarios):
            notes.append(Note(start + i - 1, "warning", f"{LABELS[name]} is given twice; the first one counts"))
            continue
        if name == "scenarios":
            items, i = _sub_items(lines, i)
            scenarios = split_list(m.group("value")) + [x for x in items if x]
            values[name] = "given"
            continue
        value, note = _value_note(name, m.group("value"), start + i - 1, line, m)
        values[name] = value
        notes += [note] if note else []
    entry = Entry(
        title=title, type=values.get("type", ""), topic=values.get("topic", ""),
        summary=values.get("summary", ""), core_content=core or "", source=values.get("source", ""),
        source_date=values.get("source_date", ""), scenarios=tuple(scenarios),
        confidence=values.get("confidence", ""), status=values.get("status", "active") or "active",
    )
    return EntryBlock(start, raw, entry, tuple(notes + _entry_problems(entry, start)))


def _entry_problems(e: Entry, start: int) -> list[Note]:
    out = [Note(start, "error", msg) for msg in entry_problems(e, structural=False)]
    if len(e.summary) > MAX_SUMMARY:
        out.append(Note(start, "warning", f"{LABELS['summary']} has {len(e.summary)} characters; keep it to {MAX_SUMMARY}"))
    return out


def entry_problems(e: Entry, *, structural: bool = True) -> list[str]:
    """One message per problem of an entry: missing fields, empty scenarios, bad values.

    With structural=False, the value problems that parse_entry reports on the field's own
    line (enum values, dates) are left out.
    """
    problems = [f"{LABELS[k]} ({k}) is missing" for k in REQUIRED
                if k != "scenarios" and not str(getattr(e, k)).strip()]
    if not e.title.strip():
        problems.insert(0, "the title is empty")
    if not e.scenarios:
        problems.append(f"{LABELS['scenarios']} (scenarios) is empty; name at least one situation the entry applies to")
    for k in ("title", "type", "topic", "summary", "source", "source_date", "confidence", "status"):
        if "\n" in str(getattr(e, k)):
            problems.append(f"{k} must be one line")
    if structural:
        problems += _value_problems(e)
    return problems


def _value_problems(e: Entry) -> list[str]:
    out = [f"{k} {getattr(e, k)!r} is not one of {', '.join(_ENUMS[k])}"
           for k in ("type", "confidence", "status") if getattr(e, k) and getattr(e, k) not in _ENUMS[k]]
    if e.source_date and normalize_date(e.source_date) != e.source_date:
        out.append(f"source_date {e.source_date!r} is not a date YYYY-MM-DD")
    if len(e.summary) > MAX_SUMMARY:
        out.append(f"summary has {len(e.summary)} characters; keep it to {MAX_SUMMARY}")
    return out


def render_entry(e: Entry) -> str:
    """The canonical Markdown of an entry (ends with a newline, no trailing blank line)."""
    def line(name: str) -> str:
        return f"- {LABELS[name]}: {getattr(e, name)}\n"

    scen = "".join(f"  - {s}\n" for s in e.scenarios)
    head = f"### {e.title}\n\n" + "".join(line(n) for n in ("type", "topic", "summary"))
    tail = "".join(line(n) for n in ("confidence", "status", "source", "source_date"))
    core = f"\n{LABELS['core_content']}:\n\n{e.core_content.strip(chr(10))}\n" if e.core_content.strip() else \
        f"\n{LABELS['core_content']}:\n"
    return head + f"- {LABELS['scenarios']}:\n" + scen + tail + core


def entry_from_dict(data: dict[str, Any]) -> tuple[Entry | None, list[str]]:
    """An Entry from a JSON object, or the problems that keep it from being one (one message each)."""
    problems: list[str] = []
    known = {"title", *REQUIRED, "status"}
    problems += [f"unknown key {k!r}; the keys are {', '.join(sorted(known))}" for k in data if k not in known]
    for k in ("title", *REQUIRED):
        if k not in data:
            problems.append(f"{k} is missing")
    for k, v in data.items():
        if k in known and k != "scenarios" and not isinstance(v, str):
            problems.append(f"{k} must be a string")
    scen = data.get("scenarios", [])
    if not isinstance(scen, list) or not all(isinstance(s, str) for s in scen):
        problems.append("scenarios must be a list of strings")
        scen = []
    if problems:
        return None, problems
    entry = Entry(**{k: data[k].strip() for k in data if k != "scenarios"},
                  scenarios=tuple(s.strip() for s in scen if s.strip()))
    problems = entry_problems(entry)
    return (None, problems) if problems else (entry, [])


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
    if named and _strip_eol(heading) != canon:
        repl = canon + (_eol(heading) or "\n") + named[1] if named[1] else canon
        note = Note(start, "error", f"heading {_strip_eol(heading)!r} should be {canon!r}; {_REPAIR} fixes it", repl)
    cuts = [i for i, lv, t in heads if start < i < end and lv == 3 and _section_name(t) is None] if name == RECORDS else []
    bounds = cuts + [end]
    intro = "".join(lines[start + 1:bounds[0]])
    entries = tuple(parse_entry("".join(lines[a:b]), a) for a, b in zip(bounds, bounds[1:]))
    return Section(start, heading, name, intro, entries, note)


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
            notes.append(Note(0, "error", f"section '## {name}' is missing; {_REPAIR} adds it"))
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
            lines[note.line] = note.replacement + _eol(lines[note.line])
            fixes.append(f"line {note.line + 1}: {note.message}")
    text, added = _insert_missing("".join(lines))
    return text, fixes + added


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


def set_status(text: str, key: str, status: str) -> tuple[str, bool]:
    """The board with one entry's status changed in place (only its status line); (text, changed)."""
    board = parse_board(text)
    found = board.find(key)
    if found is None:
        raise KeyError(key)
    if found.entry.status == status:
        return text, False
    lines = found.raw.splitlines(keepends=True)
    last = _last_field_line(lines)
    for i, line in enumerate(lines[1:last + 1], 1):
        m = _FIELD.match(_strip_eol(line))
        if m and FIELD_NAMES.get(m.group("name").strip().casefold()) == "status":
            s = _strip_eol(line)
            lines[i] = s[: m.start("value")] + status + s[m.end("value"):] + _eol(line)
            return _replace_block(board, found, "".join(lines)), True
    lines.insert(last + 1, f"- {LABELS['status']}: {status}\n")
    return _replace_block(board, found, "".join(lines)), True


def _last_field_line(lines: list[str]) -> int:
    """Index of the last line of the entry's field list (0, the heading, when it has none)."""
    last = 0
    for i, line in enumerate(lines[1:], 1):
        s = _strip_eol(line)
        if not s.strip():
            continue
        m = _FIELD.match(s)
        if _core_marker(s) is not None or not (_SUB_ITEM.match(s) or (m and FIELD_NAMES.get(m.group("name").strip().casefold()))):
            break
        last = i
    return last
