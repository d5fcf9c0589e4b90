"""index.md: the append-only table of sessions. Rows render and parse here; readers keep the last row per path."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping

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


def row_for(record: Mapping[str, Any], title: str) -> Row:
    """The index row of a saved session record (fields plus `path`)."""
    ts = protocol.parse_ts(str(record.get("ts", "")))
    tags = record.get("tags") or []
    return Row(ts.date if ts else "", title, ",".join(str(t) for t in tags), str(record.get("summary", "")), str(record["path"]))


def split_cells(line: str) -> list[str] | None:
    s = line.strip()
    if not (s.startswith("|") and s.endswith("|") and len(s) > 1):
        return None
    return [c.strip().replace("\\|", "|") for c in _SPLIT.split(s[1:-1])]


def row_path(line: str) -> str | None:
    """The last cell (the path) of a row of 5 cells; None when `line` is no such row. What `split_cells` says,
    found without splitting the cells where no `|` is escaped."""
    s = line.strip()
    if "\\|" in s:
        cells = split_cells(s)
        return cells[4] if cells is not None and len(cells) == 5 else None
    if len(s) < 2 or s[0] != "|" or s[-1] != "|" or s.count("|") != 6:
        return None
    return s[s.rindex("|", 0, len(s) - 1) + 1 : -1].strip()


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


ROW_ERROR = "index row must have 5 cells (日期 | 标题 | 标签 | 摘要 | 路径); escape `|` as `\\|`"


@dataclass
class RowCheck:
    """index.md's rows checked one line at a time, so that a file of any length is never held whole.

    `findings(lines)` yields the header's and the rows' defects as the lines go by; with `exists`, it also
    keeps (in `gone`) each path whose latest row so far names a session file that `exists` says is gone:
    what `gone_findings` reports once the lines are done. Only those paths are kept, never one per row."""

    relpath: str
    exists: Callable[[str], bool] | None = None
    gone: dict[str, int] = field(default_factory=dict)  # path -> the line of its last row

    def findings(self, lines: Iterable[str]) -> Iterator[Finding]:
        head: list[str] = []
        for i, line in enumerate(lines, start=1):
            if i <= 2:
                head.append(line.strip())
                if i == 2 and head != HEADER_LINES:
                    yield self._header()
            path = row_path(line)
            if path is None:
                if i > 2 and line.strip():
                    yield Finding(self.relpath, i, "error", ROW_ERROR)
            elif self.exists is not None and line.strip() not in HEADER_LINES:
                self._note(path, i)
        if len(head) < 2:
            yield self._header()

    def _header(self) -> Finding:
        return Finding(self.relpath, 1, "error",
                       f"index.md must start with its header `{HEADER_LINES[0]}`; run `kbsync index rebuild`")

    def _note(self, path: str, line: int) -> None:
        assert self.exists is not None
        self.gone.pop(path, None)
        if protocol.classify(path) == "session" and not self.exists(path):
            self.gone[path] = line

    def gone_findings(self) -> list[Finding]:
        """A warning for each path whose last row names a session that no longer exists, in line order."""
        return [Finding(self.relpath, n, "warning", f"the row for {path} names a session that no longer exists; "
                        "run `kbsync index rebuild` to drop it")
                for path, n in sorted(self.gone.items(), key=lambda pn: pn[1])]


def findings(relpath: str, text: str) -> list[Finding]:
    """The header's and the rows' defects of index.md's text (LF line endings)."""
    return list(RowCheck(relpath).findings(text.split("\n")))


def render_index(rows: Iterable[Row]) -> str:
    return protocol.INDEX_HEADER + "".join(render_row(r) + "\n" for r in rows)
