"""Relevance, pure: how well a record answers a query's terms, over its fields and its passages.

BM25 (k1 1.2, b 0.75) with the inverse document frequency ln(1 + (N - n + 0.5) / (n + 0.5)) over every
record of the index (never negative: a term most records hold weighs little but still counts), and the term
frequencies of the text itself:

- the record: a term's bm25 in its head (title, summary, tags: short, so taken at the average length)
  weighs HEAD_WEIGHT times its bm25 in the body (against the record's length relative to the average
  record's); the weight applies after saturation, so a term in the title outweighs a few in the body;
- each passage (kbsync.retrieval.passages): its heading weighs HEAD_WEIGHT times, its text once, against
  its length relative to PASSAGE_AVERAGE tokens; the record's best passage adds PASSAGE_WEIGHT times its score;
- the sum is multiplied by 1 + COVER x the share of the query's weight (the sum of its terms' idf) that
  the record holds: a record holding more of the query comes first among records of similar score.

A term is a folded word or a CJK bigram (kbsync.retrieval.text.query_terms); a lone CJK character is a
prefix term, counted wherever a token starts with it.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from kbsync.retrieval.passages import Passage, split
from kbsync.retrieval.text import CJK_RUN, text_tokens

K1, B = 1.2, 0.75
HEAD_WEIGHT = 3.0
PASSAGE_WEIGHT = 1.0
PASSAGE_AVERAGE = 120.0  # tokens of a passage of average length
COVER = 0.5


def idf(records: int, df: int) -> float:
    return math.log(1.0 + (records - df + 0.5) / (df + 0.5))


def bm25(tf: float, weight: float, relative_length: float) -> float:
    """One term's share of the score: its `tf` (weighted counts) in a text of `relative_length` (its length over
    the average's), times the term's weight (idf)."""
    if tf <= 0:
        return 0.0
    return weight * tf * (K1 + 1) / (tf + K1 * (1 - B + B * relative_length))


@dataclass(frozen=True)
class Scored:
    score: float
    passages: tuple[tuple[float, Passage], ...]  # every passage with its score, best first (then file order)


def count(tokens: Counter[str], term: str) -> int:
    """How often `term` occurs among `tokens` (a lone CJK character: every token it starts)."""
    if len(term) == 1 and CJK_RUN.match(term):
        return sum(n for t, n in tokens.items() if t and t[0] == term)
    return tokens.get(term, 0)


def _counter(terms: Sequence[str]) -> Callable[[str], Counter[str]]:
    """Counts the tokens of a text that `terms` count (and, under the key "", how many tokens it has)."""
    wanted = set(terms)
    starts = {t for t in terms if len(t) == 1 and CJK_RUN.match(t)}

    def counts(text: str) -> Counter[str]:
        tokens = text_tokens(text)
        got = Counter(t for t in tokens if t in wanted or (starts and t[0] in starts))
        got[""] = len(tokens)
        return got
    return counts


def score(terms: Sequence[str], weights: Mapping[str, float], head: str, body: str, relative_length: float, *,
          whole: bool = False) -> Scored:
    """The relevance of a record with this `head` and `body` (whole: its body is one passage) to `terms` of
    these `weights` (idf); its length (as the index measures it) over the average record's is `relative_length`."""
    counts = _counter(terms)
    head_tf = counts(head)
    passages = split(body, whole=whole)
    heads = [counts(p.heading) for p in passages]
    texts = [counts(p.text) for p in passages]
    body_tf: Counter[str] = Counter()
    for c in (*heads, *texts):
        body_tf.update(c)
    record = 0.0
    held = 0.0
    for t in terms:
        in_head, in_body = count(head_tf, t), count(body_tf, t)
        record += HEAD_WEIGHT * bm25(in_head, weights[t], 1.0) + bm25(in_body, weights[t], relative_length)
        held += weights[t] if in_head or in_body else 0.0
    ranked = []
    for p, h, x in zip(passages, heads, texts):
        length = x[""] / PASSAGE_AVERAGE
        ranked.append((sum(HEAD_WEIGHT * bm25(count(h, t), weights[t], 1.0) + bm25(count(x, t), weights[t], length)
                           for t in terms), p))
    ranked.sort(key=lambda sp: (-sp[0], sp[1].ordinal))
    best = ranked[0][0] if ranked else 0.0
    total = sum(weights[t] for t in terms)
    cover = held / total if total else 0.0
    return Scored((record + PASSAGE_WEIGHT * best) * (1 + COVER * cover), tuple(ranked))
