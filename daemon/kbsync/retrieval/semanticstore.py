"""The semantic index on disk: `.kbsync/semantic.sqlite` (SQLite, the vectors as packed float32 blobs).

Tables: `files` (what was planned, at which mtime and size), `records` (each record's file, kind, title,
date and passage count), `units` (the texts chosen to embed, by record and ordinal, known by digest),
`pending` (the texts of units not embedded yet) and `vectors` (digest -> vector). Every write is a short
transaction, so a build killed at any moment leaves a consistent index that the next build goes on from;
readers (searches) read it meanwhile (WAL). It is derived from the files and can be deleted.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Iterator

from kbsync.errors import KbsyncError
from kbsync.retrieval.semanticunits import Unit

if TYPE_CHECKING:
    import sqlite3 as sqlite3
else:
    import sqlean as sqlite3  # the same SQLite library as the search database (see kbsync.retrieval.db)

Connection = sqlite3.Connection
DB_NAME = "semantic.sqlite"
SCHEMA_VERSION = 2  # 2: units know their script (cjk)
_TABLES = """
CREATE TABLE files (relpath TEXT PRIMARY KEY, mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE records (key TEXT PRIMARY KEY, relpath TEXT NOT NULL, kind TEXT NOT NULL, title TEXT NOT NULL,
  summary TEXT NOT NULL, date TEXT NOT NULL, passages INTEGER NOT NULL) WITHOUT ROWID;
CREATE INDEX records_relpath ON records(relpath);
CREATE TABLE units (key TEXT NOT NULL, ordinal INTEGER NOT NULL, digest TEXT NOT NULL, cjk INTEGER NOT NULL,
  PRIMARY KEY (key, ordinal)) WITHOUT ROWID;
CREATE INDEX units_digest ON units(digest);
CREATE TABLE pending (digest TEXT PRIMARY KEY, text TEXT NOT NULL, head INTEGER NOT NULL, date TEXT NOT NULL)
  WITHOUT ROWID;
CREATE INDEX pending_order ON pending(head DESC, date DESC, digest);
CREATE TABLE vectors (digest TEXT PRIMARY KEY, vec BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
"""


@dataclass(frozen=True)
class Found:
    """A record near a query: its fields and the score of its best unit (what the worker answers with)."""

    key: str
    relpath: str
    kind: str
    title: str
    summary: str
    ordinal: int  # of its best unit: 0 the head, else its passage's ordinal + 1
    score: float
    partial: bool = False  # known by its head alone: its passages are outside the window (semanticunits.window)


@dataclass(frozen=True)
class RecordRow:
    key: str
    relpath: str
    kind: str
    title: str
    summary: str
    date: str
    passages: int


@dataclass(frozen=True)
class Progress:
    """How far the index is: `embedded` of `units` distinct texts; `built` once a build has ever finished."""

    units: int
    embedded: int
    built: bool

    @property
    def complete(self) -> bool:
        return self.built and self.embedded >= self.units


def db_path(state_dir: Path) -> Path:
    return state_dir / DB_NAME


WANTED = "semantic.wanted"  # left by a writer that wants a build to look again (kbsync.retrieval.semanticclient)


def ask(state_dir: Path) -> None:
    state_dir.mkdir(parents=True, exist_ok=True)
    (state_dir / WANTED).touch()


def take_wanted(state_dir: Path) -> bool:
    """Whether a build was asked for since the last look (and the mark taken away)."""
    try:
        (state_dir / WANTED).unlink()
    except FileNotFoundError:
        return False
    return True


def is_wanted(state_dir: Path) -> bool:
    return (state_dir / WANTED).exists()


def connect(path: Path) -> Connection:
    """The store at `path`, created (or started afresh when of another layout: it is derived)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        conn = _open(path)
        if conn.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
            _create(conn)
        return conn
    except sqlite3.DatabaseError as exc:
        raise KbsyncError(f"the semantic index cannot be read ({exc}); run `kbsync index rebuild --semantic`",
                          path=str(path)) from exc


def _create(conn: Connection) -> None:
    """Make the tables, dropping those of another layout, in one transaction: two processes that open a new
    store together (a builder and a search) must not both make them."""
    with transaction(conn):
        if conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
            return
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for name in names:
            conn.execute(f'DROP TABLE IF EXISTS "{name}"')
        for statement in filter(str.strip, _TABLES.split(";")):
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def _open(path: Path) -> Connection:
    conn = sqlite3.connect(path, timeout=10.0, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    return conn


@contextmanager
def transaction(conn: Connection) -> Iterator[None]:
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def files(conn: Connection) -> dict[str, tuple[int, int]]:
    return {r[0]: (r[1], r[2]) for r in conn.execute("SELECT relpath, mtime_ns, size FROM files")}


def drop_file(conn: Connection, relpath: str) -> None:
    """Forget a file: its state, its records and their units."""
    conn.execute("DELETE FROM units WHERE key IN (SELECT key FROM records WHERE relpath = ?)", (relpath,))
    conn.execute("DELETE FROM records WHERE relpath = ?", (relpath,))
    conn.execute("DELETE FROM files WHERE relpath = ?", (relpath,))


def put_file(conn: Connection, relpath: str, state: tuple[int, int], records: list[tuple[RecordRow, Unit]]) -> None:
    """A file's state and its records, each with its head unit (its passages come with the window)."""
    drop_file(conn, relpath)
    conn.execute("INSERT INTO files VALUES (?, ?, ?)", (relpath, *state))
    for row, head in records:
        conn.execute("INSERT OR REPLACE INTO records VALUES (?, ?, ?, ?, ?, ?, ?)",
                     (row.key, row.relpath, row.kind, row.title, row.summary, row.date, row.passages))
        put_units(conn, [head], row.date)


def put_units(conn: Connection, units: Iterable[Unit], date: str) -> None:
    """Units of a record; a text not embedded yet is queued in `pending`."""
    for u in units:
        d = u.digest
        conn.execute("INSERT OR REPLACE INTO units VALUES (?, ?, ?, ?)", (u.key, u.ordinal, d, int(u.cjk)))
        if conn.execute("SELECT 1 FROM vectors WHERE digest = ?", (d,)).fetchone() is None:
            conn.execute("INSERT OR IGNORE INTO pending VALUES (?, ?, ?, ?)", (d, u.text, int(u.ordinal == 0), date))


def drop_passages(conn: Connection, key: str) -> None:
    conn.execute("DELETE FROM units WHERE key = ? AND ordinal > 0", (key,))


def passage_sizes(conn: Connection) -> list[tuple[str, str, int]]:
    """(key, date, passage count) of every record."""
    return [(r[0], r[1], r[2]) for r in conn.execute("SELECT key, date, passages FROM records")]


def with_passages(conn: Connection) -> set[str]:
    """The records whose passages are among the units."""
    return {r[0] for r in conn.execute("SELECT DISTINCT key FROM units WHERE ordinal > 0")}


def record_files(conn: Connection, keys: Iterable[str]) -> dict[str, tuple[str, str]]:
    """(relpath, date) of each of these records."""
    out = {}
    for key in keys:
        row = conn.execute("SELECT relpath, date FROM records WHERE key = ?", (key,)).fetchone()
        if row:
            out[key] = (row[0], row[1])
    return out


def collect_garbage(conn: Connection) -> None:
    """Drop the vectors and pending texts no unit refers to any more."""
    conn.execute("DELETE FROM vectors WHERE digest NOT IN (SELECT digest FROM units)")
    conn.execute("DELETE FROM pending WHERE digest NOT IN (SELECT digest FROM units)")


def next_pending(conn: Connection, n: int) -> list[tuple[str, str]]:
    """Up to `n` texts to embed, (digest, text): heads before passages, the newest first."""
    return [(r[0], r[1]) for r in
            conn.execute("SELECT digest, text FROM pending ORDER BY head DESC, date DESC, digest LIMIT ?", (n,))]


def put_vectors(conn: Connection, got: list[tuple[str, bytes]]) -> None:
    with transaction(conn):
        for d, vec in got:
            conn.execute("INSERT OR REPLACE INTO vectors VALUES (?, ?)", (d, vec))
            conn.execute("DELETE FROM pending WHERE digest = ?", (d,))


def scheme(conn: Connection) -> str | None:
    """The unit scheme (kbsync.retrieval.semanticunits.SCHEME) the records were planned with; None: not known."""
    row = conn.execute("SELECT value FROM meta WHERE name = 'scheme'").fetchone()
    return str(row[0]) if row else None


def replan_all(conn: Connection, new_scheme: str) -> None:
    """Make every known file look changed (so that the next plan reads it again) and note the scheme it will be
    planned with. The vectors stay: a text that is still a unit is not embedded again."""
    conn.execute("UPDATE files SET mtime_ns = -1")
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('scheme', ?)", (new_scheme,))


def set_built(conn: Connection, built: bool) -> None:
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('built', ?)", ("1" if built else "0",))


def progress(conn: Connection) -> Progress:
    units = conn.execute("SELECT count(DISTINCT digest) FROM units").fetchone()[0]
    pending = conn.execute("SELECT count(*) FROM pending").fetchone()[0]
    built = conn.execute("SELECT value FROM meta WHERE name = 'built'").fetchone()
    return Progress(units, max(0, units - pending), bool(built and built[0] == "1"))


EmbeddedUnit = tuple[str, str, str, str, str, int, bool, int, bytes]


def embedded_units(conn: Connection) -> list[EmbeddedUnit]:
    """(key, relpath, kind, title, summary, ordinal, cjk, the record's passage count, vector) of every embedded
    unit, by key and ordinal."""
    return [(r[0], r[1], r[2], r[3], r[4], r[5], bool(r[6]), r[7], r[8]) for r in conn.execute(
        "SELECT u.key, r.relpath, r.kind, r.title, r.summary, u.ordinal, u.cjk, r.passages, v.vec FROM units u "
        "JOIN vectors v ON v.digest = u.digest "
        "JOIN records r ON r.key = u.key ORDER BY u.key, u.ordinal")]


def generation(conn: Connection) -> int:
    """Changes whenever another connection committed a change (SQLite's data_version)."""
    return int(conn.execute("PRAGMA data_version").fetchone()[0])
