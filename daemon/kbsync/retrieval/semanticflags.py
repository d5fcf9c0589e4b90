"""The instruction classifier (kbsync.core.injectionclassifier) over the vectors the semantic index already holds.

After a build, `classify` scores each vector not scored yet by the shipped weights (no text is embedded again:
a vector is a unit's, known by its text's digest) and keeps the verdict in the table `classified` of the
semantic store; `flagged` lists the records one of whose units it flags, with the first such unit (its head or
a passage), beside the rules' flagged records (`kbsync status`). With the semantic leg off there are no vectors
and the rules alone run. The table lives and dies with the store: a store of another layout is made afresh.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from kbsync.core import injectionclassifier
from kbsync.retrieval import semanticstore as store

_TABLE = "CREATE TABLE IF NOT EXISTS classified (digest TEXT PRIMARY KEY, flagged INTEGER NOT NULL, weights TEXT NOT NULL) " \
         "WITHOUT ROWID"


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
    if not path.is_file():
        return []
    conn = store.connect(path)
    try:
        if not conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'classified'").fetchone():
            return []
        return [Flagged(k, rp, int(u)) for k, rp, u in conn.execute(
            "SELECT u.key, r.relpath, MIN(u.ordinal) FROM units u JOIN classified c ON c.digest = u.digest "
            "JOIN records r ON r.key = u.key WHERE c.flagged = 1 GROUP BY u.key, r.relpath ORDER BY u.key")]
    finally:
        conn.close()
