"""Searching the semantic index: the query's vector against every embedded unit (brute-force cosine), the
best unit of each record giving its score. Runs in the semantic worker process (numpy, the model).

The vectors are read from the store once and kept; they are read again when the store has changed, at
most every RELOAD_S while a build writes to it, so a search during a build does not pay for each batch.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from kbsync.retrieval import semanticstore as store
from kbsync.retrieval.semanticstore import Found
from kbsync.retrieval.semanticmodel import DIM, Model

RELOAD_S = 1.0
SHORTLIST = 8  # units looked at for each record wanted (a record has a head and maybe passages)


class Matrix:
    """The embedded units in memory: one row per unit, with its record's fields."""

    def __init__(self, rows: list[tuple[str, str, str, str, str, int, bytes]]) -> None:
        self.meta = [r[:6] for r in rows]
        self.kinds = np.array([r[2] for r in rows], dtype=object)
        blob = b"".join(r[6] for r in rows)
        self.vectors = np.frombuffer(blob, dtype=np.float32).reshape(len(rows), DIM) if rows else np.zeros((0, DIM),
                                                                                                         np.float32)

    def top(self, query: Any, kinds: Sequence[str], k: int) -> list[Found]:
        """The `k` records of these kinds nearest to `query`, best first."""
        if not len(self.meta) or k <= 0:
            return []
        scores = self.vectors @ query
        wanted = np.isin(self.kinds, list(kinds))
        scores = np.where(wanted, scores, -np.inf)
        n = min(len(scores), k * SHORTLIST)
        short = np.argpartition(-scores, n - 1)[:n]
        out: list[Found] = []
        seen: set[str] = set()
        for i in short[np.argsort(-scores[short], kind="stable")]:
            if not np.isfinite(scores[i]):
                break
            key, relpath, kind, title, summary, ordinal = self.meta[i]
            if key not in seen:
                seen.add(key)
                out.append(Found(key, relpath, kind, title, summary, ordinal, float(scores[i])))
                if len(out) == k:
                    break
        return out


class Searcher:
    """A model and the store's vectors, kept between searches (the worker answering a server's queries)."""

    def __init__(self, conn: store.Connection, model: Model, clock: Any = time.monotonic) -> None:
        self._conn, self._model, self._clock = conn, model, clock
        self._matrix: Matrix | None = None
        self._generation = -1
        self._loaded_at = 0.0

    def search(self, text: str, kinds: Sequence[str], k: int) -> list[Found]:
        return self._current().top(self._model.query(text), kinds, k)

    def _current(self) -> Matrix:
        gen = store.generation(self._conn)
        stale = gen != self._generation and self._clock() - self._loaded_at >= RELOAD_S
        if self._matrix is None or stale:
            self._matrix = Matrix(store.embedded_units(self._conn))
            self._generation, self._loaded_at = gen, self._clock()
        return self._matrix
