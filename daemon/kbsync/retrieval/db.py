"""The derived search database: SQLite with FTS5 under .kbsync/; its schema, connections, transactions, writes
and plain reads (this module and kbsync.retrieval.ranking, the keyword search over it, are the only ones that
speak SQL to it).

Tables: `files` (what was indexed, at which mtime and size), `docs` (one row per
record: fields for filters, display and statistics) and `fts` (FTS5 over the
record's head: title, summary, tags; and its body; both rewritten into CJK
bigram tokens by kbsync.retrieval.text). Each kind of record has a range of
ids of its own (`kinds`), so a search of one kind reads the full-text index
over that range alone. The full-text index stores no text and no positions
(contentless, detail=column): the text is in the files, and a match that only
the text can confirm (a CJK run of three or more characters, whose bigrams the
index also holds where they stand apart) is checked against the record's head
in `docs` and its body as read from its file now (`Bodies`). Everything here
is derived from the files and can be deleted; `rebuild` writes a new database
beside the old one and swaps it in, so readers never see a half-built index.
"""

from __future__ import annotations

import json
import operator
import os
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence, TypeVar

from kbsync.errors import KbsyncError
from kbsync.retrieval.passages import Passage
from kbsync.retrieval.records import KIND_SOURCES, Record
from kbsync.retrieval.text import Query, fts_expression, holds, index_tokens, long_runs

# Every connection to the search database is made by sqlean.py: the sqlite3 module's own code over a bundled
# SQLite 3.50 (contentless FTS5 tables can delete rows from 3.43 on; Python's SQLite may be older). One
# SQLite library per process on one file: two copies would not see each other's POSIX locks. Its API is
# the sqlite3 module's, so it is typed as that module.
if TYPE_CHECKING:
    import sqlite3 as sqlite3
else:
    import sqlean as sqlite3

Connection = sqlite3.Connection
Error = sqlite3.Error

DB_NAME = "search.sqlite"
SCHEMA_VERSION = 9  # 2: a session's title is its `title` field where it has one; 3: docs.flags; 4: contentless;
# 5: totals; 6: the keys and triggers apart from the tables (a rebuild makes them last); 7: a range of ids per kind;
# 8: a session's body keeps its `## ` headings (its passages are its sections); 9: docs_broken
_TABLES = """
CREATE TABLE kinds (kind TEXT PRIMARY KEY, base INTEGER NOT NULL UNIQUE) WITHOUT ROWID;
CREATE TABLE files (relpath TEXT PRIMARY KEY, mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE docs (
  id INTEGER PRIMARY KEY, key TEXT NOT NULL, relpath TEXT NOT NULL, kind TEXT NOT NULL,
  title TEXT NOT NULL, summary TEXT NOT NULL, tags TEXT NOT NULL, status TEXT NOT NULL,
  type TEXT NOT NULL, source TEXT NOT NULL, date TEXT NOT NULL, broken TEXT NOT NULL, fields TEXT NOT NULL,
  flags TEXT NOT NULL);
CREATE TABLE lengths (id INTEGER PRIMARY KEY, n INTEGER NOT NULL);
CREATE TABLE totals (one INTEGER PRIMARY KEY CHECK (one = 1), records INTEGER NOT NULL, length INTEGER NOT NULL);
CREATE VIRTUAL TABLE fts USING fts5(head, body, content = '', contentless_delete = 1, detail = column,
  tokenize = 'unicode61 remove_diacritics 2');
"""
# What the tables' rows are kept in step with and looked up by: made after a rebuild's rows are in. A write
# to a table with a second index or a trigger takes a statement journal, and opening one makes FTS5 write
# out the full-text terms it gathered (a segment per batch of files, merged again and again); an index
# built over the rows at the end is one sort instead of a b-tree insert per row.
_KEYS = (
    "INSERT INTO totals SELECT 1, count(*), coalesce(sum(n), 0) FROM lengths",
    "CREATE UNIQUE INDEX docs_key ON docs(key)",
    "CREATE INDEX docs_relpath ON docs(relpath)",
    "CREATE INDEX docs_kind_date ON docs(kind, date)",
    "CREATE INDEX docs_broken ON docs(kind) WHERE broken != ''",  # the few records whose frontmatter is unreadable
    "CREATE TRIGGER lengths_added AFTER INSERT ON lengths BEGIN\n"
    "  UPDATE totals SET records = records + 1, length = length + new.n; END",
    "CREATE TRIGGER lengths_dropped AFTER DELETE ON lengths BEGIN\n"
    "  UPDATE totals SET records = records - 1, length = length - old.n; END",
    f"PRAGMA user_version = {SCHEMA_VERSION}",
)


