"""Bringing the semantic index in step with the files: plan what to embed, then embed it, resumably.

`plan` re-reads only the files whose mtime or size differ from what the index holds (and forgets the files
gone): each record's head is a unit; then the passage window (kbsync.retrieval.semanticunits.window) is
worked out over the whole workspace, and the records entering it get their passages, those leaving it lose
them. Units whose text has no vector yet wait in `pending`. `embed` takes the pending texts a batch at a
time, heads before passages and the newest first, and stores each batch in one transaction: a build killed
at any moment goes on where it stopped, and an index kept up to date this way equals one built afresh.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from typing import Callable, Protocol, Sequence

from kbsync.errors import InputError
from kbsync.retrieval import semanticflags
from kbsync.retrieval import semanticstore as store
from kbsync.retrieval import semanticunits as units
from kbsync.retrieval.index import current_states, indexable
from kbsync.retrieval.records import Record, records_for
from kbsync.store.workspace import Workspace

log = logging.getLogger(__name__)
CHUNK_FILES = 200  # files planned in one transaction
BATCH = 16  # texts embedded (and stored) at a time
SUMMARY_CHARS = 200  # of a record's summary kept to show with a hit


class Embedder(Protocol):
    def passages(self, texts: Sequence[str]) -> list[bytes]: ...


def plan(ws: Workspace, conn: store.Connection) -> int:
    """Re-read what changed and choose the units; the number of files re-read or forgotten. Every file counts as
    changed when the units were chosen by another scheme (another kbsync's head length, say)."""
    if store.scheme(conn) != units.SCHEME:
        with store.transaction(conn):
            store.replan_all(conn, units.SCHEME)
    current = {rp: (st.mtime_ns, st.size) for rp, st in current_states(ws).items()}
    known = store.files(conn)
    stale = [rp for rp, st in current.items() if known.get(rp) != st] + [rp for rp in known if rp not in current]
    for i in range(0, len(stale), CHUNK_FILES):
        with store.transaction(conn):
            for rp in stale[i:i + CHUNK_FILES]:
                _replan(ws, conn, rp, current.get(rp))
    _rewindow(ws, conn)
    return len(stale)


def _replan(ws: Workspace, conn: store.Connection, relpath: str, state: tuple[int, int] | None) -> None:
    recs = records_of(ws, relpath) if state is not None else None
    if recs is None:
        store.drop_file(conn, relpath)
        return
    rows = [(store.RecordRow(r.key, r.relpath, r.kind, r.title, r.summary[:SUMMARY_CHARS], r.date, len(units.passages(r))),
             units.head(r)) for r in recs]
    store.put_file(conn, relpath, state or (0, 0), rows)


def records_of(ws: Workspace, relpath: str) -> list[Record] | None:
    """The file's records; None when it is gone, not indexed, or cannot be read (then logged)."""
    if not indexable(relpath):
        return None
    try:
        text = ws.read_text(relpath)
    except FileNotFoundError:
        return None
    except (InputError, OSError) as exc:
        log.warning("semantic index: %s left out: %s", relpath, exc)
        return None
    return records_for(relpath, text, ws.config.protocol.default_offset, flagged=False)


def _rewindow(ws: Workspace, conn: store.Connection) -> None:
    """Give the passages to the records in the window and take them from the others; drop what nothing uses."""
    chosen = units.window(store.passage_sizes(conn), ws.config.search.semantic_passages)
    have = store.with_passages(conn)
    with store.transaction(conn):
        for key in have - chosen:
            store.drop_passages(conn, key)
    where = store.record_files(conn, chosen - have)
    by_file: dict[str, list[str]] = defaultdict(list)
    for key, (relpath, _date) in sorted(where.items()):
        by_file[relpath].append(key)
    files = sorted(by_file)
    for i in range(0, len(files), CHUNK_FILES):
        with store.transaction(conn):
            for relpath in files[i:i + CHUNK_FILES]:
                _add_passages(ws, conn, relpath, set(by_file[relpath]))
    with store.transaction(conn):
        store.collect_garbage(conn)


def _add_passages(ws: Workspace, conn: store.Connection, relpath: str, keys: set[str]) -> None:
    for rec in records_of(ws, relpath) or []:
        if rec.key in keys:
            store.put_units(conn, units.passages(rec), rec.date)


def embed(conn: store.Connection, model: Embedder, *, on_batch: Callable[[int], None] = lambda n: None,
          batch: int = BATCH) -> int:
    """Embed every pending text, a batch at a time; the number embedded."""
    done = 0
    while True:
        todo = store.next_pending(conn, batch)
        if not todo:
            return done
        vecs = model.passages([text for _, text in todo])
        store.put_vectors(conn, [(d, v) for (d, _), v in zip(todo, vecs)])
        done += len(todo)
        on_batch(len(todo))


def build(ws: Workspace, conn: store.Connection, model: Embedder, *, again: Callable[[], bool] = lambda: False,
          on_batch: Callable[[int], None] = lambda n: None) -> int:
    """Plan and embed until nothing is left (and `again` says no more was asked for meanwhile); the number of
    texts embedded. The index counts as built from then on."""
    done = 0
    while True:
        plan(ws, conn)
        done += embed(conn, model, on_batch=on_batch)
        if not again():
            break
    semanticflags.classify(conn)  # the instruction classifier over the new vectors
    with store.transaction(conn):
        store.set_built(conn, True)
    return done
