"""The weekly review of the board: what changed since a date (from git history), counts, drift."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from kbsync.core.board import Board, Entry, parse_board
from kbsync.core.protocol import BOARD_MD
from kbsync.errors import GitError
from kbsync.git import history


@dataclass(frozen=True)
class Changes:
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    retired: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)


def compare(old: Board, new: Board) -> Changes:
    """Entry keys added, changed, newly retired and removed between two versions of the board."""
    before = {b.entry.key: b.entry for b in old.entries()}
    after = {b.entry.key: b.entry for b in new.entries()}
    out = Changes()
    for key, e in after.items():
        prev = before.get(key)
        if prev is None:
            out.added.append(key)
        elif e.status == "retired" and prev.status != "retired":
            out.retired.append(key)
        elif e != prev:
            out.changed.append(key)
    out.removed.extend(k for k in before if k not in after)
    return out


def counts(entries: list[Entry]) -> dict[str, dict[str, int]]:
    return {
        "type": dict(Counter(e.type for e in entries).most_common()),
        "topic": dict(Counter(e.topic for e in entries).most_common()),
        "status": dict(Counter(e.status for e in entries).most_common()),
    }


def board_before(root: Path, since: str) -> tuple[str, str | None]:
    """The board as committed last before `since` ("" if none) and that commit's id."""
    try:
        sha = history.last_commit_before(root, BOARD_MD, since)
    except GitError as exc:
        raise GitError(f"cannot read the board's history ({exc.message}); is the workspace a git repository?",
                       path=str(root)) from exc
    if not sha:
        return "", None
    return history.file_at(root, sha, BOARD_MD), sha


def commits_since(root: Path, since: str) -> list[str]:
    """`<short id> <date> <subject>` of each commit that touched the board since `since`."""
    return history.log_lines(root, BOARD_MD, since)


def review(root: Path, current: str, since: str) -> dict[str, Any]:
    """The review report (without decay and drift, which need runtime state)."""
    old_text, base = board_before(root, since)
    new = parse_board(current)
    changes = compare(parse_board(old_text), new)
    entries = [b.entry for b in new.entries()]
    return {
        "since": since,
        "base_commit": base,
        "commits": commits_since(root, since),
        "added": changes.added,
        "changed": changes.changed,
        "retired": changes.retired,
        "removed": changes.removed,
        "counts": counts(entries),
        "entries": len(entries),
    }


def drift(counter_keys: set[str], board_text: str) -> list[str]:
    """Where derived, per-machine data disagrees with the Markdown: counters of entries that are gone."""
    keys = {b.entry.key for b in parse_board(board_text).entries()}
    return [f"feedback counters for {k}, which is not on the board (renamed or removed?)"
            for k in sorted(counter_keys - keys)]


def render_report(report: Mapping[str, Any]) -> str:
    """The review as Markdown for a person who updates 长期趋势."""
    lines = [f"# 看板周报 (since {report['since']})", ""]
    for name in ("added", "changed", "retired", "removed"):
        keys = report[name]
        lines += [f"## {name} ({len(keys)})", *(f"- {k}" for k in keys), ""]
    for dim, table in report["counts"].items():
        lines += [f"## by {dim}", *(f"- {k or '(none)'}: {n}" for k, n in table.items()), ""]
    lines += [f"## decay candidates ({len(report['decay'])})",
              *(f"- {d['key']}: {'; '.join(d['reasons'])}" for d in report["decay"]), ""]
    lines += [f"## drift ({len(report['drift'])})", *(f"- {d}" for d in report["drift"]), ""]
    lines += ["## commits", *(f"- {c}" for c in report["commits"]), ""]
    return "\n".join(lines)
