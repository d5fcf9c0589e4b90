"""Validation of workspace files against the protocol: pure checks of one file's text."""

from __future__ import annotations

import re
from typing import Any, Callable, Iterable, Iterator

from kbsync.config import Config
from kbsync.core import board, body, frontmatter, protocol, sessionfast
from kbsync.core.findings import Finding, Level
from kbsync.core.session import HandFixError, typed_field

_FULLWIDTH_KEY = re.compile(r"^([^\s:：#'\"\[\]{}-][^\s:：]*?)[ \t]*：")
_TIME_FIRST = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?Z")
Check = Callable[[str, str, Config], list[Finding]]
Failed = tuple[Level, str] | None  # a field check's verdict: None when the value is right
FieldCheck = Callable[[str, Any, Config], Failed]


def _repair_hint(relpath: str) -> str:
    return f"run `kbsync repair {relpath}`"


def plain_value_defect(raw: str) -> str | None:
    """Why an unquoted value would fail or be cut by YAML, if it would."""
    if not raw or raw.startswith(("\"", "'", "[", "{", "|", ">", "&", "*", "!")):
        return None
    if raw.startswith(("@", "`", "%")):
        return f"value starts with a reserved character {raw[0]!r}"
    if ": " in raw or raw.endswith(":"):
        return "unquoted value contains ': '"
    if " #" in raw or "\t#" in raw:
        return "unquoted ' #' starts a YAML comment and cuts the value"
    return None


def frontmatter_line_findings(relpath: str, lines: list[str], entries: list[frontmatter.Entry]) -> list[Finding]:
    """Line-level defects that make YAML fail or silently cut a value."""
    out: list[Finding] = []
    for i, line in enumerate(lines):
        if "：" in line and _FULLWIDTH_KEY.match(line) and not frontmatter.KEY_LINE.match(line):
            out.append(Finding(relpath, i + 2, "error", f"full-width colon after a key; {_repair_hint(relpath)}"))
    for e in entries:
        why = plain_value_defect(e.raw)
        if why:
            out.append(Finding(relpath, e.index + 2, "error", f"{e.key}: {why}; quote the value or {_repair_hint(relpath)}"))
    return out


def _check_id(relpath: str, value: Any, cfg: Config) -> Failed:
    if not protocol.ID_RE.match(value):
        return "error", f"id {value!r} is not YYYYMMDD-HHMM-<7 hex>"
    expected = protocol.id_from_relpath(relpath)
    if expected and expected != value:
        return "error", f"id {value} does not match the file name (expected {expected}); rename the file or fix the id"
    return None


def _check_ts(relpath: str, value: Any, cfg: Config) -> Failed:
    ts = protocol.parse_ts(value)
    if ts is None:
        return "error", f"ts {value!r} is not an ISO 8601 timestamp such as 2025-06-11T14:32:07+08:00"
    if ts.spaced:
        return "error", f"ts {value!r} has a space between date and time; ISO 8601 puts a T there: {_repair_hint(relpath)}"
    if ts.offset is None:
        return "error", f"ts has no offset; {_repair_hint(relpath)} to append {cfg.protocol.default_offset}"
    return None


def _one_of(key: str, allowed: tuple[str, ...]) -> FieldCheck:
    def check(relpath: str, value: Any, cfg: Config) -> Failed:
        return None if value in allowed else ("error", f"{key} {value!r} is not one of {', '.join(allowed)}")
    return check


def _check_tags(relpath: str, value: Any, cfg: Config) -> Failed:
    return ("warning", f"{len(value)} tags; keep at most {protocol.MAX_TAGS}") if len(value) > protocol.MAX_TAGS else None


def _check_summary(relpath: str, value: Any, cfg: Config) -> Failed:
    if len(value) > protocol.MAX_SUMMARY:
        return "warning", f"summary has {len(value)} characters; keep it to {protocol.MAX_SUMMARY}"
    return None


def _check_parent(relpath: str, value: Any, cfg: Config) -> Failed:
    if value is not None and not protocol.ID_RE.match(value):
        return "warning", f"parent {value!r} is not a session id"
    return None


# The check of each typed field's value that has one: (level, message) when it fails.
_FIELD_CHECKS: dict[str, FieldCheck] = {
    "id": _check_id, "ts": _check_ts, "role": _one_of("role", protocol.ROLES),
    "status": _one_of("status", protocol.STATUSES), "tags": _check_tags, "summary": _check_summary,
    "parent": _check_parent,
}


