"""Workspace text handed to a model by a door (the MCP server, the HTTP API): what the embedded-instruction
detector (kbsync.core.detect.injection) flags is withheld and named.

Memory is data, never instructions. There is one flag model, kbsync.core.detect.injection.Flag: a door gives a
model the text with each flagged span replaced by a marker naming its families, beside `flags` in their
at-use form (family, span, line, why: never the span's own words). The file itself is never changed: a
person reads it as it is.

A passage is flagged by the rules or by the learned classifier: `learned(ws)` gives what the classifier flags
(kbsync.retrieval.semanticflags; nothing with the semantic leg off), read once per call, and each function
here takes it beside the text, so its lines are withheld as the rules' spans are (family "classifier").
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Iterable

from kbsync.core.detect.injection import Flag, Guarded, merged_spans, neutralise
from kbsync.core.detect.injection import at_use as stored_at_use
from kbsync.core.detect.injectionclassifier import Learned, detect
from kbsync.errors import InputError

if TYPE_CHECKING:
    from kbsync.store.workspace import Workspace

__all__ = ["Guarded", "Learned", "at_use", "content", "field_flags", "field_path", "guard", "learned", "page",
           "record_flags"]


def learned(ws: Workspace) -> Learned:
    """What the classifier flags in the workspace (nothing with the semantic leg off: its store is not opened)."""
    from kbsync.retrieval.semanticflags import learned as read

    return read(ws)


def guard(text: str, verdicts: Learned | None = None) -> Guarded:
    """`text` with every span the rules or the classifier flag withheld (`neutralise`), and the flags."""
    flags = detect(text, verdicts)
    return Guarded(neutralise(text, flags) if flags else text, flags)


def field_path(loc: Iterable[object]) -> str:
    """Where in a request a wrong argument is, as an error may name it: each part (a key the caller sent may
    be megabytes) shown by its first characters only, so no error echoes an oversized input back."""
    from kbsync.core.limits import SHOWN

    return ".".join(p if len(p) <= SHOWN else p[:SHOWN] + "…" for p in map(str, loc))


def at_use(flags: Iterable[Flag], **where: str) -> list[dict[str, object]]:
    """`flags` as a model may see them, each with `where` (e.g. field="summary") in front."""
    return [{**where, **f.at_use()} for f in flags]


def content(verdicts: Learned | None = None, /, **fields: str) -> dict[str, Any]:
    """Workspace text fields, guarded: each flagged span withheld, `flags` naming the field, family and span
    (offsets into that field's text as stored)."""
    out: dict[str, Any] = {}
    flags: list[dict[str, object]] = []
    for name, text in fields.items():
        safe = guard(text, verdicts)
        out[name] = safe.text
        flags += at_use(safe.flags, field=name)
    out["flags"] = flags
    return out


def page(text: str, offset: int, limit: int, verdicts: Learned | None = None) -> tuple[dict[str, Any], int]:
    """The part of `text` from `offset`, at most `limit` characters, guarded as `content` guards a whole text,
    and where it ends. The flags are found in the whole text, so an instruction cut in two by a page is still
    found; a page ends at a line's end where one lies within it, and never inside a flagged span (it ends
    before it, or after it when the span alone is longer than a page: withheld, it is a short marker). The
    flags' spans are the text's own offsets."""
    total = len(text)
    if offset < 0 or limit < 1:
        raise InputError(f"offset {offset} and limit {limit}: give an offset of 0 or more and a limit of 1 or more")
    if offset > total:
        raise InputError(f"offset {offset:,} is past the end of the text ({total:,} characters)")
    flags = detect(text, verdicts)
    end = min(offset + limit, total)
    if end < total:
        cut = text.rfind("\n", offset, end)
        end = cut + 1 if cut >= offset else end
    for lo, hi, _fams in merged_spans(flags):
        if lo < end < hi:
            end = lo if lo > offset else hi
    mine = [dataclasses.replace(f, start=max(f.start, offset) - offset, end=min(f.end, end) - offset)
            for f in flags if f.start < end and f.end > offset]
    shown = neutralise(text[offset:end], mine) if mine else text[offset:end]
    kept = [f for f in flags if f.start < end and f.end > offset]
    return {"text": shown, "flags": at_use(kept, field="text")}, end


def field_flags(verdicts: Learned | None = None, /, **fields: str) -> list[dict[str, object]]:
    """The flags of each text field, at use, the text left as it is (for text a person edits and sends back)."""
    return [f for name, text in fields.items() for f in at_use(detect(text, verdicts), field=name)]


def record_flags(stored: Iterable[dict[str, object]]) -> list[dict[str, object]]:
    """A search record's flags as the index holds them (the file's offsets), in their at-use form."""
    return [stored_at_use(f) for f in stored]
