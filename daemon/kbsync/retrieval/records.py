"""Search records from workspace files, pure: what the derived index stores for each file.

A session, memory file or artifact gives one record; the knowledge board gives
one record per entry. A session whose frontmatter cannot be read is still
indexed by its text (so it can be found and repaired) but is marked `broken`:
its fields are never guessed, and context assembly and statistics skip it.
Every record carries the embedded-instruction flags of its text (kbsync.core.detect.injection;
spans and lines in the file), since memory written by a model can carry an instruction too.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any

from kbsync.core import protocol
from kbsync.core.board import parse_board
from kbsync.core.detect import injection
from kbsync.core.session import parse_session
from kbsync.errors import KbsyncError

_H1 = re.compile(r"^# +(.+?)\s*$", re.MULTILINE)
_DAY = re.compile(r"/(\d{4}-\d{2}-\d{2})/")

# The source name of each workspace kind, as `--source` and `source:` know it.
KIND_SOURCES = {"session": "sessions", "board": "board", "memory": "memory", "artifact": "artifacts"}


@dataclass(frozen=True)
class Record:
    key: str
    relpath: str
    kind: str
    title: str
    summary: str = ""
    body: str = ""
    tags: tuple[str, ...] = ()
    status: str = ""
    type: str = ""
    source: str = ""
    date: str = ""  # UTC `YYYY-MM-DDTHH:MM:SSZ` for sessions, `YYYY-MM-DD` otherwise, "" when unknown
    broken: str = ""  # why the frontmatter could not be read; "" when it could
    fields: dict[str, Any] = field(default_factory=dict, compare=False)
    flags: tuple[dict[str, object], ...] = field(default=(), compare=False)  # Flag.as_dict(), in the file's offsets


def records_for(relpath: str, text: str, default_offset: str = "+08:00", *, flagged: bool = True) -> list[Record]:
    """The records a workspace file contributes to the search index (none for logs, index.md ...); with
    `flagged` False, without their embedded-instruction flags (the costly part)."""
    kind = protocol.classify(relpath)
    if kind == "board" and relpath == protocol.BOARD_MD:
        return board_records(relpath, text, flagged=flagged)
    if kind == "session":
        rec = session_record(relpath, text, default_offset)
    elif kind in ("memory", "artifact"):
        rec = plain_record(relpath, text, kind)
    else:
        return []
    return [dataclasses.replace(rec, flags=flags_of(text)) if flagged else rec]


def flags_of(text: str) -> tuple[dict[str, object], ...]:
    """The embedded-instruction flags of `text`, as stored in the index."""
    return tuple(f.as_dict() for f in injection.detect(text))


def session_record(relpath: str, text: str, default_offset: str) -> Record:
    title = _session_title(relpath)
    try:
        doc = parse_session(text)
    except (KbsyncError, ValueError) as exc:
        return Record(key=relpath, relpath=relpath, kind="session", title=title, body=text,
                      broken=str(exc) or "frontmatter cannot be read")
    f = doc.fields
    title = str(f.get("title") or title)
    ts = str(f.get("ts") or "")
    stamp = utc_stamp(ts, None)  # "" without an offset: then the field's problem, and the default offset's time
    body = "\n".join(f"## {h}\n{c}" for h, c in doc.sections)
    tags = tuple(str(t) for t in f.get("tags") or ())
    return Record(key=relpath, relpath=relpath, kind="session", title=title,
                  summary=str(f.get("summary") or ""), body=body, tags=tags,
                  status=str(f.get("status") or ""), date=stamp or utc_stamp(ts, default_offset),
                  broken=_field_problem(f, stamp), fields=dict(f))


def _field_problem(fields: dict[str, Any], stamp: str) -> str:
    """What is wrong with the fields of a session whose `ts` reads as `stamp` in UTC ("" when it cannot)."""
    missing = [k for k in protocol.REQUIRED_FIELDS if k not in fields]
    if missing:
        return f"required field(s) missing: {', '.join(missing)}"
    if fields["status"] not in protocol.STATUSES:
        return f"status {fields['status']!r} is not one of {', '.join(protocol.STATUSES)}"
    if not isinstance(fields["tags"], list):
        return "tags is not a list"
    if stamp == "":
        return f"ts {fields['ts']!r} is not an ISO 8601 time with offset"
    return ""


def utc_stamp(ts: str, default_offset: str | None) -> str:
    """`ts` in UTC as `YYYY-MM-DDTHH:MM:SSZ`; a time without offset takes `default_offset` (None: refused)."""
    try:
        when = dt.datetime.fromisoformat(ts.replace(" ", "T", 1))
    except ValueError:
        return ""
    if when.tzinfo is None:
        if default_offset is None:
            return ""
        when = dt.datetime.fromisoformat(ts.replace(" ", "T", 1) + default_offset.replace("Z", "+00:00"))
    return when.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _session_title(relpath: str) -> str:
    name = relpath.rsplit("/", 1)[-1][:-3]
    parts = name.split("-", 2)
    return parts[2] if len(parts) == 3 and parts[2] else name


def plain_record(relpath: str, text: str, kind: str) -> Record:
    """A memory file, artifact or folder document: title from its first `# ` heading, else its name."""
    m = _H1.search(text)
    title = m.group(1) if m else relpath.rsplit("/", 1)[-1][:-3]
    day = _DAY.search("/" + relpath)
    return Record(key=relpath, relpath=relpath, kind=kind, title=title, summary=_first_line(text, title),
                  body=text, date=day.group(1) if day else "")


def _first_line(text: str, title: str) -> str:
    for line in text.splitlines():
        line = line.strip().lstrip("-*# ").strip()
        if line and line != title and not line.startswith("---"):
            return line
    return ""


def board_records(relpath: str, text: str, *, flagged: bool = True) -> list[Record]:
    """One record per knowledge-board entry, keyed `LEARNING_BOARD.md#<title>@<source_date>`. The board is
    checked for embedded instructions as a whole, once (unless `flagged` is False); each entry keeps the
    flags whose line falls within it."""
    out = []
    flags = injection.detect(text) if flagged else []
    for block in parse_board(text).entries():
        e = block.entry
        end = block.start + len(block.raw.splitlines())  # the entry's last line, 1-based
        out.append(Record(key=f"{relpath}#{e.key}", relpath=relpath, kind="board", title=e.title,
                          summary=e.summary, body=e.core_content, tags=tuple(dict.fromkeys([*e.scenarios, e.topic])),
                          status=e.status or "active", type=e.type, source=e.source, date=e.source_date,
                          fields={"topic": e.topic, "confidence": e.confidence, "scenarios": list(e.scenarios)},
                          flags=tuple(f.as_dict() for f in flags if block.start < f.line <= end)))
    return out
