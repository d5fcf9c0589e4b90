"""The session model: typed frontmatter fields plus sections, parsed and rendered deterministically."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from kbsync.core import body, frontmatter, protocol
from kbsync.errors import ProtocolError

_QUOTED = re.compile(r"""^(['"]).*\1$""")
_INT = re.compile(r"-?\d+")
_HEADING_LIKE = re.compile(r"^[ ]{0,3}#{1,2}(?:[ \t]|$)")
_ESCAPED = re.compile(f"{_HEADING_LIKE.pattern}|{body.CONFLICT_SIDE.pattern}")  # escaped in model text


@dataclass
class SessionDoc:
    fields: dict[str, Any]  # known fields, typed (str, int, list[str], None)
    extra: list[list[str]] = field(default_factory=list)  # unknown fields: their raw lines, in order
    preamble: str = ""
    sections: list[tuple[str, str]] = field(default_factory=list)

    def section(self, name: str) -> str | None:
        for title, content in self.sections:
            if title == name:
                return content
        return None


class HandFixError(ValueError):
    """A field's value that no repair can make valid: a person must write it."""


def typed_field(key: str, value: Any, raw: str) -> Any:
    """The protocol type of a known field's BaseLoader value; raises ValueError on drift (HandFixError when
    repair cannot help)."""
    if key == "parent":
        if value in ("null", "~", "") and not _QUOTED.match(raw):
            return None
        if not isinstance(value, str):
            raise ValueError("parent must be a session id or null")
        return value
    if key == "tags":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError("tags must be a YAML list such as [a, b]")
        return value
    if key in protocol.INT_FIELDS:
        digits = len(value.strip().lstrip("-")) if isinstance(value, str) and _INT.fullmatch(value.strip()) else 0
        if digits > protocol.MAX_INT_DIGITS:
            raise HandFixError(f"{key} has {digits} digits, more than a count can have ({protocol.MAX_INT_DIGITS} "
                               "at most); it is kept as written: write the real count")
        if not isinstance(value, str) or _QUOTED.match(raw) or not _INT.fullmatch(value):
            raise ValueError(f"{key} must be an unquoted integer")
        return int(value)
    if not isinstance(value, str):
        raise ValueError(f"{key} must be a single value")
    return value


def parse_session(text: str) -> SessionDoc:
    """A SessionDoc from a session file's text; ProtocolError if its frontmatter cannot be read."""
    text = text.replace("\r\n", "\n")
    sp = frontmatter.split(text)
    if sp.state != "ok":
        raise ProtocolError("no frontmatter block", line=1)
    found = frontmatter.entries(sp.lines)
    parsed = frontmatter.parse(sp.lines, found)
    if parsed.mapping is None:
        assert parsed.error is not None
        raise ProtocolError(parsed.error[1], line=parsed.error[0] + 2)
    fields: dict[str, Any] = {}
    extra: list[list[str]] = []
    for e in found:
        if e.key in protocol.SESSION_FIELDS:
            try:
                fields[e.key] = typed_field(e.key, parsed.mapping.get(e.key), e.raw)
            except ValueError as exc:
                raise ProtocolError(str(exc), line=e.index + 2) from exc
        else:
            extra.append(e.lines)
    preamble, secs = body.sections(sp.body)
    return SessionDoc(fields, extra, preamble, secs)


def field_line(key: str, value: Any) -> str:
    """`key: value` for a known field; a timestamp stays exactly as written, unquoted."""
    if key == "ts" and isinstance(value, str) and protocol.TS_RE.match(value):
        return f"ts: {value}"
    return f"{key}: {frontmatter.emit_value(value)}"


def render_frontmatter_lines(fields: dict[str, Any], extra: list[list[str]]) -> list[str]:
    lines: list[str] = []
    for key in protocol.SESSION_FIELDS:
        if key in fields and (fields[key] is not None or key == "parent"):
            lines.append(field_line(key, fields[key]))
        elif key == "parent":
            lines.append("parent: null")
    for block in extra:
        lines.extend(block)
    return lines


def render_session(doc: SessionDoc) -> str:
    """Deterministic text: fields in protocol order, unknown fields after, then the sections."""
    lines = render_frontmatter_lines(doc.fields, doc.extra)
    return frontmatter.join(lines, body.render(doc.preamble, doc.sections))


def normalize_content(text: str) -> str:
    """Section text as a model gives it, made safe to place under a heading.

    CRLF becomes LF, surrounding blank lines go, a heading of level 1 or 2 outside
    code is escaped with a backslash so it stays text (as is a line that starts like
    a git conflict marker, which validation would refuse), and a code fence left
    open is closed. No character of the text is removed.
    """
    text = text.replace("\r\n", "\n").strip("\n")
    lines = text.split("\n")
    mask = body.code_mask(lines)
    out = [("\\" + ln if _ESCAPED.match(ln) and not mask[i] else ln) for i, ln in enumerate(lines)]
    text = "\n".join(out)
    opener = body.unclosed_fence(text)
    return f"{text}\n{opener}" if opener else text


def ordered_sections(given: dict[str, str], existing: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Canonical sections first in protocol order, then others; given text replaces existing."""
    current = dict(existing)
    current.update({k: normalize_content(v) for k, v in given.items()})
    canon = [(name, current.get(name, "")) for name in protocol.SECTIONS]
    others = [(t, current[t]) for t, _ in existing if t not in protocol.SECTIONS]
    seen = {t for t, _ in others}
    others += [(t, current[t]) for t in given if t not in protocol.SECTIONS and t not in seen]
    return canon + others
