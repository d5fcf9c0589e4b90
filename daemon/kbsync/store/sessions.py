"""The session write path: `kbsync session save` as a function."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from kbsync.core import indexmd, limits, protocol
from kbsync.core.findings import has_errors
from kbsync.core.repair import repair_text
from kbsync.core.session import SessionDoc, ordered_sections, parse_session, render_session
from kbsync.core.sessioninput import SessionInput, now_iso, parse_input
from kbsync.core.validate import validate_text
from kbsync.errors import ConflictError, InputError, NotFoundError, ProtocolError
from kbsync.store import fsio, pathgate, sessionnames
from kbsync.store.conflicts import save_conflict_copy
from kbsync.store.workspace import Workspace, decode

if TYPE_CHECKING:
    from kbsync.results import SessionRecord


@dataclass(frozen=True)
class SaveResult:
    relpath: str
    record: SessionRecord  # the frontmatter's fields, title and path (what `session save --json` prints)
    created: bool
    kept: list[str] = field(default_factory=list)  # what a save again kept although the caller gave another


def find_session(ws: Workspace, short: str) -> str | None:
    """The session file whose name carries `<h7>` (conflict copies aside), if there is one."""
    root = ws.path(protocol.SESSIONS_DIR)
    if not root.is_dir():
        return None
    found = [f"{protocol.SESSIONS_DIR}/{rel}" for rel in sessionnames.carrying(root, short)]
    if len(found) > 1:
        raise InputError(f"several files carry the id hash {short}: {', '.join(found)}; keep one", path=found[0])
    return found[0] if found else None


def find_given(ws: Workspace, given: str) -> str:
    """The file of a session named by its id (`YYYYMMDD-HHMM-<h7>`) or by the caller's raw session id, as
    `session save` takes it (the file whose name carries the raw id's `<h7>`)."""
    limits.check(given, "the session id", limits.REF)
    if protocol.ID_RE.match(given):
        return find_by_id(ws, given)
    found = find_session(ws, protocol.h7(given))
    if found is None:
        raise InputError(f"no session {given!r} in the workspace (neither a session id, YYYYMMDD-HHMM-<7 hex>, "
                         f"nor a raw id saved before, whose files carry {protocol.h7(given)})")
    return found


def find_by_id(ws: Workspace, sid: str) -> str:
    """The file of session `sid`, matched by its id prefix (a person may rename the title part)."""
    if not protocol.ID_RE.match(sid):
        raise InputError(f"{sid!r} is not a session id (YYYYMMDD-HHMM-<7 hex>)")
    prefix = protocol.id_prefix(sid)
    folder, stem = prefix.rsplit("/", 1)
    matches = sorted(
        f"{folder}/{p.name}" for p in ws.path(folder).glob(f"{stem}*.md") if not protocol.is_conflict_copy(p.name)
    ) if ws.path(folder).is_dir() else []
    if not matches:
        raise NotFoundError(f"no session {sid} in the workspace; check the id with `kbsync validate`")
    return matches[0]


def canonical_sections(given: dict[str, str], synonyms: dict[str, str]) -> dict[str, str]:
    """The given sections under their canonical headings (`TODO`, `下一步` -> 待办), as `session section` and
    repair read them; InputError when two given names mean one section."""
    out: dict[str, str] = {}
    named: dict[str, str] = {}
    for name, text in given.items():
        canon = protocol.canonical_heading(name, synonyms)
        if canon in out:
            raise InputError(f"sections {named[canon]!r} and {name!r} both mean '## {canon}'; give one of them")
        out[canon], named[canon] = text, name
    return out


def _new_doc(inp: SessionInput, offset: str, synonyms: dict[str, str]) -> SessionDoc:
    ts = inp.fields.get("ts") or now_iso(offset)
    fields: dict[str, Any] = {"id": protocol.session_id(ts, inp.raw_id), "ts": ts, "role": "assistant",
                              "parent": None, "tags": [], "status": "open", "summary": ""}
    fields.update({k: v for k, v in inp.fields.items() if k != "ts"})
    if inp.title:
        fields["title"] = inp.title
    return SessionDoc(fields, [], "", ordered_sections(canonical_sections(inp.sections, synonyms), []))


def _updated_doc(old: SessionDoc, inp: SessionInput, synonyms: dict[str, str]) -> SessionDoc:
    fields = dict(old.fields)
    fields.update({k: v for k, v in inp.fields.items() if k not in ("id", "ts")})
    if inp.title:
        fields["title"] = inp.title
    sections = ordered_sections(canonical_sections(inp.sections, synonyms), old.sections)
    return SessionDoc(fields, old.extra, old.preamble, sections)


def kept_notes(relpath: str, old: SessionDoc, inp: SessionInput) -> list[str]:
    """What a save again keeps although the payload says otherwise: the file's path, the creation time."""
    notes = []
    if inp.title and protocol.title_slug(inp.title) != _title_of(relpath):
        notes.append(f"kept the path {relpath}: a session keeps its file name; the new title is in its "
                     "`title` field and index.md (rename the file's title part by hand if you like)")
    ts = inp.fields.get("ts")
    if ts and ts != old.fields.get("ts"):
        notes.append(f"kept ts {old.fields.get('ts')}: ts is the creation time and is never changed; "
                     f"the given {ts} was not used")
    return notes


def write_session(ws: Workspace, relpath: str, text: str, expected: fsio.Fingerprint | None) -> None:
    """Write a rendered session under its lock (held by the caller) if the file is still as read.

    `expected` None means the file must not exist yet. If it changed, the text is
    saved as a conflict copy instead and ConflictError is raised.
    """
    path = ws.path(relpath)
    data = text.encode("utf-8")
    if "\x00" in text:
        raise InputError("the session text contains a NUL character; send text only; nothing written", path=relpath)
    if len(data) > protocol.MAX_FILE_BYTES:
        limit = protocol.MAX_FILE_BYTES // (1024 * 1024)
        raise InputError(f"the session would be {len(data) // 1024} KB, over the {limit} MB limit; save less text",
                         path=relpath)
    if has_errors(validate_text(relpath, text, ws.config)):
        raise ProtocolError("the rendered session does not validate; nothing written", path=relpath)
    if fsio.fingerprint(path) != expected:
        raise _conflict(ws, relpath, data)
    if expected is None:
        fsio.atomic_write(path, data)
        return
    try:
        fsio.guarded_replace(
            path, data, expected, hold_lock=False,
            backup_to=lambda old: fsio.backup(ws.backup_dir, relpath, old),
            check=lambda b: not has_errors(validate_text(relpath, b.decode("utf-8"), ws.config)),
        )
    except ConflictError as exc:  # changed at the last instant, or did not read back: this version is kept too
        raise _conflict(ws, relpath, data) from exc


def _conflict(ws: Workspace, relpath: str, data: bytes) -> ConflictError:
    """Save `data` as a conflict copy beside `relpath`; the error to raise says where."""
    copy = save_conflict_copy(ws, relpath, data, other_desc="this write; the file changed after it was read")
    return ConflictError(f"changed since it was read; your version is saved as {copy}", path=relpath, copy=copy)


def _parse_current(ws: Workspace, relpath: str, text: str) -> SessionDoc:
    """The session on disk; a defect the lossless repair fixes (a person's typo) does not block a save."""
    try:
        return parse_session(text)
    except ProtocolError as exc:
        try:
            return parse_session(repair_text(relpath, text, ws.config).text)
        except ProtocolError:
            raise ProtocolError(f"{exc.message}; fix the file by hand, then save again", path=relpath, line=exc.line) from exc


def _title_of(relpath: str) -> str:
    m = protocol.SESSION_NAME_RE.match(os.path.basename(relpath))
    return (m.group(4) or "") if m else ""


def _target(ws: Workspace, relpath: str) -> Path:
    """The session file's path; InputError if it or a folder on its way is a symlink (kbsync.store.pathgate)."""
    return pathgate.checked(ws.root, relpath)


def save_session(ws: Workspace, payload: dict[str, Any], where: str = "<stdin>") -> SaveResult:
    """Render, write atomically under the file's lock, self-check, append an index row."""
    inp = parse_input(payload, ws.config.protocol.default_offset, where)
    cfg = ws.config.daemon
    # One writer per raw id while the path is chosen: two first saves with different titles
    # (or straddling a minute) would otherwise create two files for one session.
    with fsio.locked(ws.state_dir / "locks" / protocol.h7(inp.raw_id), ttl_s=cfg.lock_ttl_s, wait_s=cfg.lock_wait_s):
        relpath, doc, expected, kept = _save_locked(ws, inp)
    title = str(doc.fields.get("title") or _title_of(relpath))
    record = cast("SessionRecord", {**doc.fields, "title": title, "path": relpath})
    append_index_row(ws, indexmd.row_for(record, title))
    return SaveResult(relpath, record, expected is None, kept)


def _save_locked(ws: Workspace, inp: SessionInput) -> tuple[str, SessionDoc, fsio.Fingerprint | None, list[str]]:
    existing = find_session(ws, protocol.h7(inp.raw_id))
    offset, synonyms = ws.config.protocol.default_offset, ws.synonyms()
    fresh: SessionDoc | None = None
    if existing:
        relpath = existing
    else:
        fresh = _new_doc(inp, offset, synonyms)  # made once: `ts` defaults to now
        relpath = protocol.session_relpath(fresh.fields["id"], inp.title)
    path = _target(ws, relpath)
    cfg = ws.config.daemon
    kept: list[str] = []
    with fsio.locked(path, ttl_s=cfg.lock_ttl_s, wait_s=cfg.lock_wait_s):
        if path.exists() or path.is_symlink():
            data, fp = fsio.read_with_fingerprint(ws.checked_path(relpath))
            old = _parse_current(ws, relpath, decode(data, relpath))
            doc, kept = _updated_doc(old, inp, synonyms), kept_notes(relpath, old, inp)
            expected: fsio.Fingerprint | None = fp
        else:
            doc, expected = fresh or _new_doc(inp, offset, synonyms), None
        write_session(ws, relpath, render_session(doc), expected)
    return relpath, doc, expected, kept


def append_index_row(ws: Workspace, row: indexmd.Row) -> None:
    """One O_APPEND row; an index.md that does not exist yet gets its header first."""
    path = ws.path(protocol.INDEX_MD)
    if not path.exists():
        fsio.atomic_write(path, protocol.INDEX_HEADER.encode("utf-8"))
    fsio.append_line(path, indexmd.render_row(row))
