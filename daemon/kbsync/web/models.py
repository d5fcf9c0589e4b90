"""The API's requests and responses (besides the board's, in boardmodels): the OpenAPI document is
generated from these classes. Requests refuse unknown keys; the core checks every value again."""

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

class Waiting(BaseModel):
    """One thing that waits, and who settles it: a person, or time (a lock released, a file gone quiet)."""

    path: str
    reason: str = Field(description="why it waits and what to do, one line")
    settle_by: Literal["person", "time"]
    kind: str = Field(description="left-out, conflict-status, conflict-copy, temp-file, daemon, ...")


class FlaggedRecord(BaseModel):
    path: str
    key: str = Field(description="the search record's key (a path, or LEARNING_BOARD.md#<title>@<date>)")
    families: list[str]


class Status(BaseModel):
    """The report of `kbsync status --json`: git's last commit, what waits and why, the daemon's state."""

    model_config = ConfigDict(extra="allow")
    workspace: str
    machine: str = Field(description="this machine's id, which names its conflict copies")
    running: bool = Field(description="whether `kbsync run` watches this workspace")
    waiting: list[Waiting] = Field(description="what waits, for a person or for time; empty when nothing does")
    flagged: list[FlaggedRecord] = Field(default_factory=list, description="indexed records carrying an embedded "
                                         "instruction, as last indexed")


class CommitRequest(Request):
    message: str | None = Field(default=None, description="commit subject (default: what the commit holds)")


class CommitResult(BaseModel):
    sha: str | None = Field(description="the new commit, or null when there was nothing to commit")
    message: str
    committed: list[str]
    skipped: dict[str, str] = Field(description="file -> why it was left out")
    blocked: str | None = Field(description="why no commit could be made at all; then the answer is 409 instead")


class SyncResult(BaseModel):
    mode: str
    remote_head: str | None
    pushed: bool
    pulled: list[str]
    conflicts: list[str] = Field(description="conflict copies saved for a person")
    rounds: int
    committed: str | None


class StatsGroup(BaseModel):
    key: str
    sessions: int
    turns: int
    tokens_in: int
    tokens_out: int


class Stats(BaseModel):
    by: str
    sessions: int
    dirty: int
    groups: list[StatsGroup]
    dirty_files: list[str]
    pushed: int | None = Field(default=None, description="sessions upserted into PostgreSQL when [stats] dsn is set")


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


class SessionRecord(BaseModel):
    """The saved session's frontmatter, its title and its path."""

    model_config = ConfigDict(extra="allow")
    id: str
    ts: str
    title: str
    path: str
    role: str | None = None
    parent: str | None = None
    tags: list[str] = []
    status: str | None = None
    summary: str | None = None


class Section(BaseModel):
    heading: str
    content: str
    version: str = Field(description="the section's version: send it as If-Match with an update of the section")


class Session(BaseModel):
    id: str
    path: str
    frontmatter: dict[str, Any] = Field(description="the protocol's fields, typed")
    extra_frontmatter: list[str] = Field(description="lines of fields the protocol does not know, as written")
    preamble: str = Field(description="body text before the first section")
    sections: list[Section] = Field(description="in file order")


class SessionSummary(BaseModel):
    id: str
    title: str
    ts: str
    path: str
    tags: list[str]
    status: str
    summary: str
    problem: str = Field(description="why the frontmatter could not be read; empty when it could")


class SessionPage(BaseModel):
    sessions: list[SessionSummary]
    next_cursor: str | None = Field(description="pass as `cursor` for the next page; null on the last page")


class SectionText(Request):
    text: str = Field(description="the section's new content (or what to append); a heading inside stays text")


class SectionResult(BaseModel):
    path: str
    section: str = Field(description="the heading written (a synonym such as TODO is resolved)")
    changed: bool
    version: str = Field(description="the section's version after the write")


class ToolCall(Request):
    session: str = Field(min_length=1, description="session id")
    tool: str = Field(min_length=1)
    status: str = Field(default="ok", description="ok, error, timeout, ...")
    detail: str = ""


class ErrorLog(Request):
    message: str = Field(min_length=1, description="what happened, one line")


class LogLine(BaseModel):
    line: str = Field(description="the line appended")


# ---- search and context ---------------------------------------------------------------------------------

class Flag(BaseModel):
    """An embedded instruction the detector found (docs/board.md): never the span's own words."""

    family: str = Field(description="override, role, address, output, exfiltration, tool, secrecy, hidden (the rules) or "
                        "classifier (the learned classifier, with the semantic leg on)")
    span: list[int] = Field(description="[start, end) character offsets of the flagged text")
    line: int = Field(description="1-based line where the span starts")
    why: str


class PackFlag(Flag):
    section: str = Field(description="the pack's section it was withheld from")
    entry: str = Field(description="the entry (a path, a board title, facts) it belongs to")
    span: list[int] = Field(description="[start, end) offsets in the entry's piece as gathered, before withholding")


