"""Candidate lists (candidates/YYYY-MM-DD-<source>.md): render, parse, decide. Pure.

An item reads like a board entry whose fields a person completes (summary,
scenarios, confidence, and the suggested type and topic), plus its id, status,
path, flags and the lines that were flagged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

from kbsync.core import board
from kbsync.core.board import Entry

STATUSES: Final = ("pending", "accepted", "rejected")
FLAG_INJECTION: Final = "embedded-instruction"
FLAG_SECRET: Final = "secret"
ID_RE: Final = re.compile(r"^c-[0-9a-f]{10}$")
_ID_LINE: Final = re.compile(r"^- id: (c-[0-9a-f]{10})[ \t]*$", re.MULTILINE)
_ITEM_FIELDS: Final = {"id": "id", "状态": "status", "status": "status", "路径": "path", "path": "path",
                       "标记": "flags", "flags": "flags", "可疑行": "offending", "来源": "source",
                       "source": "source"}


@dataclass(frozen=True)
class Candidate:
    id: str
    source: str  # the scan source's name
    path: str  # the file's path inside the source
    title: str
    source_date: str
    type: str  # suggested
    topic: str  # suggested
    flags: tuple[str, ...]
    excerpt: str
    offending: tuple[str, ...] = ()  # "第 N 行 [rule]: text", secrets withheld
    status: str = "pending"

    def as_dict(self) -> dict[str, object]:
        return {"id": self.id, "source": self.source, "path": self.path, "title": self.title,
                "flags": list(self.flags), "type": self.type, "topic": self.topic, "status": self.status}


@dataclass(frozen=True)
class Item:
    """A candidate as found in a list file, with the person's edits."""

    id: str
    title: str
    fields: dict[str, str]  # label as written (lower-cased) -> value
    lists: dict[str, list[str]] = field(default_factory=dict)  # nested lists under a label
    core: str = ""
    start: int = 0  # 0-based line of the item's heading in the list


def header(source: str, day: str) -> str:
    return (f"# 候选清单 · {source} · {day}\n\n"
            "由 `kbsync scan` 生成，供人工审阅；不会自动进入学习看板。补全摘要、场景和置信度后运行\n"
            "`kbsync candidates accept ID`；不采用则 `kbsync candidates reject ID`。\n")


def _quote(text: str) -> str:
    """A blockquote of third-party text; `<` escaped so that no HTML in it can hide the rest."""
    lines = text.replace("<", "&lt;").splitlines() or [""]
    return "\n".join(f"> {ln}".rstrip() for ln in lines)


def render_item(c: Candidate) -> str:
    off = "".join(f"  - {line.replace('<', '&lt;')}\n" for line in c.offending)
    return (
        f"\n### {c.title}\n\n"
        f"- id: {c.id}\n- 状态: {c.status}\n- 来源: {c.source}:{c.path}\n- 路径: {c.path}\n"
        f"- 来源日期: {c.source_date}\n- 标记: {', '.join(c.flags) or '无'}\n"
        + (f"- 可疑行:\n{off}" if off else "")
        + f"- 类型: {c.type}\n- 主题: {c.topic}\n- 摘要: \n- 场景: \n- 置信度: medium\n\n"
        f"核心内容:\n\n{_quote(c.excerpt)}\n"
    )


def known_ids(text: str) -> set[str]:
    return set(_ID_LINE.findall(text))


def parse_items(text: str) -> list[Item]:
    lines = text.splitlines()
    starts = [i for i, ln in enumerate(lines) if ln.startswith("### ")]
    items = [_parse_item(lines[a:b], a) for a, b in zip(starts, starts[1:] + [len(lines)])]
    return [it for it in items if ID_RE.match(it.id)]


def _parse_item(lines: list[str], start: int) -> Item:
    fields: dict[str, str] = {}
    lists: dict[str, list[str]] = {}
    current = ""
    for i, line in enumerate(lines[1:], 1):
        if line.startswith((" ", "\t")) and line.strip().startswith(("- ", "* ")) and current:
            lists.setdefault(current, []).append(line.strip()[2:].strip())
            continue
        got = board.field_line(line)
        if got and board.FIELD_NAMES.get(got[0].casefold()) == "core_content":
            core = "\n".join(([got[1]] if got[1] else []) + lines[i + 1:]).strip("\n")
            return Item(fields.get("id", ""), lines[0][4:].strip(), fields, lists, core, start)
        if got and line.startswith(("- ", "* ", "+ ")):
            current = got[0].casefold()
            fields.setdefault(current, got[1].strip())
    return Item(fields.get("id", ""), lines[0][4:].strip(), fields, lists, "", start)