# The records of a kind have the ids base + 1 ... base + KIND_SPAN - 1, where base is a multiple of KIND_SPAN
# given to the kind when its first record is put in: FTS5 reads a match's word lists only over a rowid range,
# where a kind's own word in the index (one per record) made each search read and join all its records.
KIND_SPAN = 1 << 40
Span = tuple[int, int]  # ids lo < id < hi


@dataclass(frozen=True)
class Row:
    """A search hit or listed record, as stored."""

    key: str
    relpath: str
    kind: str
    title: str
    summary: str
    tags: tuple[str, ...]
    status: str
    type: str
    source: str
    date: str
    broken: str
    fields: dict[str, Any]
    flags: tuple[dict[str, Any], ...] = ()  # embedded-instruction flags (family, span, line, why, excerpt)
    score: float = 0.0  # a search hit's relevance (kbsync.retrieval.relevance); 0 for a listed record
    passages: tuple[tuple[float, Passage], ...] = ()  # a search hit's best passages with their scores, best first
    cover: float = 0.0  # a search hit's share of the query: the weight of the terms it holds over all of theirs

    @property
    def families(self) -> list[str]:
        return list(dict.fromkeys(str(f["family"]) for f in self.flags))


def db_path(state_dir: Path) -> Path:
    return state_dir / DB_NAME


