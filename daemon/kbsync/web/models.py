"""The API's requests (besides the board's, in boardmodels) and its error body: the
OpenAPI document is generated from these classes and, for every other answer, from the shapes of
kbsync.results that the command line and the MCP tools give too. Requests refuse unknown keys; the core checks
every value again."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from kbsync.app import sessions


def one_of(values: Sequence[str], description: str = "") -> Any:
    """A string the schema lists the allowed values of (the core checks them, and names a wrong one)."""
    return WithJsonSchema({"type": "string", "enum": list(values), **({"description": description} if description else {})})


class Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Empty(Request):
    """No fields: send `{}`."""


# ---- errors ------------------------------------------------------------------------------------------

class FieldProblem(BaseModel):
    field: str
    message: str


class ErrorDetail(BaseModel):
    code: str = Field(description="bad_request, unauthorized, forbidden, csrf, not_found, method_not_allowed, "
                                  "locked, conflict, stale, protocol, too_large, unsupported_media_type, invalid, secret, "
                                  "unavailable, internal")
    message: str = Field(description="one line: what went wrong, naming the file, and what to do")
    field: str | None = Field(default=None, description="the request field at fault, when one is")
    path: str | None = Field(default=None, description="the workspace file concerned, when one is")
    details: list[FieldProblem] | None = Field(default=None, description="every field at fault, for a body that failed "
                                                                 "validation")
    version: str | None = Field(default=None, description="for `stale`: the version the thing has now (send it as "
                                                          "If-Match to overwrite it knowingly)")
    current: Any = Field(default=None, description="for `stale`: the thing as it is now (an entry's fields, a "
                                                   "section's or a fact's text)")
    changed: list[str] | None = Field(default=None, description="for `stale`: the fields in which the current "
                                                                "entry differs from what was sent")


class ErrorBody(BaseModel):
    error: ErrorDetail


# ---- status, commit, sync, stats ----------------------------------------------------------------------


class CommitRequest(Request):
    message: str | None = Field(default=None, description="commit subject (default: what the commit holds)")


# ---- sessions and logs ----------------------------------------------------------------------------------

SessionId = Annotated[str, Field(pattern=sessions.ID_PATTERN, description="YYYYMMDD-HHMM-<7 hex>",
                                 examples=["20250611-1432-3f9a2c1"])]


class SessionSave(Request):
    """The object `kbsync session save` reads; saving the same session_id again updates that file."""

    session_id: str = Field(min_length=1, description="the caller's own id for the session, e.g. a UUID")
    title: str | None = None
    ts: str | None = Field(default=None, description="ISO 8601; default now; without an offset, [protocol] "
                                             "default_offset is appended", examples=["2025-06-11T14:32:07+08:00"])
    role: Annotated[str, one_of(sessions.ROLES)] | None = None
    tags: list[str] | None = None
    model: str | None = None
    turns: int | None = Field(default=None, ge=0)
    tokens_in: int | None = Field(default=None, ge=0)
    tokens_out: int | None = Field(default=None, ge=0)
    status: Annotated[str, one_of(sessions.STATUSES)] | None = None
    summary: str | None = None
    parent: str | None = Field(default=None, pattern=sessions.ID_PATTERN)
    sections: dict[str, str] | None = Field(default=None, description="heading -> text, e.g. {\"结论\": \"...\"}")


class SectionText(Request):
    text: str = Field(description="the section's new content (or what to append); a heading inside stays text")


class ToolCall(Request):
    session: str = Field(min_length=1, description="session id")
    tool: str = Field(min_length=1)
    status: str = Field(default="ok", description="ok, error, timeout, ...")
    detail: str = ""


class ErrorLog(Request):
    message: str = Field(min_length=1, description="what happened, one line")


# ---- search and context ---------------------------------------------------------------------------------


class ContextRequest(Request):
    query: str = Field(default="", description="what the task is about (search words and filters)")
    tags: list[str] = Field(default_factory=list, description="the task's tags")
    budget: int | None = Field(default=None, gt=0, description="token budget (default: [context] budget)")


class MemoryBlockRequest(Request):
    query: str = Field(default="", max_length=100_000, description="the prompt; empty at a session's start")
    budget: int | None = Field(default=None, gt=0, description="token budget (default: [assist] budget_tokens)")
    session: str = Field(default="", max_length=200, description="the assistant's id of the conversation, whose "
                         "own session is left out")


# ---- memory ---------------------------------------------------------------------------------------------


class FactSet(Request):
    """What `kbsync memory set` takes: the value, and the file (memory/facts.md unless one is named)."""

    value: str = Field(description="one line (no line break or control character); empty for a bare `- KEY`")
    entity: str | None = Field(default=None, description="in memory/entities/<slug of the name>.md (made on first "
                                                         "use); not with preferences")
    preferences: bool = Field(default=False, description="in memory/preferences.md; not with entity")


# ---- conflicts ------------------------------------------------------------------------------------------


class Keep(Request):
    keep: Literal["mine", "theirs", "both"] = Field(description="mine: the copy's version; theirs: the file's; both: "
                                                                "both versions of each fact (memory files only)")

