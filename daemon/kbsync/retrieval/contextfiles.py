"""Gathering the material of a prompt pack from the workspace and its search database.

With a query, the sessions it finds come first in the search's order (relevance: the keyword and semantic
legs blended, kbsync.retrieval.search.blended_sessions), then those sharing a tag (most shared tags, then
newest); the passages are those the keyword leg scored, best first by their own and their session's
relevance, then the best passage of each session only the semantic leg found (`_passages`). Without one,
sessions sharing a tag, then newest; without either, the newest. Board entries likewise, retired ones left
out.
A session whose frontmatter cannot be read is never used: when the query finds
one, a note names it; the others are counted in one note.
"""

from __future__ import annotations

from pathlib import Path

from kbsync.core import protocol
from kbsync.core.session import parse_session
from kbsync.errors import KbsyncError, UsageError
from kbsync.retrieval import db, index, ranking
from kbsync.retrieval.context import (
    MAX_EXPANDED,
    MAX_REFERENCES,
    MAX_SUMMARIES,
    BoardItem,
    Materials,
    PassageItem,
    SessionItem,
)
from kbsync.retrieval.db import Row
from kbsync.retrieval.fusion import Hit
from kbsync.retrieval.search import blended_sessions
from kbsync.retrieval.semanticflags import learned
from kbsync.retrieval.text import Query, parse_query
from kbsync.store.workspace import Workspace

MAX_HITS = 15  # sessions a query finds for a pack (each one read and ranked by its text)
MAX_BOARD_HITS = 10  # board entries likewise (a pack shows 5)
# A passage's own relevance says where in a session the answer is; its session's, found by both legs and with
# all of its text, says which session holds it: half of the latter, measured on LoCoMo's conversations 0-4
# (a 2,000-token pack held an answer turn for 0.69 of the questions by the passages' score alone, 0.76 so;
# 0.3 and 0.7 gave the same), docs/benchmarks.md.
SESSION_SHARE = 0.5
USED = MAX_SUMMARIES + MAX_REFERENCES  # sessions a pack can name at most (summaries, then references)


def gather(ws: Workspace, query: str, tags: list[str], *, refresh: bool = True) -> Materials:
    """The material for a pack; with `refresh`, the index first catches up with edits the daemon did not see
    (a look at every file), else it is only built when missing."""
    if refresh:
        index.refresh(ws)
    else:
        index.build_missing(ws)
    conn = index.open_index(ws)
    try:
        return _gather(ws, conn, query, [t.casefold() for t in tags if t])
    finally:
        conn.close()


def _gather(ws: Workspace, conn: db.Connection, query: str, tags: list[str]) -> Materials:
    q = parse_query(query)
    if q.errors:
        raise UsageError("; ".join(q.errors))
    bodies = index.bodies(ws)
    found = ranking.search(conn, q, "session", MAX_HITS, bodies=bodies) if query.strip() else []
    order, why = blended_sessions(ws, q, found, MAX_HITS) if q.words else ([], "")
    hits = {h.key: at for at, h in enumerate(order)}
    focused = bool(query.strip() or tags)
    rows = _candidates(conn, list(hits), tags, focused, bodies)
    notes = [f"{r.relpath}: skipped, its frontmatter cannot be read ({r.broken})"
             for r in sorted(rows, key=lambda r: hits.get(r.key, len(hits))) if r.broken and r.key in hits]
    if why:
        notes.append(f"semantic search: {why}; the pack was chosen by keyword")
    unseen = db.broken_count(conn, "session") - sum(1 for r in rows if r.broken and r.key in hits)
    if unseen:
        notes.append(f"{unseen} other session(s) with unreadable frontmatter were not considered")
    ranked = _rank([r for r in rows if not r.broken], hits, tags, focused=focused)[:USED]
    sessions = [_session_item(ws, r, full=i < MAX_EXPANDED) for i, r in enumerate(ranked)]
    passages = _passages(order, [r for r in found if not r.broken], {r.key: r for r in rows if not r.broken})
    board_found = ranking.search(conn, q, "board", MAX_BOARD_HITS, bodies=bodies) if query.strip() else []
    board_hits = {r.key: at for at, r in enumerate(board_found)}
    board = [r for r in db.records(conn, "board") if r.status != "retired"]
    board_ranked = _rank(board, board_hits, tags, focused=bool(query.strip() or tags))
    items = tuple(BoardItem(r.title, r.type, str(r.fields.get("confidence", "")), r.summary) for r in board_ranked)
    return Materials(facts=tuple(_facts(ws, q.terms, tags)), passages=passages, sessions=tuple(sessions), board=items,
                     notes=tuple(notes), verdicts=learned(ws))


