"""The shapes of results kbsync's lower floors hand out as JSON (`Flag.at_use()`, a board entry's counters, a
fact written, the status report), as TypedDicts: the one definition that the code building each result is
type-checked against and that the MCP server derives its tools' output schemas from (kbsync.mcp.results).
Root floor: imports nothing of the package."""

from __future__ import annotations

import sys
from typing import Any, Literal

if sys.version_info >= (3, 12):
    from typing import TypedDict
else:  # before Python 3.12 pydantic (which derives the MCP output schemas) reads only typing_extensions' TypedDict
    from typing_extensions import TypedDict

FactAction = Literal["added", "replaced", "unchanged", "removed"]
SettleBy = Literal["person", "time"]


class FlagAtUse(TypedDict):  # an embedded instruction found, as a model may see it: never the span's own words
    family: str
    span: list[int]  # [start, end) character offsets
    line: int  # 1-based
    why: str


class FeedbackCounts(TypedDict):  # this machine's counters of one board entry
    key: str
    helpful: int
    harmful: int
    applied: int
    last_applied: str | None
    first_seen: str | None


class FactChange(TypedDict):
    path: str
    key: str
    value: str
    action: FactAction
    version: str | None  # the fact's version after the write; None once it is removed


class WaitingItem(TypedDict):
    path: str
    reason: str
    settle_by: SettleBy
    kind: str


class StatusReport(TypedDict):  # what `kbsync status --json` says
    workspace: str
    machine: str
    running: bool
    pid: int | None
    updated: Any
    last_event: Any
    last_repair: Any
    jobs: dict[str, Any]
    last_commit: dict[str, Any] | None
    last_sync: dict[str, Any] | None
    pending: list[str]
    uncommitted: int
    waiting: list[WaitingItem]
    skipped: dict[str, str]
    conflicts: list[str]
    leftovers: list[str]
    git_operation: str | None
    unreadable: dict[str, str]
    flagged: list[dict[str, Any]]
    semantic: dict[str, Any] | None
    classified: list[dict[str, Any]] | None
