"""`kbsync index rebuild`: index.md regenerated from the session files, atomically."""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass

from kbsync.core import frontmatter, indexmd, protocol
from kbsync.progress import Progress
from kbsync.store import fsio
from kbsync.store.workspace import Workspace


def utc_key(ts: str) -> str:
    """A sortable UTC form of an ISO 8601 timestamp (unparseable ones sort first)."""
    try:
        t = dt.datetime.fromisoformat(ts.replace("Z", "+00:00").replace(" ", "T"))
    except ValueError:
        return ""
    if t.tzinfo is None:
        return t.isoformat()
    return t.astimezone(dt.timezone.utc).replace(tzinfo=None).isoformat()


def row_of(relpath: str, text: str) -> tuple[str, indexmd.Row]:
    sp = frontmatter.split(text.replace("\r\n", "\n"))
    data = (frontmatter.parse(sp.lines).mapping if sp.state == "ok" else None) or {}
    sid = protocol.id_from_relpath(relpath) or ""
    ts = str(data.get("ts") or "")
    parts = protocol.parse_ts(ts)
    date = parts.date if parts else f"{sid[:4]}-{sid[4:6]}-{sid[6:8]}"
    raw_tags = data.get("tags")
    tags: list[str] = [str(t) for t in raw_tags] if isinstance(raw_tags, list) else []
    summary = str(data.get("summary") or "") if isinstance(data.get("summary"), str) else ""
    m = protocol.SESSION_NAME_RE.match(os.path.basename(relpath))
    title = str(data.get("title") or "") or ((m.group(4) or "") if m else "")
    return utc_key(ts) or date, indexmd.Row(date, title, ",".join(tags), summary, relpath)


@dataclass(frozen=True)
class Rebuilt:
    rows: int
    dropped: list[str]  # paths the previous index.md had rows for that name no session any more


def rebuild_index(ws: Workspace) -> Rebuilt:
    """Rewrite index.md (under its lock, backed up) from the session files; rows for sessions that no longer
    exist are dropped (and named)."""
    rels = [r for r in ws.iter_files(protocol.SESSIONS_DIR) if protocol.classify(r) == "session"
            and not protocol.is_conflict_copy(r)] if ws.path(protocol.SESSIONS_DIR).is_dir() else []
    keyed = []
    with Progress("index rebuild", len(rels), "sessions") as shown:
        for rel in rels:
            keyed.append(row_of(rel, ws.read_text(rel)))
            shown.advance()
    keyed.sort(key=lambda kr: (kr[0], kr[1].path))
    path = ws.path(protocol.INDEX_MD)
    cfg = ws.config.daemon
    with fsio.locked(path, ttl_s=cfg.lock_ttl_s, wait_s=cfg.lock_wait_s):
        old = path.read_bytes() if path.exists() else None
        if old is not None:
            fsio.backup(ws.backup_dir, protocol.INDEX_MD, old)
        fsio.atomic_write(path, indexmd.render_index(r for _, r in keyed).encode("utf-8"))
    before = indexmd.latest_by_path(indexmd.parse_rows(old.decode("utf-8", "replace"))) if old else {}
    return Rebuilt(len(keyed), sorted(set(before) - set(rels)))
