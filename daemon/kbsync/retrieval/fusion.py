"""Rank fusion of several sources' ranked lists: pure functions, no I/O.

Reciprocal Rank Fusion: an item's score is the sum over the sources that
returned it of 1 / (k + rank), ranks starting at 1, times the source's weight
where one is given (the semantic index's, `[search] semantic_weight`). Scores are compared exactly
(as fractions), so equal sums are real ties whatever the float rounding. Ties
are broken by the item's best single rank, then by the position in the
configuration of the first source that returned it, then by its key; the order
is therefore fully determined by the inputs.

Another fusion can be swapped in: anything with the signature of `FusionFn`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Callable, Mapping, Sequence

DEFAULT_K = 60


@dataclass(frozen=True)
class Hit:
    """One result of one source, at its 1-based rank in that source's list."""

    source: str
    rank: int
    title: str
    key: str = ""
    path: str = ""
    url: str = ""
    summary: str = ""
    flags: tuple[dict[str, object], ...] = ()  # embedded-instruction flags of the item, from the search index
    heading: str = ""  # the heading of the item's best passage ("" before the first heading, or none)
    passage: str = ""  # the item's best passage (about 200 tokens at most), "" when the source names none
    score: float = 0.0  # the source's own measure of it, where it has one (keyword relevance, calibrated cosine)
    cover: float = 0.0  # a keyword hit's share of the query (kbsync.retrieval.db.Row.cover)
    via: tuple[str, ...] = ()  # the sources that found it, when its list blends several (kbsync.retrieval.blend)
    kind: str = ""  # the record's kind, for the workspace's own records (session, board, memory, artifact)
    partial: bool = False  # a semantic hit of a record known by its head alone (kbsync.retrieval.semanticstore.Found)

    @property
    def identity(self) -> str:
        """Results of different sources are the same item when this is equal: key, else path, else url."""
        return self.key or self.path or self.url


@dataclass(frozen=True)
class Fused:
    """One item of the fused list."""

    key: str
    title: str
    score: float
    sources: tuple[str, ...]
    best_rank: int
    path: str = ""
    url: str = ""
    summary: str = ""
    flags: tuple[dict[str, object], ...] = ()
    heading: str = ""
    passage: str = ""
    exact: Fraction = field(default=Fraction(0), compare=False, repr=False)

    @property
    def families(self) -> list[str]:
        return list(dict.fromkeys(str(f["family"]) for f in self.flags))


# A source's name with its hits, best first; the sequence is in configuration order.
SourceHits = tuple[str, Sequence[Hit]]
FusionFn = Callable[[Sequence[SourceHits]], list[Fused]]


@dataclass
class _Acc:
    first: Hit
    exact: Fraction = Fraction(0)
    best_rank: int = 0
    first_source: int = 0
    sources: list[str] = field(default_factory=list)
    lists: set[str] = field(default_factory=set)
    extra: dict[str, str] = field(default_factory=dict)
    flags: tuple[dict[str, object], ...] = ()


def rrf(lists: Sequence[SourceHits], k: int = DEFAULT_K, weights: Mapping[str, Fraction] | None = None) -> list[Fused]:
    """Reciprocal Rank Fusion of `lists` (in configuration order), best first; a source named in `weights`
    adds its weight times 1 / (k + rank) (the others, 1 times)."""
    acc: dict[str, _Acc] = {}
    for order, (name, hits) in enumerate(lists):
        weight = (weights or {}).get(name, Fraction(1))
        for hit in hits:
            _add(acc, order, name, hit, k, weight)
    ranked = sorted(acc.items(), key=lambda kv: (-kv[1].exact, kv[1].best_rank, kv[1].first_source, kv[0]))
    return [_fused(ident, a) for ident, a in ranked]


def _add(acc: dict[str, _Acc], order: int, name: str, hit: Hit, k: int, weight: Fraction) -> None:
    ident = hit.identity
    if not ident:
        return
    a = acc.get(ident)
    if a is None:
        a = acc[ident] = _Acc(first=hit, best_rank=hit.rank, first_source=order)
    elif name in a.lists:
        return  # a source listing the same item twice counts once, at its better rank
    a.exact += weight * Fraction(1, k + hit.rank)
    a.best_rank = min(a.best_rank, hit.rank)
    a.lists.add(name)
    a.sources += [s for s in hit.via or (name,) if s not in a.sources]
    for attr in ("path", "url", "summary"):
        value = getattr(hit, attr)
        if value and attr not in a.extra:
            a.extra[attr] = value
    if hit.passage and "passage" not in a.extra:  # the best-ranked source's passage (sources in rank order)
        a.extra["passage"], a.extra["heading"] = hit.passage, hit.heading
    a.flags = a.flags or hit.flags


def _fused(ident: str, a: _Acc) -> Fused:
    return Fused(key=ident, title=a.first.title, score=float(a.exact), sources=tuple(a.sources),
                 best_rank=a.best_rank, path=a.extra.get("path", ""), url=a.extra.get("url", ""),
                 summary=a.extra.get("summary", ""), flags=a.flags, heading=a.extra.get("heading", ""),
                 passage=a.extra.get("passage", ""), exact=a.exact)


def make_rrf(k: int, weights: Mapping[str, Fraction] | None = None) -> FusionFn:
    """RRF with a configured k (and weights by source name), as a `FusionFn`."""
    return lambda lists: rrf(lists, k, weights)
