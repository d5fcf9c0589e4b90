"""index.md: the append-only table of sessions. Rows render and parse here; readers keep the last row per path."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from kbsync.core import protocol
from kbsync.core.findings import Finding

_SPLIT = re.compile(r"(?<!\\)\|")
HEADER_LINES = protocol.INDEX_HEADER.splitlines()


@dataclass(frozen=True)
class Row:
    date: str
    title: str
    tags: str
    summary: str
    path: str


_CONTROL = re.compile("[\x00-\x1f]")


def cell(text: str) -> str:
    """A table cell: `|` escaped, line breaks and other control characters flattened to spaces."""
    flat = _CONTROL.sub(" ", text).strip()
    return flat.replace("\\|", "|").replace("|", "\\|")


def render_row(row: Row) -> str:
    cells = (row.date, row.title, row.tags, row.summary, row.path)
    return "| " + " | ".join(cell(c) for c in cells) + " |"


def row_for(record: dict[str, Any], title: str) -> Row:
    """The index row of a saved session record (fields plus `path`)."""
    ts = protocol.parse_ts(str(record.get("ts", "")))
    tags = record.get("tags") or []
    return Row(ts.date if ts else "", title, ",".join(str(t) for t in tags), str(record.get("summary", "")), str(record["path"]))


def split_cells(line: str) -> list[str] | None:
    s = line.strip()
    if not (s.startswith("|") and s.endswith("|") and len(s) > 1):
        return None
    return [c.strip().replace("\\|", "|") for c in _SPLIT.split(s[1:-1])]


def parse_rows(text: str) -> list[Row]:
    """Every well-formed data row, in file order (header and separator skipped)."""
    rows: list[Row] = []
    for line in text.split("\n"):
        cells = split_cells(line)
        if cells is None or len(cells) != 5 or line.strip() in HEADER_LINES:
            continue
        rows.append(Row(*cells))
    return rows


def latest_by_path(rows: Iterable[Row]) -> dict[str, Row]:
    """The last row per path, as readers must see the append-only index."""
    latest: dict[str, Row] = {}
    for row in rows:
        latest.pop(row.path, None)
        latest[row.path] = row
    return latest


def findings(relpath: str, text: str) -> list[Finding]:
    lines = text.split("\n")
    out: list[Finding] = []
    if [ln.strip() for ln in lines[:2]] != HEADER_LINES:
        out.append(Finding(relpath, 1, "error", f"index.md must start with its header `{HEADER_LINES[0]}`; run `kbsync index rebuild`"))
    for i, line in enumerate(lines[2:], start=3):
        if not line.strip():
            continue
        cells = split_cells(line)
        if cells is None or len(cells) != 5:
            out.append(Finding(relpath, i, "error", "index row must have 5 cells (日期 | 标题 | 标签 | 摘要 | 路径); escape `|` as `\\|`"))
    return out


def missing_rows(relpath: str, text: str, exists: Callable[[str], bool]) -> list[Finding]:
    """A warning for each path whose last row names a session file that `exists` says is gone."""
    last_line: dict[str, int] = {}
    for i, line in enumerate(text.split("\n"), start=1):
        cells = split_cells(line)
        if cells is not None and len(cells) == 5 and line.strip() not in HEADER_LINES:
            last_line[cells[4]] = i
    return [Finding(relpath, n, "warning", f"the row for {path} names a session that no longer exists; "
                    "run `kbsync index rebuild` to drop it")
            for path, n in sorted(last_line.items(), key=lambda pn: pn[1])
            if protocol.classify(path) == "session" and not exists(path)]


def render_index(rows: Iterable[Row]) -> str:
    return protocol.INDEX_HEADER + "".join(render_row(r) + "\n" for r in rows)
