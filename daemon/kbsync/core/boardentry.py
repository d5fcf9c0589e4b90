"""One knowledge-board entry: its fields, key, parse from a block, render, checks. Pure.

kbsync.board holds the whole board and re-exports what is public here.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from dataclasses import dataclass
from typing import Any, Final

from kbsync.core import body, limits
from kbsync.core.findings import Level
from kbsync.core.protocol import BOARD_MD

TYPES: Final = ("观点", "方法", "踩坑", "工具")
CONFIDENCES: Final = ("high", "medium", "low")
STATUSES: Final = ("active", "decaying", "retired")
MAX_SUMMARY: Final = 100
FIELDS: Final = ("type", "topic", "summary", "scenarios", "confidence", "status", "source", "source_date")
REQUIRED: Final = ("type", "topic", "summary", "core_content", "source", "source_date", "scenarios", "confidence")

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

HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t]*$")
_FIELD = re.compile(
    r"^[ \t]*(?:[-*+][ \t]+)?(?:\*\*)?(?P<name>[^\s:：*#>|`-][^:：*|`]{0,23}?)(?:\*\*)?[ \t]*[:：]"
    r"(?:\*\*)?[ \t]*(?P<value>.*?)[ \t]*$"
)
_SUB_ITEM = re.compile(r"^[ \t]+[-*+][ \t]+(?P<value>.*?)[ \t]*$")
_CORE_LINE = re.compile(r"^[ \t]*(?:#{4,6}[ \t]+)?(?:\*\*)?(?P<name>[^:：*]+?)(?:\*\*)?[ \t]*[:：]?[ \t]*$")
_DATE = re.compile(r"^(\d{4})[-/.年](\d{1,2})[-/.月](\d{1,2})日?$")
_LIST_SPLIT = re.compile(r"[;；、,，]")
REPAIR_HINT = f"`kbsync repair {BOARD_MD}`"


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
        return canon, Note(index, "error", f"{LABELS[name]} {value!r} {what}; {REPAIR_HINT} writes {canon!r}", repl)

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


def strip_eol(line: str) -> str:
    return line.rstrip("\r\n")


def eol(line: str) -> str:
    return line[len(strip_eol(line)):]


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
    return any(_core_marker(strip_eol(x)) is not None for x in lines)


def _sub_items(lines: list[str], i: int) -> tuple[list[str], int]:
    items: list[str] = []
    while i < len(lines) and (m := _SUB_ITEM.match(strip_eol(lines[i]))):
        items.append(m.group("value"))
        i += 1
    return items, i


def _core_text(lines: list[str]) -> str:
    return "\n".join(strip_eol(x) for x in lines).strip("\n")


def parse_entry(raw: str, start: int = 0) -> EntryBlock:
    """An entry block (its `### title` line and what follows), with notes on its defects."""
    lines = raw.splitlines(keepends=True)
    hm = HEADING.match(strip_eol(lines[0])) if lines else None
    title = hm.group(2).strip() if hm else strip_eol(lines[0]).strip() if lines else ""
    values: dict[str, str] = {}
    scenarios: list[str] = []
    notes: list[Note] = []
    core: str | None = None
    i = 1
    while i < len(lines):
        line = strip_eol(lines[i])
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
    return [message for _field, message in field_problems(e, structural=structural)]


def field_problems(e: Entry, *, structural: bool = True) -> list[tuple[str, str]]:
    """entry_problems, each with the field it is about: (field, message)."""
    problems = [(k, f"{LABELS[k]} ({k}) is missing") for k in REQUIRED
                if k != "scenarios" and not str(getattr(e, k)).strip()]
    if not e.title.strip():
        problems.insert(0, ("title", "the title is empty"))
    if not e.scenarios:
        problems.append(("scenarios", f"{LABELS['scenarios']} (scenarios) is empty; name at least one situation the "
                                      "entry applies to"))
    for k in ("title", "type", "topic", "summary", "source", "source_date", "confidence", "status"):
        if not limits.one_line(str(getattr(e, k))):
            problems.append((k, f"{k} must be one line"))
    if not all(limits.one_line(s) for s in e.scenarios):
        problems.append(("scenarios", "each scenario must be one line"))
    if structural:
        problems += _value_problems(e)
    return problems


def _value_problems(e: Entry) -> list[tuple[str, str]]:
    out = [(k, f"{k} {getattr(e, k)!r} is not one of {', '.join(_ENUMS[k])}")
           for k in ("type", "confidence", "status") if getattr(e, k) and getattr(e, k) not in _ENUMS[k]]
    if e.source_date and normalize_date(e.source_date) != e.source_date:
        out.append(("source_date", f"source_date {e.source_date!r} is not a date YYYY-MM-DD"))
    if len(e.summary) > MAX_SUMMARY:
        out.append(("summary", f"summary has {len(e.summary)} characters; keep it to {MAX_SUMMARY}"))
    return out


_HEADING_LIKE = re.compile(r"^[ \t]*#{1,6}(?:[ \t]|$)")
_BOARD_FENCE = re.compile(r"^[ \t]*(```|~~~)")  # what the board's reader takes for a fence (kbsync.core.board)


def safe_core(text: str) -> str:
    """Core content made safe to place under its marker, as a session's section text is
    (kbsync.core.session.normalize_content): outside code, a line that would read as a heading of any level or
    starts like a git conflict marker is escaped with a backslash; a code fence left open is closed, so the
    entries after it stay entries. Lines are split where the board's reader splits them (str.splitlines), so a
    U+2028 cannot hide a heading. No character is removed; applying it twice changes nothing."""
    lines = text.splitlines(keepends=True)
    fence: str | None = None
    for i, line in enumerate(lines):
        f = _BOARD_FENCE.match(line)
        if f:
            fence = None if fence == f.group(1) else (fence or f.group(1))
        elif fence is None and (_HEADING_LIKE.match(line) or body.CONFLICT_SIDE.match(line)):
            at = len(line) - len(line.lstrip(" \t"))
            lines[i] = line[:at] + "\\" + line[at:]
    closed = "".join(lines)
    return f"{closed.rstrip(chr(10))}\n{fence}" if fence else closed


def render_entry(e: Entry) -> str:
    """The canonical Markdown of an entry (ends with a newline, no trailing blank line). Its one-line fields
    are one line (field_problems); its core content passes safe_core, so no field can form a heading, a field
    line or a fence of the board."""
    def line(name: str) -> str:
        return f"- {LABELS[name]}: {getattr(e, name)}\n"

    scen = "".join(f"  - {s}\n" for s in e.scenarios)
    head = f"### {e.title}\n\n" + "".join(line(n) for n in ("type", "topic", "summary"))
    tail = "".join(line(n) for n in ("confidence", "status", "source", "source_date"))
    core = f"\n{LABELS['core_content']}:\n\n{safe_core(e.core_content).strip(chr(10))}\n" if e.core_content.strip() else \
        f"\n{LABELS['core_content']}:\n"
    return head + f"- {LABELS['scenarios']}:\n" + scen + tail + core


def entry_from_dict(data: dict[str, Any]) -> tuple[Entry | None, list[str]]:
    """An Entry from a JSON object, or the problems that keep it from being one (one message each)."""
    entry, problems = entry_from_fields(data)
    return entry, [message for _field, message in problems]


def entry_from_fields(data: dict[str, Any]) -> tuple[Entry | None, list[tuple[str, str]]]:
    """entry_from_dict with each problem's field: (field, message); an unknown key is its own field."""
    problems: list[tuple[str, str]] = []
    known = {"title", *REQUIRED, "status"}
    problems += [(str(k), f"unknown key {limits.shown(str(k))}; the keys are {', '.join(sorted(known))}")
                 for k in data if k not in known]
    problems += [(k, f"{k} is missing") for k in ("title", *REQUIRED) if k not in data]
    problems += [(k, f"{k} must be a string") for k, v in data.items()
                 if k in known and k != "scenarios" and not isinstance(v, str)]
    scen = data.get("scenarios", [])
    if not isinstance(scen, list) or not all(isinstance(s, str) for s in scen):
        problems.append(("scenarios", "scenarios must be a list of strings"))
        scen = []
    problems += _size_problems(data, scen)
    if problems:
        return None, problems
    entry = Entry(**{k: data[k].strip() for k in data if k not in ("scenarios", "core_content")},
                  core_content=safe_core(data["core_content"].strip()), scenarios=tuple(s.strip() for s in scen if s.strip()))
    problems = field_problems(entry)
    return (None, problems) if problems else (entry, [])


