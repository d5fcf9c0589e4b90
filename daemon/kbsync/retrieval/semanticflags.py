"""The instruction classifier (kbsync.core.detect.injectionclassifier) over the vectors the semantic index already holds.

After a build, `classify` scores each vector not scored yet by the shipped weights (no text is embedded again:
a vector is a unit's, known by its text's digest) and keeps the verdict in the table `classified` of the
semantic store; `flagged` lists the records one of whose units it flags, with the first such unit (its head or
a passage), beside the rules' flagged records (`kbsync status`). `learned` gives what is flagged as the files read
now (kbsync.core.detect.injectionclassifier.Learned), for every door to withhold beside the rules' flags: one query over
the flagged verdicts (an index holds them alone), then the few files they are in. With the semantic leg off
the store is never opened and the rules alone run. The table lives and dies with the store: a store of another
layout is made afresh.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kbsync.core.detect import injectionclassifier
from kbsync.core.detect.injectionclassifier import NO_VERDICTS, Learned
from kbsync.errors import KbsyncError
from kbsync.retrieval import semanticstore as store
from kbsync.retrieval import semanticunits

if TYPE_CHECKING:
    from kbsync.store.workspace import Workspace

_TABLE = "CREATE TABLE IF NOT EXISTS classified (digest TEXT PRIMARY KEY, flagged INTEGER NOT NULL, weights TEXT NOT NULL) " \
         "WITHOUT ROWID"
_FLAGGED = "CREATE INDEX IF NOT EXISTS classified_flagged ON classified(digest) WHERE flagged = 1"
_HAS_TABLE = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'classified'"


@dataclass(frozen=True)
class Flagged:
    """A record one of whose embedded units the classifier flags: `unit` 0 is its head, 1 on its passages."""

    key: str
    relpath: str
    unit: int

    @property
    def span(self) -> str:
        return "head" if self.unit == 0 else f"passage {self.unit}"


def weights_id(clf: injectionclassifier.Classifier) -> str:
    """Names the weights a verdict was given by: other weights score every vector again."""
    return hashlib.sha256(repr((clf.model, clf.weights, clf.bias, clf.threshold)).encode()).hexdigest()[:16]


def classify(conn: store.Connection, clf: injectionclassifier.Classifier | None = None) -> int:
    """Score every vector that has no verdict by these weights and forget the verdicts of vectors gone; the
    number scored."""
    clf = clf or injectionclassifier.shipped()
    wid = weights_id(clf)
    conn.execute(_TABLE)
    conn.execute(_FLAGGED)
    todo = conn.execute("SELECT v.digest, v.vec FROM vectors v LEFT JOIN classified c ON c.digest = v.digest "
                        "AND c.weights = ? WHERE c.digest IS NULL", (wid,)).fetchall()
    with store.transaction(conn):
        conn.executemany("INSERT OR REPLACE INTO classified VALUES (?, ?, ?)",
                         [(d, int(clf.flags_packed(v)), wid) for d, v in todo])
        conn.execute("DELETE FROM classified WHERE digest NOT IN (SELECT digest FROM vectors)")
    return len(todo)


def flagged(path: Path) -> list[Flagged]:
    """The records the classifier flags in the store at `path`, by key; none when there is no store or it was
    never classified (reading never creates either)."""
    return [Flagged(k, rp, int(u)) for k, rp, u in _read(
        path, "SELECT u.key, r.relpath, MIN(u.ordinal) FROM units u JOIN classified c ON c.digest = u.digest "
              "JOIN records r ON r.key = u.key WHERE c.flagged = 1 GROUP BY u.key, r.relpath ORDER BY u.key")]


def learned(ws: Workspace) -> Learned:
    """What the classifier flags in the workspace as its files read now: a unit whose text changed since it was
    classified is not flagged by its old verdict (the next build gives the new text one). Nothing with the
    semantic leg off or without a classified store (neither is created by reading)."""
    if not ws.config.search.semantic:
        return NO_VERDICTS
    by_file: dict[str, set[str]] = defaultdict(set)
    # CROSS JOIN keeps the flagged verdicts (the partial index `classified_flagged`) the outer loop, whatever
    # SQLite's estimate of the tables' sizes
    for relpath, digest in _read(store.db_path(ws.state_dir),
                                 "SELECT r.relpath, c.digest FROM classified c CROSS JOIN units u "
                                 "ON u.digest = c.digest JOIN records r ON r.key = u.key WHERE c.flagged = 1"):
        by_file[relpath].add(digest)
    lines: list[str] = []
    runs_on: set[str] = set()
    records: dict[str, tuple[dict[str, object], ...]] = {}
    for relpath, digests in sorted(by_file.items()):
        text, units = _units(ws, relpath)
        for key, (head, whole, passages) in units.items():
            mine = [t for t in (head, *passages) if semanticunits.digest(t) in digests]
            cut = {head.splitlines()[-1]} if head in mine and head != whole else set()
            found = Learned(tuple(ln for t in mine for ln in t.splitlines()), frozenset(cut))
            if found.lines:
                lines += found.lines
                runs_on |= cut
                records[key] = tuple(f.as_dict() for f in found.flags(text))
    return Learned(tuple(lines), frozenset(runs_on), records) if lines else NO_VERDICTS


def _units(ws: Workspace, relpath: str) -> tuple[str, dict[str, tuple[str, str, list[str]]]]:
    """The file's text and each of its records' units as it reads now: the head, the text the head is the start
    of, the passages (none when the file cannot be read: its verdicts wait for the next build)."""
    from kbsync.retrieval.records import records_for

    try:
        text = ws.read_text(relpath)
    except (KbsyncError, OSError):
        return "", {}
    recs = records_for(relpath, text, ws.config.protocol.default_offset, flagged=False)
    return text, {r.key: (semanticunits.head(r).text, semanticunits.whole_head(r),
                          [u.text for u in semanticunits.passages(r)]) for r in recs}


def _read(path: Path, sql: str) -> list[tuple[str, ...]]:
    """The rows of `sql` over the store at `path`; none when there is no store or it was never classified."""
    if not path.is_file():
        return []
    conn = store.connect(path)
    try:
        if not conn.execute(_HAS_TABLE).fetchone():
            return []
        return [tuple(r) for r in conn.execute(sql)]
    finally:
        conn.close()
