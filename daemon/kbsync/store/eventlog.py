"""The append-only logs: logs/tool-calls.md and logs/errors.md, one O_APPEND line per event."""

from __future__ import annotations

import time

from kbsync.core import limits, protocol, textguard
from kbsync.store import fsio
from kbsync.store.workspace import Workspace


def utc_now_iso(now: float | None = None) -> str:
    t = time.time() if now is None else now
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def _clean(text: str, field: str, limit: int = limits.NAME) -> str:
    return " ".join(textguard.clean(limits.check(text, field, limit), field).split()).replace("|", "\\|")


def tool_call_line(session: str, tool: str, status: str, detail: str, now: float | None = None) -> str:
    parts = [utc_now_iso(now), _clean(session, "session"), _clean(tool, "tool"), _clean(status, "status")]
    if detail:
        parts.append(_clean(detail, "detail", limits.LINE))
    return " | ".join(parts)


def log_tool_call(ws: Workspace, session: str, tool: str, status: str = "ok", detail: str = "") -> str:
    line = tool_call_line(session, tool, status, detail)
    fsio.append_line(ws.path(protocol.TOOL_CALLS_LOG), line)
    return line


def log_error(ws: Workspace, message: str, now: float | None = None) -> str:
    line = f"{utc_now_iso(now)} | {' '.join(textguard.clean(limits.check(message, 'message', limits.LINE), 'message').split())}"
    fsio.append_line(ws.path(protocol.ERRORS_LOG), line)
    return line