class BestPassage(BaseModel):
    heading: str = Field(description="the `##` heading it stands under (\"\" before the first)")
    text: str = Field(description="the passage (an excerpt), with any flagged span withheld")


class SearchHit(BaseModel):
    key: str
    title: str
    sources: list[str]
    score: float
    path: str | None = None
    url: str | None = None
    summary: str | None = None
    passage: BestPassage | None = Field(default=None, description="the record's best passage for the query")
    flags: list[Flag] = Field(default_factory=list, description="the record's embedded-instruction flags, in its "
                              "file's offsets; title and summary come with any flagged span withheld")


class SourceFailure(BaseModel):
    source: str
    reason: str


class SearchResult(BaseModel):
    results: list[SearchHit] = Field(description="best first")
    failures: list[SourceFailure] = Field(description="sources left out, and why; the others still answered")


class ContextRequest(Request):
    query: str = Field(default="", description="what the task is about (search words and filters)")
    tags: list[str] = Field(default_factory=list, description="the task's tags")
    budget: int | None = Field(default=None, gt=0, description="token budget (default: [context] budget)")


class MemoryBlockRequest(Request):
    query: str = Field(default="", max_length=100_000, description="the prompt; empty at a session's start")
    budget: int | None = Field(default=None, gt=0, description="token budget (default: [assist] budget_tokens)")
    session: str = Field(default="", max_length=200, description="the assistant's id of the conversation, whose "
                         "own session is left out")


class MemoryBlock(BaseModel):
    text: str = Field(description="the fenced block, ready to put before the prompt; empty when nothing applies")
    keys: list[str] = Field(description="the entries and passages it names, as MCP `read` takes them")
    tokens: int = Field(description="estimated tokens (docs/retrieval.md)")
    withheld: int = Field(description="flagged spans withheld from it")


class ContextPart(BaseModel):
    name: str
    text: str
    tokens: int = Field(description="estimated tokens (docs/retrieval.md)")
    flags: list[PackFlag] = Field(default_factory=list, description="the spans withheld from this part")


class ContextPack(BaseModel):
    budget: int
    limit: int = Field(description="what the pack may use: budget x (1 - share_input)")
    tokens: int
    parts: list[ContextPart]
    notes: list[str]
    text: str = Field(description="the whole pack, ready for a prompt")
    flags: list[PackFlag] = Field(default_factory=list, description="every span withheld, by section and entry")


# ---- memory ---------------------------------------------------------------------------------------------

class Fact(BaseModel):
    path: str = Field(description="the memory file that holds it")
    key: str = Field(description="the key as written in the file")
    value: str
    line: int = Field(description="1-based line of its bullet")
    version: str = Field(description="the fact's version: send it as If-Match with an update of the fact")


class FactSet(Request):
    """What `kbsync memory set` takes: the value, and the file (memory/facts.md unless one is named)."""

    value: str = Field(description="one line (no line break or control character); empty for a bare `- KEY`")
    entity: str | None = Field(default=None, description="in memory/entities/<slug of the name>.md (made on first "
                                                         "use); not with preferences")
    preferences: bool = Field(default=False, description="in memory/preferences.md; not with entity")


class FactWritten(BaseModel):
    path: str = Field(description="the memory file written")
    key: str
    value: str
    action: Literal["added", "replaced", "unchanged", "removed"]
    version: str | None = Field(default=None, description="the fact's version after the write (none once removed)")


# ---- conflicts ------------------------------------------------------------------------------------------

class Version(BaseModel):
    path: str
    time: str | None = Field(description="ISO 8601: of the last commit that touched it, or its modification time")
    machine: str | None = Field(description="the machine id that made it, where known")


class Conflict(BaseModel):
    path: str = Field(description="what to settle: the conflict copy, or the file marked `status: conflict`")
    original: str = Field(description="the file it belongs to")
    kind: Literal["copy", "status"]
    mine: Version = Field(description="the copy (for a status conflict: the file itself)")
    theirs: Version | None = Field(description="the file as it stands; null for a status conflict")


class ConflictShown(Conflict):
    mine_text: str = Field(description="the text of mine")
    theirs_text: str | None = Field(description="the text of theirs; null for a status conflict or a file that is "
                                                "gone")
    diff: str = Field(description="unified diff from theirs to mine; empty for a status conflict or equal versions")


class Keep(Request):
    keep: Literal["mine", "theirs", "both"] = Field(description="mine: the copy's version; theirs: the file's; both: "
                                                                "both versions of each fact (memory files only)")


class Resolved(BaseModel):
    path: str = Field(description="the file written")
    removed: str | None = Field(description="the conflict copy removed (a backup stays in .kbsync/backup/)")
    keep: str
    commit: str | None = Field(description="the commit of both paths; null when the workspace is no git repository")
