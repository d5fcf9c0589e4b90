"""Statistics over the sessions' frontmatter, from its one-way copy in the search database.

The copy is made when the search index is built or updated; nothing here ever
writes to the workspace's files. A session whose frontmatter cannot be read,
or lacks a required field or a valid value for one, is "dirty": it is skipped
and counted, never guessed. `group` is pure; `collect` reads the database.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable

from kbsync.retrieval import db, index
from kbsync.retrieval.db import Row
from kbsync.store.workspace import Workspace

NONE = "(none)"


@dataclass(frozen=True)
class Group:
    key: str
    sessions: int
    turns: int
    tokens_in: int
    tokens_out: int


@dataclass(frozen=True)
class Stats:
    by: str
    total: int
    dirty: int
    groups: tuple[Group, ...]
    dirty_files: tuple[str, ...] = field(default=())

    def as_dict(self) -> dict[str, Any]:
        return {"by": self.by, "sessions": self.total, "dirty": self.dirty,
                "groups": [g.__dict__ for g in self.groups], "dirty_files": list(self.dirty_files)}


def session_rows(ws: Workspace, *, refresh: bool = True) -> list[Row]:
    """Every session's stored record, after catching up with files changed since the last update (with
    `refresh` False, from the index as it stands)."""
    if refresh:
        index.refresh(ws)
    conn = index.open_index(ws)
    try:
        return list(db.records(conn, "session"))
    finally:
        conn.close()


def keys_of(row: Row, by: str) -> list[str]:
    """The group(s) a clean session falls in: every tag, its UTC month, its status or its model."""
    if by == "tag":
        return [str(t) for t in row.fields.get("tags") or []] or [NONE]
    if by == "month":
        return [row.date[:7]]
    value = row.fields.get(by)
    return [str(value) if value not in (None, "") else NONE]


def group(rows: Iterable[Row], by: str) -> Stats:
    """Counts and sums per group; months in time order, other groups by size then name."""
    counts: Counter[str] = Counter()
    sums: dict[str, Counter[str]] = {}
    total, dirty = 0, []
    for row in rows:
        if row.broken:
            dirty.append(row.relpath)
            continue
        total += 1
        for key in dict.fromkeys(keys_of(row, by)):
            counts[key] += 1
            acc = sums.setdefault(key, Counter())
            for name in ("turns", "tokens_in", "tokens_out"):
                acc[name] += _int(row.fields.get(name))
    order = sorted(counts) if by == "month" else sorted(counts, key=lambda k: (-counts[k], k))
    groups = tuple(Group(k, counts[k], sums[k]["turns"], sums[k]["tokens_in"], sums[k]["tokens_out"]) for k in order)
    return Stats(by, total, len(dirty), groups, tuple(sorted(dirty)))


OTHER = "(other)"


@dataclass(frozen=True)
class Crosstab:
    rows: tuple[str, ...]  # months, oldest first
    columns: tuple[str, ...]  # the most used tags, then (other) and (none) where any
    counts: tuple[tuple[int, ...], ...]  # counts[column][row]: sessions of that month with that tag


def month_by_tag(rows: Iterable[Row], top: int = 8) -> Crosstab:
    """Clean sessions per UTC month, each counted once: under the first of its tags that is among the `top`
    most used, under (other) when none of its tags is, under (none) when it has none. A month's bars add
    up to its sessions."""
    clean = [(row.date[:7], list(dict.fromkeys(keys_of(row, "tag")))) for row in rows if not row.broken]
    used: Counter[str] = Counter(t for _, tags in clean for t in tags if t != NONE)
    named = [t for t, _ in sorted(used.items(), key=lambda kv: (-kv[1], kv[0]))][:top]
    cells: Counter[tuple[str, str]] = Counter(
        (month, next((t for t in tags if t in named), OTHER if tags != [NONE] else NONE)) for month, tags in clean)
    columns = tuple([t for t in named if any(c == t for _, c in cells)]
                    + [c for c in (OTHER, NONE) if any(k == c for _, k in cells)])
    months = tuple(sorted({m for m, _ in cells}))
    grid = {c: [0] * len(months) for c in columns}
    for (month, column), n in cells.items():
        grid[column][months.index(month)] += n
    return Crosstab(months, columns, tuple(tuple(grid[c]) for c in columns))


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def render(stats: Stats) -> str:
    """A plain table for a person."""
    width = max([len(g.key) for g in stats.groups] + [len(stats.by)])
    lines = [f"{stats.by:<{width}}  sessions  tokens_in  tokens_out"]
    lines += [f"{g.key:<{width}}  {g.sessions:>8}  {g.tokens_in:>9}  {g.tokens_out:>10}" for g in stats.groups]
    lines.append(f"{stats.total} sessions counted, {stats.dirty} dirty skipped (run `kbsync validate` to see why)")
    return "\n".join(lines)
