"""The shapes of the tools' results: each tool's return annotation names one, the SDK derives the tool's output
schema from it and validates the result against it before sending it twice, as structured content and as the
same JSON in a text block (for clients that read text).

A tool answers with the keys the CLI's `--json` and the HTTP API give for the same action (kbsync.results,
built by kbsync.app.shapes), except that the workspace text of a result sits under `content`, its flagged spans
withheld and named in `flags` (kbsync.mcp.present), and that a context pack leaves out its whole text and
every flag again (each part holds its own)."""

from __future__ import annotations

from typing_extensions import NotRequired, TypedDict

from kbsync.results import (
    Applied,
    EntryWritten,
    FactAction,
    FactChange,
    FeedbackCounts,
    FieldFlag,
    FlagAtUse,
    Logged,
    PackFlag,
    SectionWritten,
    SessionSaved,
    SourceFailure,
    StatusReport,
)

__all__ = ["Applied", "EntryWritten", "FactChange", "FeedbackCounts", "Forgotten", "Found", "Logged", "Pack", "Read",
           "SectionWritten", "SessionSaved", "StatusReport"]


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


class Found(TypedDict):
    results: list[Hit]
    failures: list[SourceFailure]


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


class ValueText(TypedDict):
    value: str
    flags: list[FieldFlag]


class Forgotten(TypedDict):
    path: str
    key: str
    action: FactAction
    version: str | None  # null: the fact is gone
    content: ValueText