# The most each field of an entry may hold (docs/protocol.md, "Limits"); the rest: limits.NAME.
FIELD_LIMITS: Final = {"title": limits.TITLE, "summary": limits.SUMMARY, "core_content": limits.TEXT}


def _size_problems(data: dict[str, Any], scenarios: list[str]) -> list[tuple[str, str]]:
    """(field, message) for each field over its maximum: said before any message could repeat the value."""
    out = [(k, f"{k} is {len(v):,} characters, over the {FIELD_LIMITS.get(k, limits.NAME):,} it may hold")
           for k, v in data.items() if isinstance(v, str) and len(v) > FIELD_LIMITS.get(k, limits.NAME)]
    if len(scenarios) > limits.ITEMS:
        out.append(("scenarios", f"scenarios has {len(scenarios):,} items, over the {limits.ITEMS} it may hold"))
    out += [("scenarios", f"scenarios[{i}] is {len(s):,} characters, over the {limits.LINE:,} it may hold")
            for i, s in enumerate(scenarios) if len(s) > limits.LINE]
    return out


def with_status(raw: str, status: str) -> str:
    """An entry block with its status line set to `status` (added after the fields when absent)."""
    lines = raw.splitlines(keepends=True)
    last = _last_field_line(lines)
    for i, line in enumerate(lines[1:last + 1], 1):
        m = _FIELD.match(strip_eol(line))
        if m and FIELD_NAMES.get(m.group("name").strip().casefold()) == "status":
            s = strip_eol(line)
            lines[i] = s[: m.start("value")] + status + s[m.end("value"):] + eol(line)
            return "".join(lines)
    lines.insert(last + 1, f"- {LABELS['status']}: {status}\n")
    return "".join(lines)


def _last_field_line(lines: list[str]) -> int:
    """Index of the last line of the entry's field list (0, the heading, when it has none)."""
    last = 0
    for i, line in enumerate(lines[1:], 1):
        s = strip_eol(line)
        if not s.strip():
            continue
        m = _FIELD.match(s)
        if _core_marker(s) is not None or not (_SUB_ITEM.match(s) or (m and FIELD_NAMES.get(m.group("name").strip().casefold()))):
            break
        last = i
    return last
