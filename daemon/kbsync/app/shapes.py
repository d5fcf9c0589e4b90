"""Each action's result as JSON, built in one place: the CLI's `--json`, the HTTP API and the MCP tools all
call these, so a field added here shows in every door (kbsync.results names each shape; the MCP tools put the
workspace text of a result under `content`, kbsync.mcp.present).

Workspace text a door hands out (a hit's title, summary and passage) is guarded: each flagged span withheld
(kbsync.app.guard). An entry's fields are given as written, for editing, with their flags beside them."""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any, cast

from kbsync.app.guard import content, field_flags, record_flags

if TYPE_CHECKING:
    from kbsync.app.board import Shown, Written
    from kbsync.app.candidates import Accepted as Accept
    from kbsync.app.candidates import Row
    from kbsync.app.conflicts import ConflictView
    from kbsync.app.guard import Learned
    from kbsync.app.retrieval import StatsResult
    from kbsync.app.sessions import SessionPage, SessionView
    from kbsync.board.feedback import DecayCandidate, Stats
    from kbsync.core.boardentry import Entry
    from kbsync.results import (
        Accepted,
        Applied,
        BoardEntry,
        Candidate,
        ConflictShown,
        Decay,
        EntryWritten,
        Found,
        Hit,
        Logged,
        Pack,
        Rejected,
        SectionWritten,
        Session,
        SessionSaved,
        SessionSummary,
        ShownEntry,
        SourceFailure,
        StatsReport,
    )
    from kbsync.results import SessionPage as Sessions
    from kbsync.retrieval.context import Pack as Assembled
    from kbsync.retrieval.fusion import Fused
    from kbsync.retrieval.search import Outcome
    from kbsync.store.sections import SectionResult
    from kbsync.store.sessions import SaveResult


# ---- search and context --------------------------------------------------------------------------------

def found(outcome: Outcome) -> Found:
    """A search: its hits, best first, and the sources left out with why."""
    return {"results": [hit(r, outcome.verdicts) for r in outcome.results], "failures": failures(outcome)}


def failures(outcome: Outcome) -> list[SourceFailure]:
    return [{"source": name, "reason": why} for name, why in outcome.failures]


def hit_fields(r: Fused) -> dict[str, Any]:
    """A hit's own fields, without its workspace text: key, path or url (when it has one), sources, score, flags."""
    where = {k: v for k, v in (("path", r.path), ("url", r.url)) if v}
    return {"key": r.key, **where, "sources": list(r.sources), "score": round(r.score, 6),
            "flags": record_flags(r.flags)}


def hit_text(r: Fused, verdicts: Learned | None) -> dict[str, Any]:
    """A hit's title, summary ("" when it has none), and best passage's heading and text (when it has one),
    guarded, with the flags of what was withheld (`field` naming title, summary, heading or passage)."""
    passage = {"heading": r.heading, "passage": r.passage} if r.passage else {}
    return content(verdicts, title=r.title, summary=r.summary, **passage)


def hit(r: Fused, verdicts: Learned | None = None) -> Hit:
    text = hit_text(r, verdicts)
    passage = {"passage": {"heading": text["heading"], "text": text["passage"]}} if "passage" in text else {}
    return cast("Hit", {**hit_fields(r), "title": text["title"], "summary": text["summary"], **passage})


def pack(p: Assembled) -> Pack:
    """A context pack: each part with its estimated tokens and the spans withheld from it (already withheld
    when the pack was assembled), the whole text and its estimated tokens."""
    parts = [{"name": name, "text": text, "tokens": tokens, "flags": [f for f in p.flags if f["section"] == name]}
             for name, text, tokens in p.parts()]
    return cast("Pack", {"budget": p.budget, "limit": p.limit, "tokens": p.tokens(),
                         "parts": parts, "notes": list(p.notes), "text": p.text(), "flags": list(p.flags)})


# ---- the board and the candidate lists -----------------------------------------------------------------

def entry(e: Entry, verdicts: Learned | None = None) -> BoardEntry:
    """An entry's fields as written (for editing), its key, and the flags of its text fields."""
    flags = field_flags(verdicts, title=e.title, summary=e.summary, core_content=e.core_content, source=e.source)
    return cast("BoardEntry", e.as_dict() | {"key": e.key, "flags": flags})


def shown_entry(shown: Shown, verdicts: Learned | None = None) -> ShownEntry:
    return cast("ShownEntry", {**entry(shown.entry, verdicts), "key": shown.key,
                               "feedback": shown.feedback.as_dict(), "version": shown.version})


def entry_written(done: Written) -> EntryWritten:
    was = {"was": done.was} if done.was else {}
    return cast("EntryWritten", {"key": done.key, "action": done.action, "version": done.version, **was})


def applied(counts: list[Stats]) -> Applied:
    return {"entries": [c.as_dict() for c in counts]}


def decay(found: list[DecayCandidate], marked: list[str] | None = None) -> Decay:
    """The decay candidates and, when they were marked, the entries set to decaying."""
    out: Decay = {"candidates": [{"key": c.key, "reasons": list(c.reasons)} for c in found]}
    if marked is not None:
        out["marked"] = marked
    return out


def candidate(r: Row) -> Candidate:
    return {"id": r.id, "list": r.list_path, "title": r.title, "status": r.status, "path": r.path,
            "flags": list(r.flags)}


def accepted(done: Accept) -> Accepted:
    return {"item": done.item, "key": done.key, "action": done.action}


def rejected(item: str, list_path: str, changed: bool) -> Rejected:
    return {"item": item, "status": "rejected", "list": list_path, "changed": changed}


# ---- sessions and statistics ----------------------------------------------------------------------------

def session_saved(done: SaveResult) -> SessionSaved:
    """A session saved, as the MCP tool answers it: the model sent the record's fields itself (the CLI and the
    API give the record, `done.record`)."""
    return {"path": done.relpath, "id": str(done.record["id"]), "created": done.created}


def logged(line: str) -> Logged:
    return {"line": line}


def section_written(done: SectionResult) -> SectionWritten:
    return {"path": done.relpath, "section": done.section, "changed": done.changed, "version": done.version}


def stats(result: StatsResult) -> StatsReport:
    return cast("StatsReport", {**result.stats.as_dict(), "pushed": result.pushed})


def session_page(page: SessionPage) -> Sessions:
    return {"sessions": [cast("SessionSummary", asdict(s)) for s in page.sessions], "next_cursor": page.next_cursor}


def session(view: SessionView) -> Session:
    """A session read: its frontmatter, and each section with its version (what an update of it sends back)."""
    return {"id": view.id, "path": view.path, "frontmatter": view.frontmatter,
            "extra_frontmatter": view.extra_frontmatter, "preamble": view.preamble,
            "sections": [{"heading": h, "content": c, "version": v}
                         for (h, c), v in zip(view.sections, view.section_versions)]}


# ---- conflicts ------------------------------------------------------------------------------------------

def conflict_shown(view: ConflictView) -> ConflictShown:
    """One conflict with both texts and the diff from theirs to mine."""
    return {**view.item.as_dict(), "mine_text": view.mine, "theirs_text": view.theirs, "diff": view.diff}
