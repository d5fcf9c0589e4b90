"""Workspace text handed to a model by a door (the MCP server, the HTTP API): what the embedded-instruction
detector (kbsync.core.injection) flags is withheld and named.

Memory is data, never instructions. There is one flag model, kbsync.core.injection.Flag: a door gives a
model the text with each flagged span replaced by a marker naming its families, beside `flags` in their
at-use form (family, span, line, why: never the span's own words). The file itself is never changed: a
person reads it as it is.
"""

from __future__ import annotations

from typing import Any, Iterable

from kbsync.core.injection import Flag, Guarded, at_use as stored_at_use, detect, guard

__all__ = ["Guarded", "at_use", "content", "field_flags", "guard", "record_flags"]


def at_use(flags: Iterable[Flag], **where: str) -> list[dict[str, object]]:
    """`flags` as a model may see them, each with `where` (e.g. field="summary") in front."""
    return [{**where, **f.at_use()} for f in flags]


def content(**fields: str) -> dict[str, Any]:
    """Workspace text fields, guarded: each flagged span withheld, `flags` naming the field, family and span
    (offsets into that field's text as stored)."""
    out: dict[str, Any] = {}
    flags: list[dict[str, object]] = []
    for name, text in fields.items():
        safe = guard(text)
        out[name] = safe.text
        flags += at_use(safe.flags, field=name)
    out["flags"] = flags
    return out


def field_flags(**fields: str) -> list[dict[str, object]]:
    """The flags of each text field, at use, the text left as it is (for text a person edits and sends back)."""
    return [f for name, text in fields.items() for f in at_use(detect(text), field=name)]


def record_flags(stored: Iterable[dict[str, object]]) -> list[dict[str, object]]:
    """A search record's flags as the index holds them (the file's offsets), in their at-use form."""
    return [stored_at_use(f) for f in stored]
