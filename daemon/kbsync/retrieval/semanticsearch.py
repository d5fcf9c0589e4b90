"""Searching the semantic index: the query's vector against every embedded unit (brute-force cosine), each
record scored by its best units. Runs in the semantic worker process (numpy, the model).

A multilingual model's cosine carries the language: a Chinese query is nearer to every Chinese text than to any
English one, whatever they say (and the reverse), so a raw cosine ranks an unrelated text of the query's own
script above the answer in the other. The search therefore scores a unit by how much nearer it is than the
texts of its own script are on average (`calibrate`): its cosine less the mean cosine of its script's units
(shrunk towards the mean of all, for a script with few units), in standard deviations of all the units'
scores. That is also the scale on which the score is blended with keyword relevance (kbsync.retrieval.blend).
Measured on LoCoMo and the cross-language set (docs/benchmarks.md): a Chinese question about an English session
in the top 5 for 0.39 of the questions by raw cosine, 0.90 calibrated; the reverse 0.57 and 0.80; an English
question about an English session unchanged.

A record's score is its best unit's, with a share (SECOND) of its second best: a session that two of its
passages answer comes before one with a single near passage.

The vectors are read from the store once and kept; they are read again when the store has changed, at
most every RELOAD_S while a build writes to it, so a search during a build does not pay for each batch.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Any, Sequence

import numpy as np

from kbsync.retrieval import semanticstore as store
from kbsync.retrieval.semanticmodel import DIM, Model
from kbsync.retrieval.semanticstore import EmbeddedUnit, Found

RELOAD_S = 1.0
SHORTLIST = 8  # units looked at for each record wanted (a record has a head and maybe passages)
SHRINK = 20.0  # units' worth of the mean of all that a script's own mean is drawn towards
SECOND = 0.3  # the weight of a record's second-best unit in its score, beside its best (1)


def calibrate(scores: Any, cjk: Any) -> Any:
    """The units' `scores` (cosines) as distances above their script's mean, in standard deviations."""
    out = scores.astype(np.float64)
    overall = float(out.mean())
    for group in (cjk, ~cjk):
        n = int(group.sum())
        if n:
            out[group] -= (n * float(out[group].mean()) + SHRINK * overall) / (n + SHRINK)
    spread = float(out.std())
    return out / spread if spread > 0 else out


class Matrix:
    """The embedded units in memory: one row per unit, with its record's fields."""

    def __init__(self, rows: list[EmbeddedUnit]) -> None:
        self.meta = [r[:6] for r in rows]
        self.kinds = np.array([r[2] for r in rows], dtype=object)
        self.cjk = np.array([r[6] for r in rows], dtype=bool)
        keys = [r[0] for r in rows]
        self.units_of = _counts(keys)  # units a record has embedded
        self.partial = {r[0] for r in rows if r[7] and self.units_of[r[0]] == 1}  # passages not embedded
        blob = b"".join(r[8] for r in rows)
        self.vectors = np.frombuffer(blob, dtype=np.float32).reshape(len(rows), DIM) if rows else np.zeros((0, DIM),
                                                                                                         np.float32)

    def top(self, query: Any, kinds: Sequence[str], k: int) -> list[Found]:
        """The `k` records of these kinds nearest to `query`, best first: each record scored by its best unit
        and its second (or, when that is not among the units looked at, the lowest of those, which it cannot
        beat)."""
        if not len(self.meta) or k <= 0:
            return []
        scores = calibrate(self.vectors @ query, self.cjk)
        rows = np.flatnonzero(np.isin(self.kinds, list(kinds)))
        if not len(rows):
            return []
        n = min(len(rows), k * SHORTLIST)
        short = rows[np.argpartition(-scores[rows], n - 1)[:n]]
        short = short[np.argsort(-scores[short], kind="stable")]
        floor = float(scores[short[-1]])
        best: dict[str, tuple[int, float]] = {}
        second: dict[str, float] = {}
        for i in short:
            key = self.meta[i][0]
            if key not in best:
                best[key] = (int(i), float(scores[i]))
            elif key not in second:
                second[key] = float(scores[i])
        found = []
        for key, (i, top) in best.items():
            other = second.get(key, top if self.units_of[key] == 1 else floor)
            _, relpath, kind, title, summary, ordinal = self.meta[i]
            found.append(Found(key, relpath, kind, title, summary, ordinal, (top + SECOND * other) / (1 + SECOND),
                               key in self.partial))
        found.sort(key=lambda f: (-f.score, f.key))
        return found[:k]


def _counts(keys: list[str]) -> dict[str, int]:
    return dict(Counter(keys))


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