_SESSION_FIELDS = frozenset(protocol.SESSION_FIELDS)


def _id_ts_agree(relpath: str, fields: dict[str, Any], line: int) -> list[Finding]:
    sid, ts = fields.get("id"), fields.get("ts")
    if not (isinstance(sid, str) and isinstance(ts, str) and protocol.ID_RE.match(sid)):
        return []
    parts = protocol.parse_ts(ts)
    if parts and sid[:13] != f"{parts.date.replace('-', '')}-{parts.hhmm}":
        return [Finding(relpath, line, "warning", f"id {sid} does not match ts {ts} (date and time of creation)")]
    return []


def session_frontmatter_findings(relpath: str, lines: list[str], cfg: Config) -> list[Finding]:
    entries = frontmatter.entries(lines)
    out = frontmatter_line_findings(relpath, lines, entries)
    if out:
        return out
    parsed = frontmatter.parse(lines, entries)
    if parsed.mapping is None:
        assert parsed.error is not None
        line, msg = parsed.error
        return [Finding(relpath, line + 2, "error", f"frontmatter does not parse ({msg}); fix it by hand")]
    fields: dict[str, Any] = {}
    where: dict[str, int] = {}
    mapping = parsed.mapping
    for e in entries:  # once per file and field: kept to plain statements
        key, line = e.key, e.index + 2
        if key not in _SESSION_FIELDS:
            continue
        where[key] = line
        try:
            value = fields[key] = typed_field(key, mapping.get(key), e.raw)
        except HandFixError as exc:
            out.append(Finding(relpath, line, "error", str(exc)))
            continue
        except ValueError as exc:
            out.append(Finding(relpath, line, "error", f"{exc}; {_repair_hint(relpath)}"))
            continue
        check = _FIELD_CHECKS.get(key)
        failed = check(relpath, value, cfg) if check else None
        if failed is not None:
            out.append(Finding(relpath, line, failed[0], failed[1]))
    for key in protocol.REQUIRED_FIELDS:
        if key not in where:
            out.append(Finding(relpath, 1, "error", f"required field {key!r} is missing; {_repair_hint(relpath)}"))
    out += _id_ts_agree(relpath, fields, where.get("id", 1))
    return out


def section_findings(relpath: str, body_text: str, first_line: int, cfg: Config) -> list[Finding]:
    heads = body.h2_in(body_text)
    titles = [h.title for h in heads]
    out: list[Finding] = []
    for name in protocol.SECTIONS:
        n = titles.count(name)
        if n == 0:
            out.append(Finding(relpath, first_line, "error", f"section '## {name}' is missing; {_repair_hint(relpath)}"))
        elif n > 1:
            dup = [h for h in heads if h.title == name][1]
            out.append(Finding(relpath, first_line + dup.index, "warning", f"section '## {name}' appears {n} times"))
    order = [t for t in titles if t in protocol.SECTIONS]
    if not out and order != list(protocol.SECTIONS):
        out.append(Finding(relpath, first_line, "warning", f"sections are out of order; expected {' '.join(protocol.SECTIONS)}"))
    limit = cfg.protocol.max_session_kb * 1024
    size = len(body_text) if len(body_text) * 4 <= limit else len(body_text.encode("utf-8"))
    if size > limit:
        sid = protocol.id_from_relpath(relpath) or relpath
        out.append(Finding(relpath, first_line, "warning",
                           f"body is {size // 1024} KB, over {cfg.protocol.max_session_kb} KB; run `kbsync session split {sid}`"))
    return out


def check_session(relpath: str, text: str, cfg: Config) -> list[Finding]:
    if sessionfast.is_clean(relpath, text, cfg.protocol.max_session_kb * 1024):
        return []
    return check_session_fully(relpath, text, cfg)


