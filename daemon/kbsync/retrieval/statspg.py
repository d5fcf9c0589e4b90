"""The optional team target of statistics: a one-way upsert of session frontmatter into PostgreSQL.

`[stats] dsn = "postgresql://user@host:5432/db"` turns it on; the password comes
from the PGPASSWORD environment variable (or ~/.pgpass), never from the config
file. Rows are keyed by session id and upserted; nothing is ever read back
into the workspace. Sessions deleted from the workspace are not deleted here.
"""

from __future__ import annotations

from typing import Any, Iterable

from kbsync.errors import ConfigError, RemoteError
from kbsync.retrieval.db import Row

TABLE = "kbsync_sessions"
_CREATE = f"""
CREATE TABLE IF NOT EXISTS {TABLE} (
  id text PRIMARY KEY, path text NOT NULL, ts timestamptz NOT NULL, role text, model text,
  status text NOT NULL, tags text[] NOT NULL, turns integer, tokens_in integer, tokens_out integer,
  summary text NOT NULL, copied_at timestamptz NOT NULL DEFAULT now())
"""
_UPSERT = f"""
INSERT INTO {TABLE} (id, path, ts, role, model, status, tags, turns, tokens_in, tokens_out, summary)
VALUES (%(id)s, %(path)s, %(ts)s, %(role)s, %(model)s, %(status)s, %(tags)s, %(turns)s, %(tokens_in)s,
        %(tokens_out)s, %(summary)s)
ON CONFLICT (id) DO UPDATE SET path = EXCLUDED.path, ts = EXCLUDED.ts, role = EXCLUDED.role,
  model = EXCLUDED.model, status = EXCLUDED.status, tags = EXCLUDED.tags, turns = EXCLUDED.turns,
  tokens_in = EXCLUDED.tokens_in, tokens_out = EXCLUDED.tokens_out, summary = EXCLUDED.summary,
  copied_at = now()
"""


def pg_row(row: Row) -> dict[str, Any]:
    """The parameters of one clean session's upsert (pure)."""
    f = row.fields

    def num(name: str) -> int | None:
        v = f.get(name)
        return v if isinstance(v, int) and not isinstance(v, bool) else None

    return {"id": str(f["id"]), "path": row.relpath, "ts": row.date, "role": f.get("role"), "model": f.get("model"),
            "status": str(f["status"]), "tags": [str(t) for t in f.get("tags") or []], "turns": num("turns"),
            "tokens_in": num("tokens_in"), "tokens_out": num("tokens_out"), "summary": str(f.get("summary") or "")}


def push(dsn: str, rows: Iterable[Row], *, timeout_s: float = 10.0) -> int:
    """Upsert the clean sessions of `rows` into PostgreSQL at `dsn`; how many were sent."""
    try:
        import psycopg
    except ImportError as exc:
        raise ConfigError("stats.dsn is set but psycopg is not installed; pip install 'kbsync[postgres]'") from exc
    params = [pg_row(r) for r in rows if not r.broken]
    try:
        with psycopg.connect(dsn, connect_timeout=max(1, int(timeout_s))) as conn:
            with conn.cursor() as cur:
                cur.execute(_CREATE)
                cur.executemany(_UPSERT, params)
    except psycopg.Error as exc:
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise RemoteError(f"PostgreSQL at stats.dsn: {detail}; nothing in the workspace changed, run again") from None
    return len(params)