def connect(path: Path) -> sqlite3.Connection:
    """A connection to the database at `path`; created, or recreated when its schema is outdated."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        return _connect(path)
    except sqlite3.DatabaseError as exc:
        raise KbsyncError(f"the search database cannot be read ({exc}); run `kbsync index rebuild --search`",
                          path=str(path)) from exc


def _connect(path: Path) -> sqlite3.Connection:
    conn = _open(path)
    if conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
        return conn
    if conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
        conn.close()  # an older layout: the index is derived, so start it afresh
        path.unlink()
        conn = _open(path)
    conn.executescript(_TABLES + "".join(f"{sql};\n" for sql in _KEYS))
    return conn


def needs_build(path: Path) -> bool:
    """Whether there is no search database at `path`: no file, an empty one, or a database of an older layout
    (its header's user version, the 4 bytes at offset 60, is not SCHEMA_VERSION). A file that is no database
    does not: `connect` says it cannot be read."""
    try:
        with open(path, "rb") as f:
            head = f.read(100)
    except FileNotFoundError:
        return True
    if not head:
        return True
    if len(head) < 100 or not head.startswith(b"SQLite format 3\x00"):
        return False
    return int.from_bytes(head[60:64], "big") != SCHEMA_VERSION


READER_CACHE_KB = 512  # a kept connection's page cache; each write by the daemon empties it anyway
KEPT_READERS = 4  # reading connections kept open between searches, and searches reading at once, of all threads
READ_WAIT_S = 10.0  # how long a search waits for its turn before it reads on a connection of its own
_FileKey = tuple[int, int]  # (device, inode): a rebuild swaps another file in
_kept: dict[str, list[tuple[_FileKey, sqlite3.Connection]]] = {}
_kept_lock = threading.Lock()
_turns = threading.BoundedSemaphore(KEPT_READERS)


@contextmanager
def reading(path: Path) -> Iterator[sqlite3.Connection]:
    """A connection for reading the database at `path`: one kept open between searches when one is free (its
    page cache and compiled statements stay warm), else a new one, kept afterwards while fewer than KEPT_READERS
    are (a server's request threads come and go: a connection each would hold memory for every one of them).
    At most KEPT_READERS searches read at once (two cores run no more), the others wait their turn, up to
    READ_WAIT_S: sixteen at once on connections of their own each paid for opening one and a cold page cache.
    One kept for a file since replaced is closed. Never used for writes."""
    turn = _turns.acquire(timeout=READ_WAIT_S)
    try:
        with _reading(path) as conn:
            yield conn
    finally:
        if turn:
            _turns.release()


@contextmanager
def _reading(path: Path) -> Iterator[sqlite3.Connection]:
    try:
        st = path.stat()
    except FileNotFoundError:
        conn = connect(path)  # made here, as connect() makes it; kept from the next search on
        try:
            yield conn
        finally:
            conn.close()
        return
    key = (st.st_dev, st.st_ino)
    conn = _take(str(path), key)
    try:
        yield conn
    finally:
        _give(str(path), key, conn)


def _take(path: str, key: _FileKey) -> sqlite3.Connection:
    with _kept_lock:
        free = _kept.setdefault(path, [])
        stale = [c for k, c in free if k != key]
        free[:] = [(k, c) for k, c in free if k == key]
        conn = free.pop()[1] if free else None
    for old in stale:
        old.close()
    if conn is None:
        conn = connect(Path(path))
        conn.execute(f"PRAGMA cache_size = -{READER_CACHE_KB}")
    return conn


def _give(path: str, key: _FileKey, conn: sqlite3.Connection) -> None:
    with _kept_lock:
        free = _kept.setdefault(path, [])
        if len(free) < KEPT_READERS and not conn.in_transaction:
            free.append((key, conn))
            return
    conn.close()


def _open(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, timeout=10.0, isolation_level=None, check_same_thread=False)


BULK_CACHE_KB = 32768  # a bulk load's page cache
BULK_HASH_BYTES = 16 << 20  # the full-text terms a bulk load gathers in memory before it writes a segment


def new_database(path: Path) -> sqlite3.Connection:
    """A fresh database at `path` (replacing what is there) holding the tables without their keys, tuned for a
    bulk load: no sync (the file is flushed once, by `swap_in`), the rollback journal in memory (a failed
    build deletes the file), a larger page cache and fewer, larger full-text segments. `finish` makes the
    keys once the rows are in; until then the file is no search database (`connect` starts it afresh)."""
    for suffix in ("", "-journal"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = _open(path)
    for pragma in ("synchronous = OFF", "journal_mode = MEMORY", f"cache_size = -{BULK_CACHE_KB}"):
        conn.execute(f"PRAGMA {pragma}")
    conn.executescript(_TABLES)
    conn.execute("INSERT INTO fts (fts, rank) VALUES ('hashsize', ?)", (BULK_HASH_BYTES,))
    return conn


def finish(conn: sqlite3.Connection) -> None:
    """Make the keys, totals and triggers of a database `new_database` made, over the rows put in (call inside
    the `transaction` that put them)."""
    for sql in _KEYS:
        conn.execute(sql)


def swap_in(tmp: Path, final: Path) -> None:
    """Make the (closed) database built at `tmp` the live one: flushed to disk, then renamed over it."""
    fd = os.open(tmp, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, final)


# ---- writing ------------------------------------------------------------------

@dataclass(frozen=True)
class FileState:
    mtime_ns: int
    size: int


def indexed_files(conn: sqlite3.Connection, prefix: str = "") -> dict[str, FileState]:
    rows = conn.execute("SELECT relpath, mtime_ns, size FROM files WHERE substr(relpath, 1, ?) = ?",
                        (len(prefix), prefix))
    return {r[0]: FileState(r[1], r[2]) for r in rows}


def indexed_statuses(conn: sqlite3.Connection, kind: str) -> dict[str, tuple[str, int, int, str]]:
    """relpath -> (relpath, its mtime_ns and size when indexed, its record's status), for the files of `kind`
    records whose frontmatter could be read. Made without a line of Python a row (12,000 sessions: a few
    milliseconds, which a background warm-up takes at once beside answers that read the index)."""
    rows = conn.execute("SELECT f.relpath, f.mtime_ns, f.size, d.status FROM docs d JOIN files f ON f.relpath = "
                        "d.relpath WHERE d.kind = ? AND d.broken = ''", (kind,)).fetchall()
    return dict(zip(map(operator.itemgetter(0), rows), rows))


def indexed_state(conn: sqlite3.Connection, relpath: str) -> FileState | None:
    """The mtime and size `relpath` had when it was indexed; None when it is not indexed."""
    row = conn.execute("SELECT mtime_ns, size FROM files WHERE relpath = ?", (relpath,)).fetchone()
    return FileState(row[0], row[1]) if row else None


def put_file(conn: sqlite3.Connection, relpath: str, state: FileState, records: Iterable[Record]) -> None:
    """Replace everything indexed for `relpath` with `records` (call inside `transaction`)."""
    drop_file(conn, relpath)
    put_rows(conn, [prepared(relpath, state, records)])


@dataclass(frozen=True)
class Prepared:
    """One file's rows, made ready for the database (the costly part of indexing, done anywhere)."""

    relpath: str
    state: FileState
    docs: list[tuple[object, ...]]  # docs' columns after id, one tuple per record
    texts: list[tuple[str, str, int]]  # the fts columns (head, body: index_tokens) and length of each
    broken: int  # records whose frontmatter cannot be read


def prepared(relpath: str, state: FileState, records: Iterable[Record]) -> Prepared:
    """The rows of `records`; of two with one key, the later (as the index keeps one record per key)."""
    unique = list({r.key: r for r in records}.values())
    docs: list[tuple[object, ...]] = [
        (r.key, r.relpath, r.kind, r.title, r.summary, _tags_cell(r.tags), r.status, r.type, r.source, r.date,
         r.broken, json.dumps(r.fields, ensure_ascii=False, default=str), _flags_cell(r.flags))
        for r in unique]
    texts = [_texts(r) for r in unique]
    return Prepared(relpath, state, docs, texts, sum(1 for r in unique if r.broken))


def _texts(r: Record) -> tuple[str, str, int]:
    """The full-text columns of a record (its head and body as `index_tokens` gives them) and its length, the
    characters of its head and body as `index_text` writes them."""
    head, head_n = index_tokens(" ".join([r.title, r.summary, *r.tags]))
    body, body_n = index_tokens(r.body)
    return head, body, head_n + body_n


def put_rows(conn: sqlite3.Connection, files: Sequence[Prepared]) -> None:
    """Insert prepared files that the database holds nothing of (call inside `transaction`): three statements
    for all of them. A record's id follows the largest in use in its kind's range, and its full-text row gets
    the same id."""
    conn.executemany("INSERT INTO files VALUES (?, ?, ?)", ((f.relpath, f.state.mtime_ns, f.state.size) for f in files))
    docs = [d for f in files for d in f.docs]
    texts = [t for f in files for t in f.texts]
    last: dict[str, int] = {}  # kind -> the largest id given in its range so far
    ids = []
    for d in docs:
        kind = str(d[2])
        if kind not in last:
            base = _kind_base(conn, kind)
            row = conn.execute("SELECT max(id) FROM docs WHERE id > ? AND id < ?", (base, base + KIND_SPAN)).fetchone()
            last[kind] = row[0] or base
        last[kind] += 1
        ids.append(last[kind])
    conn.executemany("INSERT INTO docs (id, key, relpath, kind, title, summary, tags, status, type, source, date,"
                     " broken, fields, flags) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     ((i, *d) for i, d in zip(ids, docs)))
    conn.executemany("INSERT INTO fts (rowid, head, body) VALUES (?, ?, ?)", ((i, *t[:2]) for i, t in zip(ids, texts)))
    conn.executemany("INSERT INTO lengths VALUES (?, ?)", ((i, t[2]) for i, t in zip(ids, texts)))


def _kind_base(conn: sqlite3.Connection, kind: str) -> int:
    """The base of `kind`'s ids, given to it now when it has none (the next multiple of KIND_SPAN)."""
    span = kind_span(conn, kind)
    if span is not None:
        return span[0]
    top = conn.execute("SELECT coalesce(max(base), 0) FROM kinds").fetchone()[0]
    conn.execute("INSERT INTO kinds VALUES (?, ?)", (kind, top + KIND_SPAN))
    return int(top) + KIND_SPAN


def kind_span(conn: sqlite3.Connection, kind: str) -> Span | None:
    """The range of `kind`'s ids (lo < id < hi); None when no record of it was ever put in."""
    row = conn.execute("SELECT base FROM kinds WHERE kind = ?", (kind,)).fetchone()
    return None if row is None else (int(row[0]), int(row[0]) + KIND_SPAN)


def drop_file(conn: sqlite3.Connection, relpath: str) -> None:
    """Forget `relpath` and its records (call inside `transaction`)."""
    conn.execute("DELETE FROM fts WHERE rowid IN (SELECT id FROM docs WHERE relpath = ?)", (relpath,))
    conn.execute("DELETE FROM lengths WHERE id IN (SELECT id FROM docs WHERE relpath = ?)", (relpath,))
    conn.execute("DELETE FROM docs WHERE relpath = ?", (relpath,))
    conn.execute("DELETE FROM files WHERE relpath = ?", (relpath,))


class transaction:
    """`with transaction(conn):` one write transaction, rolled back on an exception; `transaction(conn,
    write=False)`: one read transaction, whose statements read one state of the database."""

    def __init__(self, conn: sqlite3.Connection, *, write: bool = True) -> None:
        self.conn = conn
        self.begin = "BEGIN IMMEDIATE" if write else "BEGIN"

    def __enter__(self) -> sqlite3.Connection:
        self.conn.execute(self.begin)
        return self.conn

    def __exit__(self, exc_type: object, *_: object) -> None:
        self.conn.execute("ROLLBACK" if exc_type else "COMMIT")


CHUNK_FILES = 100  # files an update writes per transaction
T = TypeVar("T")
R = TypeVar("R")


def in_chunks(conn: sqlite3.Connection, items: Sequence[T], write: Callable[[T], R]) -> list[R]:
    """`write(item)` for each of `items`, CHUNK_FILES of them to a transaction. One long transaction would
    outgrow SQLite's page cache, take the exclusive lock before its commit and shut every search out until
    it ends ("database is locked" past the readers' timeout); in chunks, a search waits at most for one."""
    out: list[R] = []
    for at in range(0, len(items), CHUNK_FILES):
        with transaction(conn):
            out += [write(item) for item in items[at:at + CHUNK_FILES]]
    return out


def _flags_cell(flags: Sequence[dict[str, Any]]) -> str:
    return json.dumps(flags, ensure_ascii=False) if flags else "[]"  # most records have none


def _tags_cell(tags: Iterable[str]) -> str:
    """Tags stored as `|a|b|`, case-folded, so a tag filter is one LIKE."""
    return "|" + "".join(t.casefold().replace("|", "/") + "|" for t in tags)


# ---- reading ------------------------------------------------------------------

COLUMNS = ("d.key, d.relpath, d.kind, d.title, d.summary, d.tags, d.status, d.type, d.source, d.date, d.broken, "
           "d.fields, d.flags")


Bodies = Callable[[list[Row]], dict[str, str]]  # record key -> the body its file holds now (none: gone)
Check = Callable[[list[Row]], set[str]]  # the keys of those rows whose text bears their match out


def _record_check(runs: tuple[str, ...], bodies: Bodies, taken: set[str] | frozenset[str] = frozenset()) -> Check:
    """Keeps the rows not in `taken` whose head or body holds each one of `runs` (a body is read only for a row
    whose head does not hold them all)."""
    def check(rows: list[Row]) -> set[str]:
        rows = [r for r in rows if r.key not in taken]
        read = bodies([r for r in rows if not holds(head_of(r), runs)])
        return {r.key for r in rows if holds((*head_of(r), read.get(r.key, "")), runs)}
    return check


def head_of(row: Row) -> tuple[str, ...]:
    """A record's head: its title, summary and tags."""
    return (row.title, row.summary, *row.tags)


FIRST_BATCH = 16  # records a listing reads first; each further batch is four times the one before,
MAX_BATCH = 4096  # up to this many


def listing(conn: sqlite3.Connection, query: Query, kind: str, limit: int,
            after: tuple[str, str] | None = None, *, bodies: Bodies) -> list[Row]:
    """Records of `kind` that pass the query's filters and hold all its words, newest first (then by key),
    from just past `after` (the date and key of the last record of the previous page). A CJK run of three
    or more characters is checked in the text, page by page, until `limit` records passed."""
    runs = long_runs(query.terms)
    if not runs:
        return _page(conn, query, kind, limit, after)
    check = _record_check(runs, bodies)
    out: list[Row] = []
    fetch = max(FIRST_BATCH, limit)
    with transaction(conn, write=False):
        while len(out) < limit:
            page = _page(conn, query, kind, fetch, after)
            passed = check(page)
            out += [r for r in page if r.key in passed]
            if len(page) < fetch:
                break
            after, fetch = (page[-1].date, page[-1].key), min(fetch * 4, MAX_BATCH)
    return out[:limit]


def filtered_page(conn: sqlite3.Connection, query: Query, kind: str, limit: int, offset: int) -> list[Row]:
    """Records of `kind` passing the filters of `query` (a query of filters alone), newest first (then by key),
    `limit` of them from the `offset`-th on: a numbered page of a listing, beside `count` for the total."""
    if query.words:
        raise ValueError("a numbered page lists by filters alone; search for words")
    return _page(conn, query, kind, limit, None, offset)


def _page(conn: sqlite3.Connection, query: Query, kind: str, limit: int, after: tuple[str, str] | None,
          offset: int = 0) -> list[Row]:
    where, params = filters(query)
    if after is not None:
        where += " AND (d.date < ? OR (d.date = ? AND d.key > ?))"
        params += [after[0], after[0], after[1]]
    match = fts_expression(query.terms)
    order = " ORDER BY d.date DESC, d.key LIMIT ? OFFSET ?"
    if not match:
        sql = f"SELECT {COLUMNS} FROM docs d WHERE d.kind = ?{where}{order}"
        return [to_row(r) for r in conn.execute(sql, [kind, *params, limit, offset])]
    span = kind_span(conn, kind)
    if span is None:
        return []
    sql = (f"SELECT {COLUMNS} FROM fts JOIN docs d ON d.id = fts.rowid WHERE fts MATCH ? AND fts.rowid > ?"
           f" AND fts.rowid < ?{where}{order}")
    return [to_row(r) for r in conn.execute(sql, [match, *span, *params, limit, offset])]


def date_counts(conn: sqlite3.Connection, query: Query, kind: str, width: int) -> list[tuple[str, int]]:
    """(the first `width` characters of the date: 7 a month, 10 a day; records) of dated records of `kind`
    passing the query's filters, newest first."""
    where, params = filters(query)
    sql = (f"SELECT substr(d.date, 1, ?) AS k, count(*) FROM docs d WHERE d.kind = ? AND d.date != ''{where}"
           " GROUP BY k ORDER BY k DESC")
    return [(k, n) for k, n in conn.execute(sql, [width, kind, *params])]


def tag_cells(conn: sqlite3.Connection, query: Query, kind: str) -> Iterator[tuple[str, ...]]:
    """The tags of each record of `kind` passing the query's filters (case-folded, as stored)."""
    where, params = filters(query)
    for (cell,) in conn.execute(f"SELECT d.tags FROM docs d WHERE d.kind = ?{where}", [kind, *params]):
        yield tuple(t for t in str(cell).split("|") if t)


def children(conn: sqlite3.Connection, parent: str) -> list[Row]:
    """Session records whose `parent` field is `parent`, oldest first, then by key."""
    sql = (f"SELECT {COLUMNS} FROM docs d WHERE d.kind = 'session' AND json_extract(d.fields, '$.parent') = ?"
           " ORDER BY d.date, d.key")
    return [to_row(r) for r in conn.execute(sql, (parent,))]


def filters(q: Query) -> tuple[str, list[object]]:
    clauses: list[str] = []
    params: list[object] = []
    for tag in q.tags:
        clauses.append("d.tags LIKE ? ESCAPE '\\'")
        params.append("%|" + _like(tag) + "|%")
    for col, value in (("status", q.status), ("type", q.type)):
        if value:
            clauses.append(f"lower(d.{col}) = ?")
            params.append(value.casefold())
    if q.source:
        clauses.append("(lower(d.source) LIKE ? ESCAPE '\\' OR d.kind = ?)")
        params.extend(["%" + _like(q.source) + "%", _kind_of_source(q.source)])
    if q.since:
        clauses.append("d.date != '' AND d.date >= ?")
        params.append(q.since)
    if q.until:
        clauses.append("d.date != '' AND substr(d.date, 1, ?) <= ?")
        params.extend([len(q.until), q.until])
    return "".join(" AND " + c for c in clauses), params


def _kind_of_source(name: str) -> str:
    return next((k for k, v in KIND_SOURCES.items() if v == name), name)


def _like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def to_row(r: tuple[Any, ...]) -> Row:
    tags = tuple(t for t in str(r[5]).split("|") if t)
    return Row(r[0], r[1], r[2], r[3], r[4], tags, r[6], r[7], r[8], r[9], r[10], json.loads(r[11]),
               tuple(json.loads(r[12])))


def records(conn: sqlite3.Connection, kind: str) -> Iterator[Row]:
    """Every stored record of `kind`, newest first."""
    for r in conn.execute(f"SELECT {COLUMNS} FROM docs d WHERE d.kind = ? ORDER BY d.date DESC, d.key", (kind,)):
        yield to_row(r)


def rows_of(conn: sqlite3.Connection, keys: Sequence[str]) -> list[Row]:
    """The stored records of these keys (those there are), in no particular order."""
    out: list[Row] = []
    for at in range(0, len(keys), 500):
        chunk = list(keys[at:at + 500])
        out += [to_row(r) for r in conn.execute(
            f"SELECT {COLUMNS} FROM docs d WHERE d.key IN ({', '.join('?' * len(chunk))})", chunk)]
    return out


def broken_count(conn: sqlite3.Connection, kind: str) -> int:
    """How many records of `kind` have a frontmatter that cannot be read."""
    return int(conn.execute("SELECT count(*) FROM docs WHERE kind = ? AND broken != ''", (kind,)).fetchone()[0])


def flagged(conn: sqlite3.Connection) -> list[Row]:
    """Every record of the workspace that carries an embedded-instruction flag, by path."""
    sql = f"SELECT {COLUMNS} FROM docs d WHERE d.flags != '[]' AND d.kind NOT LIKE 'folder:%' ORDER BY d.relpath, d.key"
    return [to_row(r) for r in conn.execute(sql)]


def counts(conn: sqlite3.Connection) -> dict[str, int]:
    """Records per kind."""
    return {k: n for k, n in conn.execute("SELECT kind, count(*) FROM docs GROUP BY kind ORDER BY kind")}