def check_session_fully(relpath: str, text: str, cfg: Config) -> list[Finding]:
    """`check_session` without its fast path (`kbsync.core.sessionfast`): every rule, one by one."""
    sp = frontmatter.split(text)
    if sp.state == "none":
        return [Finding(relpath, 1, "error", f"no frontmatter (a `---` block at the top); {_repair_hint(relpath)}")]
    if sp.state == "unterminated":
        return [Finding(relpath, 1, "error", "frontmatter opened on line 1 is never closed with `---`; fix it by hand")]
    out = session_frontmatter_findings(relpath, sp.lines, cfg)
    if protocol.id_from_relpath(relpath) is None:
        out.append(Finding(relpath, 1, "warning", "a session belongs at sessions/YYYY-MM-DD/HHMM-<h7>-<title>.md"))
    return out + section_findings(relpath, sp.body, sp.body_line, cfg)


def check_index(relpath: str, text: str, cfg: Config) -> list[Finding]:
    from kbsync.core import indexmd

    return indexmd.findings(relpath, text)


def append_only_findings(relpath: str, lines: Callable[[], Iterable[str]], exists: Callable[[str], bool] | None,
                         marked: bool) -> Iterator[Finding]:
    """What `validate_text` gives for an append-only file (index.md, a log), then, for index.md given `exists`, a
    warning for each row that names a session `exists` says is gone, from the file's lines (LF, no BOM) as
    `lines()` gives them anew at each call, never all at once. `marked`: whether the file may hold a conflict
    marker (`may_hold_markers` of some part of it)."""
    from kbsync.core import indexmd

    rows = indexmd.RowCheck(relpath, exists)
    yield from rows.findings(lines()) if protocol.classify(relpath) == "index" else log_findings(relpath, lines())
    if marked:
        yield from marker_findings(relpath, lines)
    yield from rows.gone_findings()


def check_board(relpath: str, text: str, cfg: Config) -> list[Finding]:
    return board.validate_board(text, relpath)


def check_log(relpath: str, text: str, cfg: Config) -> list[Finding]:
    return list(log_findings(relpath, text.split("\n")))


def log_findings(relpath: str, lines: Iterable[str]) -> Iterator[Finding]:
    for i, line in enumerate(lines):
        if line.strip() and not _TIME_FIRST.match(line):
            yield Finding(relpath, i + 1, "warning", "log line does not start with an ISO 8601 UTC time")


def check_memory(relpath: str, text: str, cfg: Config) -> list[Finding]:
    from kbsync.core import facts

    return facts.findings(relpath, text) if facts.is_entry_file(relpath) else []


CHECKS: dict[str, Check] = {
    "session": check_session,
    "index": check_index,
    "board": check_board,
    "log": check_log,
    "memory": check_memory,
}


def conflict_markers(relpath: str, text: str) -> list[Finding]:
    """git's conflict markers left in a file, outside code fences: `<<<<<<<`, `|||||||` and `>>>>>>>` at the
    start of a line, and `=======` alone on a line once one of those is there (alone it can be a heading's
    underline). A file holding them is never committed as content."""
    if not may_hold_markers(text):
        return []
    lines = text.split("\n")
    return list(marker_findings(relpath, lambda: lines))


def may_hold_markers(text: str) -> bool:
    """False when `text` (a whole file, or any run of its lines) holds no conflict marker for certain."""
    return "<<<<<<<" in text or ">>>>>>>" in text


def marker_findings(relpath: str, lines: Callable[[], Iterable[str]]) -> Iterator[Finding]:
    """`conflict_markers` of a file whose lines `lines()` gives anew at each call, one line at a time: a
    first pass finds whether a side marker is there at all, a second says each marker line."""
    if not any(side for _, side, _ in _markers(lines())):
        return
    for i, _, line in _markers(lines()):
        yield Finding(relpath, i + 1, "error", f"git conflict marker `{line[:7]}`: resolve the conflict (keep what "
                      "is right, delete the marker lines), then save")


def _markers(lines: Iterable[str]) -> Iterator[tuple[int, bool, str]]:
    """(0-based index, whether it is a side rather than `=======`, line) of each marker line outside code."""
    for i, line in body.unfenced(lines):
        if body.CONFLICT_SIDE.match(line):
            yield i, True, line
        elif line.rstrip() == "=======":
            yield i, False, line


def validate_text(relpath: str, text: str, cfg: Config) -> list[Finding]:
    """Every protocol finding for one file's text (LF or CRLF), git conflict markers included."""
    check = CHECKS.get(protocol.classify(relpath))
    lf = text.replace("\r\n", "\n")
    return (check(relpath, lf, cfg) if check else []) + conflict_markers(relpath, lf)
