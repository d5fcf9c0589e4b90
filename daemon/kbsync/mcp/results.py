"""The shapes of the tools' results: each tool's return annotation names one, the SDK derives the tool's output
schema from it and validates the result against it before sending it twice, as structured content and as the
same JSON in a text block (for clients that read text). Workspace text sits under `content`, its flagged spans
withheld and named in `flags` (kbsync.mcp.present). The results of the lower floors' own `as_dict` (the status
report, an entry's counters, a fact written, a flag) are defined once in kbsync.results."""

from __future__ import annotations

from typing_extensions import NotRequired, TypedDict

from kbsync.results import FactAction, FactChange, FeedbackCounts, FlagAtUse, StatusReport

__all__ = ["Applied", "EntryReplaced", "EntryWritten", "FactChange", "FeedbackCounts", "Forgotten", "Found", "Logged",
           "Pack", "Read", "SectionWritten", "SessionSaved", "StatusReport"]


class FieldFlag(FlagAtUse):
    field: str  # the `content` field it was withheld from


class PackFlag(FlagAtUse):
    section: str  # the part it was withheld from
    entry: str  # the entry (a path, a board title, facts); the span is in the entry's piece as gathered


class HitText(TypedDict):
    title: str
    summary: str
    heading: NotRequired[str]  # the best passage's heading and text, when the hit has one
    passage: NotRequired[str]
    flags: list[FieldFlag]


class Hit(TypedDict):
    key: str
    path: NotRequired[str]
    url: NotRequired[str]
    sources: list[str]
    score: float
    flags: list[FlagAtUse]  # the record's, in its file's offsets
    content: HitText


class Failure(TypedDict):
    source: str
    why: str


class Found(TypedDict):
    results: list[Hit]
    failures: list[Failure]


class PartText(TypedDict):
    text: str
    flags: list[PackFlag]


class Part(TypedDict):
    name: str
    tokens: int
    content: PartText


class Pack(TypedDict):
    budget: int
    limit: int
    tokens: int
    parts: list[Part]
    notes: list[str]


class Text(TypedDict):
    text: str
    flags: list[FieldFlag]


class Page(TypedDict):
    offset: int
    end: int
    total: int
    next_offset: int | None  # null after the last page


class Read(TypedDict):
    kind: str
    ref: str
    path: str
    versions: NotRequired[dict[str, str]]
    content: Text
    page: Page


class SessionSaved(TypedDict):
    path: str
    id: str
    created: bool


class SectionWritten(TypedDict):
    path: str
    section: str
    changed: bool
    version: str


class Logged(TypedDict):
    line: str


class EntryWritten(TypedDict):
    key: str
    action: str  # added, updated or unchanged


class EntryReplaced(EntryWritten):
    was: str  # the key it had before
    version: str


class Applied(TypedDict):
    entries: list[FeedbackCounts]


class ValueText(TypedDict):
    value: str
    flags: list[FieldFlag]


class Forgotten(TypedDict):
    path: str
    key: str
    action: FactAction
    content: ValueText
