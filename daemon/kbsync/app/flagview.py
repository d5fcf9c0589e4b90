"""Embedded-instruction flags as the web board shows them to a person: wherever workspace text is shown,
each flag with its family, why, line and the flagged span marked in a short excerpt around it. A person
reads the file as it is (nothing withheld); the mark says which words a model would not be given: the rules'
flags and, given its verdicts (kbsync.app.guard.learned), the learned classifier's."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Mapping

if TYPE_CHECKING:
    from kbsync.core.detect.injectionclassifier import Learned

CONTEXT = 60  # characters of text shown on each side of a flagged span


@dataclass(frozen=True)
class FlagNote:
    field: str  # the entry field or "" for a whole file
    family: str
    line: int  # 1-based line in that text
    why: str
    parts: tuple[tuple[str, bool], ...]  # the excerpt in pieces, True for the flagged span


def notes(fields: Mapping[str, str], verdicts: Learned | None = None) -> list[FlagNote]:
    """Every flag of each text (by field name; "" for a whole file), with its excerpt."""
    from kbsync.core.detect.injectionclassifier import detect

    return [_note(name, text, f.family, f.line, f.why, f.start, f.end)
            for name, text in fields.items() if text for f in detect(text, verdicts)]


def families(stored: Iterable[dict[str, object]]) -> list[str]:
    """The families of flags, each once, in order (a search hit's badges)."""
    return list(dict.fromkeys(str(f.get("family", "")) for f in stored if f.get("family")))


def _note(field: str, text: str, family: str, line: int, why: str, start: int, end: int) -> FlagNote:
    start, end = max(0, min(start, len(text))), max(0, min(end, len(text)))
    before = text[max(0, start - CONTEXT):start]
    after = text[end:end + CONTEXT]
    lead = "…" if start > CONTEXT else ""
    tail = "…" if end + CONTEXT < len(text) else ""
    parts = tuple(p for p in ((lead + before, False), (text[start:end], True), (after + tail, False)) if p[0])
    return FlagNote(field, family, line, why, parts)
