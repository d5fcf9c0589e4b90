"""Validation of a `session save` payload into typed fields and sections. Pure."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any

from kbsync.core import limits, protocol, textguard
from kbsync.errors import InputError

KEYS = ("session_id", "title", "ts", "role", "tags", "model", "turns", "tokens_in", "tokens_out",
        "status", "summary", "parent", "sections")
_OFFSET = re.compile(r"^([+-])(\d{2}):(\d{2})$")


@dataclass(frozen=True)
class SessionInput:
    raw_id: str
    title: str
    fields: dict[str, Any]  # only the keys the caller gave, typed
    sections: dict[str, str]


def now_iso(offset: str, now: dt.datetime | None = None) -> str:
    """The current time, to the second, in the configured offset (e.g. +08:00)."""
    if offset == "Z":
        tz = dt.timezone.utc
    else:
        m = _OFFSET.match(offset)
        assert m, offset
        delta = dt.timedelta(hours=int(m.group(2)), minutes=int(m.group(3)))
        tz = dt.timezone(delta if m.group(1) == "+" else -delta)
    t = (now or dt.datetime.now(dt.timezone.utc)).astimezone(tz).replace(microsecond=0)
    return t.isoformat().replace("+00:00", "Z") if offset == "Z" else t.isoformat()


def _bad(where: str, msg: str) -> InputError:
    return InputError(msg, path=where)


def _str(data: dict[str, Any], key: str, where: str) -> str:
    value = data[key]
    if not isinstance(value, str):
        raise _bad(where, f"{key} must be a string")
    return value


# The most each one-line field may hold (docs/protocol.md, "Limits"); sections: the session file's size.
_LIMITS = {"session_id": limits.NAME, "title": limits.TITLE, "ts": limits.NAME, "role": limits.NAME,
           "model": limits.NAME, "status": limits.NAME, "summary": limits.SUMMARY, "parent": limits.NAME}


def _check_sizes(data: dict[str, Any], where: str) -> None:
    """Every field within its maximum, before any message could repeat one."""
    for key, limit in _LIMITS.items():
        if isinstance(data.get(key), str):
            limits.check(data[key], key, limit, where)
    tags, sections = data.get("tags"), data.get("sections")
    if isinstance(tags, list):
        limits.check_items(tags, "tags", where)
        for tag in tags:
            if isinstance(tag, str):
                limits.check(tag, "a tag", limits.NAME, where)
    if isinstance(sections, dict):
        limits.check_items(list(sections), "sections", where)
        for name in sections:
            limits.check(name, "a section name", limits.NAME, where)


def parse_input(data: dict[str, Any], default_offset: str, where: str = "<stdin>") -> SessionInput:
    textguard.check_tree(data, where)
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise _bad(where, f"unknown key(s) {', '.join(map(limits.shown, unknown))}; allowed: {', '.join(KEYS)}")
    _check_sizes(data, where)
    if not isinstance(data.get("session_id"), str) or not data["session_id"].strip():
        raise _bad(where, "session_id is required: the caller's own id for the session, e.g. a UUID")
    fields: dict[str, Any] = {}
    for key in ("role", "status", "summary", "model"):
        if key in data and data[key] is not None:
            fields[key] = _str(data, key, where)
    if "role" in fields and fields["role"] not in protocol.ROLES:
        raise _bad(where, f"role {fields['role']!r} is not one of {', '.join(protocol.ROLES)}")
    if "status" in fields and fields["status"] not in protocol.STATUSES:
        raise _bad(where, f"status {fields['status']!r} is not one of {', '.join(protocol.STATUSES)}")
    if "ts" in data and data["ts"] is not None:
        ts = _str(data, "ts", where)
        parts = protocol.parse_ts(ts)
        if parts is None:
            raise _bad(where, f"ts {ts!r} is not ISO 8601, e.g. 2025-06-11T14:32:07+08:00")
        fields["ts"] = protocol.iso_ts(ts, default_offset)
    if "tags" in data:
        tags = data["tags"]
        if not isinstance(tags, list) or not all(isinstance(t, str) and t.strip() for t in tags):
            raise _bad(where, "tags must be a JSON array of non-empty strings")
        fields["tags"] = [t.strip() for t in tags]
    for key in protocol.INT_FIELDS:
        if key in data and data[key] is not None:
            if not isinstance(data[key], int) or isinstance(data[key], bool) or data[key] < 0:
                raise _bad(where, f"{key} must be a non-negative integer")
            if data[key] >= 10 ** protocol.MAX_INT_DIGITS:
                raise _bad(where, f"{key} has more than {protocol.MAX_INT_DIGITS} digits; give the real count")
            fields[key] = data[key]
    if "parent" in data:
        parent = data["parent"]
        if parent is not None and (not isinstance(parent, str) or not protocol.ID_RE.match(parent)):
            raise _bad(where, "parent must be a session id (YYYYMMDD-HHMM-<7 hex>) or null")
        fields["parent"] = parent
    return SessionInput(data["session_id"], _title(data, where), fields, _sections(data, where))


def _title(data: dict[str, Any], where: str) -> str:
    if "title" not in data or data["title"] is None:
        return ""
    return _str(data, "title", where)


def _sections(data: dict[str, Any], where: str) -> dict[str, str]:
    secs = data.get("sections") or {}
    if not isinstance(secs, dict):
        raise _bad(where, "sections must be an object from heading name to text")
    for name, text in secs.items():
        if not name.strip() or "\n" in name or name.lstrip().startswith("#"):
            raise _bad(where, f"section name {name!r} must be a plain one-line heading name such as 结论")
        if not isinstance(text, str):
            raise _bad(where, f"sections.{name} must be a string")
    return {name.strip(): textguard.clean(text, f"sections.{name}", where=where, multiline=True)
            for name, text in secs.items()}