def _candidates(conn: db.Connection, keys: list[str], tags: list[str], focused: bool,
                bodies: db.Bodies) -> list[Row]:
    """The sessions a pack may use, read by key and filter rather than all of them: those the query found, and
    the USED newest sharing each tag (and, with several tags, sharing all of them); with neither a query nor a
    tag, the USED newest. A session sharing some but not all of three or more tags, older than the newest
    USED of each, is left out (docs/retrieval.md)."""
    found = {r.key: r for r in db.rows_of(conn, keys)}
    filters = [Query(tags=(t,)) for t in tags] + ([Query(tags=tuple(tags))] if len(tags) > 1 else [])
    for q in filters if focused else [Query()]:
        for r in db.listing(conn, q, "session", USED + len(found), bodies=bodies):
            found.setdefault(r.key, r)
    return list(found.values())


def _passages(order: list[Hit], found: list[Row], readable: dict[str, Row]) -> tuple[PassageItem, ...]:
    """The passages the keyword leg scored, best first by their own score over the best one's plus SESSION_SHARE
    times their session's (in `order`, the blended search's) over the best session's (then in the sessions'
    order, then in file order); then the best passage of each session in `order` (those whose frontmatter
    reads) that the keyword leg did not find."""
    session = {h.key: h.score for h in order}
    top_session = max(session.values(), default=0.0) or 1.0
    top_passage = max((score for r in found for score, _ in r.passages), default=0.0) or 1.0
    ranked = sorted(((score / top_passage + SESSION_SHARE * session.get(r.key, 0.0) / top_session, at, p.ordinal, r, p)
                     for at, r in enumerate(found) for score, p in r.passages), key=lambda x: (-x[0], x[1], x[2]))
    scored = {r.key for r in found}
    more = [(readable[h.key], h.heading, h.passage) for h in order if h.passage and h.key in readable
            and h.key not in scored]
    return tuple([PassageItem(r.relpath, r.title, r.date, p.heading, p.text) for _, _, _, r, p in ranked] +
                 [PassageItem(r.relpath, r.title, r.date, heading, text) for r, heading, text in more])


def _rank(rows: list[Row], hits: dict[str, int], tags: list[str], *, focused: bool) -> list[Row]:
    """Relevant rows (all rows when nothing narrows the choice): those a query found, in its order, then those
    sharing a tag, most shared then newest."""
    def shared(r: Row) -> int:
        return len(set(tags) & {t.casefold() for t in r.tags})

    chosen = [r for r in rows if r.key in hits or shared(r) > 0] if focused else rows
    chosen.sort(key=lambda r: r.key)
    chosen.sort(key=lambda r: r.date, reverse=True)
    chosen.sort(key=lambda r: (hits.get(r.key, len(hits)), -shared(r)))
    return chosen


def _session_item(ws: Workspace, r: Row, *, full: bool) -> SessionItem:
    tags = tuple(str(t) for t in r.fields.get("tags") or ())
    return SessionItem(r.relpath, r.title, r.date, tags, r.summary, _body(ws, r.relpath) if full else "")


def _body(ws: Workspace, relpath: str) -> str:
    """The session's sections as Markdown (the frontmatter is summed up in the pack's own lines)."""
    try:
        doc = parse_session(ws.read_text(relpath))
    except (KbsyncError, ValueError):
        return ""
    return "\n".join(f"## {h}\n{c.strip()}\n" for h, c in doc.sections if c.strip())


def _facts(ws: Workspace, terms: tuple[str, ...], tags: list[str]) -> list[str]:
    """Fact lines of memory/facts.md, then the entity files that a tag or query word names."""
    lines = [ln for ln in _read(ws, protocol.FACTS_MD).splitlines() if ln.strip() and not ln.startswith("# ")]
    words = [w.casefold() for w in [*terms, *tags] if w]
    folder = ws.path(protocol.ENTITIES_DIR)
    for path in sorted(folder.glob("*.md")) if folder.is_dir() else []:
        text = _read(ws, f"{protocol.ENTITIES_DIR}/{path.name}")
        if words and any(w in path.stem.casefold() or w in text.casefold() for w in words):
            lines.append(f"- {path.stem}: " + "; ".join(_entity_lines(text)))
    return lines


def _entity_lines(text: str) -> list[str]:
    return [ln.strip().lstrip("-* ").strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]


def _read(ws: Workspace, relpath: str) -> str:
    if not Path(ws.path(relpath)).is_file():
        return ""
    try:
        return ws.read_text(relpath)
    except KbsyncError as exc:
        raise KbsyncError(f"cannot read it for the context ({exc.message})", path=relpath) from exc