def value(item: Item, name: str) -> str:
    """An item's field by its board name or item name, whatever label the person used."""
    for label, v in item.fields.items():
        if board.FIELD_NAMES.get(label) == name or _ITEM_FIELDS.get(label) == name:
            return v
    return ""


def values(item: Item, name: str) -> list[str]:
    for label, v in item.fields.items():
        if board.FIELD_NAMES.get(label) == name or _ITEM_FIELDS.get(label) == name:
            return board.split_list(v) + [x for x in item.lists.get(label, []) if x]
    return []


def flags(item: Item) -> list[str]:
    return [f for f in values(item, "flags") if f != "无"]


def to_entry(item: Item, overrides: dict[str, object]) -> tuple[Entry | None, list[str]]:
    """The board entry an accepted item becomes (overrides from the command line win)."""
    data: dict[str, object] = {
        "title": item.title, "type": value(item, "type"), "topic": value(item, "topic"),
        "summary": value(item, "summary"), "core_content": item.core, "source": value(item, "source"),
        "source_date": value(item, "source_date"), "scenarios": values(item, "scenarios"),
        "confidence": value(item, "confidence"),
    }
    data.update({k: v for k, v in overrides.items() if v not in (None, [], "")})
    return board.entry_from_dict(data)


def set_status(text: str, item_id: str, status: str) -> str:
    """The list with one item's status line set to `status`."""
    lines = text.splitlines(keepends=True)
    item = next(it for it in parse_items(text) if it.id == item_id)
    for i in range(item.start + 1, len(lines)):
        got = board.field_line(lines[i])
        if got and _ITEM_FIELDS.get(got[0].casefold()) == "status":
            eol = lines[i][len(lines[i].rstrip("\r\n")):]
            lines[i] = f"- 状态: {status}{eol}"
            return "".join(lines)
        if lines[i].startswith("### "):
            break
    raise ValueError(f"item {item_id} has no status line")


def preview(item: Item) -> str:
    """The excerpt an item quotes, as plain text (the quote marks and the list's `&lt;` undone)."""
    lines = [ln[2:] if ln.startswith("> ") else ln[1:] if ln.startswith(">") else ln for ln in item.core.splitlines()]
    return "\n".join(lines).strip().replace("&lt;", "<")


def offending(item: Item) -> list[tuple[str, str]]:
    """The flagged lines an item lists: (where and why, e.g. "第 3 行 [override] (tells the reader…)", the
    text as quoted). The scan writes `第 N 行 [family]: text (why)`; a line written by hand may have no why."""
    out = []
    for label, found in item.lists.items():
        if _ITEM_FIELDS.get(label) == "offending":
            for line in found:
                where, sep, rest = line.partition("]: ")
                text, why = _reason(rest.replace("&lt;", "<"))
                out.append((where + "]" + why, text) if sep else (line, ""))
    return out


def _reason(text: str) -> tuple[str, str]:
    """`text (why)` cut into the text and " (why)"; the rules' reasons hold no parenthesis."""
    at = text.rfind(" (")
    if not text.endswith(")") or at < 0 or "(" in text[at + 2:]:
        return text, ""
    return text[:at], text[at:]


def highlight(text: str, spans: list[str]) -> list[tuple[str, bool]]:
    """`text` cut into (part, flagged) pieces, each occurrence of a span's words (whitespace collapsed) flagged."""
    needles = [" ".join(s.split()) for s in spans if s.strip()]
    marks = [False] * len(text)
    for needle in needles:
        at = text.find(needle)
        while needle and at >= 0:
            marks[at:at + len(needle)] = [True] * len(needle)
            at = text.find(needle, at + len(needle))
    pieces: list[tuple[str, bool]] = []
    for ch, flagged in zip(text, marks):
        if pieces and pieces[-1][1] == flagged:
            pieces[-1] = (pieces[-1][0] + ch, flagged)
        else:
            pieces.append((ch, flagged))
    return pieces
