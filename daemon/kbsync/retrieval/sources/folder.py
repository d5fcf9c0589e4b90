"""The `folder` source: another folder of Markdown (`path`), indexed into the search database beside the
workspace's own records (kbsync.retrieval.index.sync_folder) and searched as they are."""

from __future__ import annotations

from pathlib import Path

from kbsync.errors import ConfigError
from kbsync.retrieval import db, index, ranking
from kbsync.retrieval.fusion import Hit
from kbsync.retrieval.sources.base import Kind, SourceSpec, Table, row_hit
from kbsync.retrieval.text import Query
from kbsync.store.workspace import Workspace


def configured(t: Table, name: str, here: str, where: str | None) -> SourceSpec | None:
    return SourceSpec(name, "folder", path=str(Path(t["path"]).expanduser())) if isinstance(t.get("path"), str) else None


def hits(ws: Workspace, spec: SourceSpec, query: Query, limit: int) -> list[Hit]:
    root = Path(spec.path)
    if not root.is_dir():
        raise ConfigError(f"search source {spec.name}: folder {spec.path} does not exist")
    conn = db.connect(db.db_path(ws.state_dir))
    try:
        index.sync_folder(conn, spec.name, root)
        rows = ranking.search(conn, query, index.folder_kind(spec.name), limit,
                              bodies=index.folder_bodies(root))
    finally:
        conn.close()
    return [row_hit(spec.name, i, r, str(root / r.relpath.split(":", 1)[1])) for i, r in enumerate(rows, start=1)]


KIND = Kind(configured, hits, usage="folder (with path)", uses_index=True)
