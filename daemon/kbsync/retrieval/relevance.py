"""Relevance, pure: how well a record answers a query's terms, over its fields and its passages.

BM25 (k1 1.2, b 0.75) with the inverse document frequency ln(1 + (N - n + 0.5) / (n + 0.5)) over every
record of the index (never negative: a term most records hold weighs little but still counts), and the term
frequencies of the text itself:

- the record: a term's bm25 in its head (title, summary, tags: short, so taken at the average length)
  weighs HEAD_WEIGHT times its bm25 in the body (against the record's length relative to the average
  record's); the weight applies after saturation, so a term in the title outweighs a few in the body;
- each passage (kbsync.retrieval.passages): its heading weighs HEAD_WEIGHT times, its text once, against
  its length relative to PASSAGE_AVERAGE tokens; the record's best place, its best passage or its head,
  adds PASSAGE_WEIGHT times its score;
- a place's best line adds LINE_WEIGHT times the weight of the query's terms it holds together, two or more:
  "what did Caroline research" is answered where one line says both, not in a passage that says "Caroline"
  in one turn and "research" in another (term proximity, with the line as the window). A passage's lines are
  its lines (a dialogue's turns, list items); the head's are its title, each tag and each sentence of its
  summary. Measured on LoCoMo's conversations 0-4 (docs/benchmarks.md), the keyword leg alone, top 1: 0.734
  -> 0.753 in their own workspaces, 0.688 -> 0.734 inside the 12,000-session corpus. A sentence as the
  window in the body too did worse inside the corpus (0.705), and so did the whole summary as one line
  (0.704): a summary speaks of many things;
- a place's neighbouring query words that stand side by side in it (ice cream, support group, Gina's store)
  add PHRASE_WEIGHT times their weight, once a pair and place: the query's words in its own order, the terms
  between them dropped as stop words aside, with spaces, a hyphen or a possessive 's between them in the text
  and no line break (an ordered window of one, as in the sequential dependence model). Measured on LoCoMo's
  conversations 0-4 (docs/benchmarks.md), the keyword leg alone, top 1: 0.753 -> 0.770 in their own
  workspaces, 0.734 -> 0.738 inside the 12,000-session corpus;
- the sum is multiplied by 1 + COVER x the share of the query's weight (the sum of its terms' idf) that
  the record holds: a record holding more of the query comes first among records of similar score.

A term is a folded word or a CJK bigram (kbsync.retrieval.text.query_terms); a lone CJK character is a
prefix term, counted wherever a token starts with it; a word is counted wherever one of its forms stands
(kbsync.retrieval.stem: camped, camping for camp). The text is not tokenised: the terms are counted in it
in one pass (`Counts`), and a passage's length is its estimated tokens.
"""

from __future__ import annotations

import bisect
import math
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from itertools import product
from typing import Mapping, Sequence

from ahocorasick_rs import AhoCorasick

from kbsync.retrieval.context import estimate_tokens
from kbsync.retrieval.passages import Passage, split
from kbsync.retrieval.stem import forms
from kbsync.retrieval.text import CJK_RUN

K1, B = 1.2, 0.75
HEAD_WEIGHT = 1.5
PASSAGE_WEIGHT = 2.0
PASSAGE_AVERAGE = 150.0  # the estimated tokens (kbsync.retrieval.context) of a passage of average length
COVER = 0.5
LINE_WEIGHT = 2.0
PHRASE_WEIGHT = 1.0


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
    held: float  # the weight (summed idf) of the terms the record holds


_NEWLINE = re.compile("\n")
_JOIN = re.compile(r"(?:['\u2019]s)?[ \t-]{1,3}")  # what may stand between two words of a phrase
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])")
_COMBINING = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")


def folded(text: str) -> str:
    """`text` as the index compares it: case-folded, Latin letters without their diacritics (as unicode61's
    remove_diacritics 2); everything else, CJK included, as it is."""
    text = text.casefold()
    if text.isascii():
        return text
    return unicodedata.normalize("NFC", _COMBINING.sub("", unicodedata.normalize("NFD", text)))


def _inside_word(c: str) -> bool:
    return c.isalnum() and not CJK_RUN.match(c)


@dataclass(frozen=True)
class Found:
    """What `Counts` found in a text: each term's count, the terms each of its lines holds (the lines holding
    any), and the pairs of the query's neighbouring words that stand side by side in it."""

    counts: Counter[str]
    lines: dict[int, set[str]]
    pairs: frozenset[tuple[str, str]]


class Counts:
    """Counts the occurrences of `terms` in a text as the index's tokens hold them, in one pass (Aho-Corasick,
    overlapping: the bigrams of a run overlap): a word where it stands whole (no letter or digit beside it,
    CJK aside, as unicode61 splits), a bigram wherever it stands, a lone CJK character (a prefix term)
    wherever it stands, which is the number of tokens it starts."""

    def __init__(self, terms: Sequence[str]) -> None:
        of: dict[str, list[str]] = {}  # a pattern: the terms it counts for (a word's forms, kbsync.retrieval.stem)
        for t in terms:
            for f in ((t,) if CJK_RUN.match(t) else forms(t)):
                of.setdefault(f, []).append(t)
        self.patterns = list(of)
        self.terms = list(of.values())
        self.word = [not CJK_RUN.match(p) for p in self.patterns]
        self.finder = AhoCorasick(self.patterns) if self.patterns else None
        words = [t for t in terms if not CJK_RUN.match(t)]  # a CJK run's bigrams overlap: side by side already
        self.pairs = frozenset(zip(words, words[1:]))

    def __call__(self, text: str) -> Found:
        got: Counter[str] = Counter()
        lines: dict[int, set[str]] = {}
        if self.finder is None:
            return Found(got, lines, frozenset())
        text = folded(text)
        end = len(text)
        breaks = [m.start() for m in _NEWLINE.finditer(text)]
        ends: dict[int, list[str]] = {}
        starts: dict[int, list[str]] = {}
        for i, a, b in self.finder.find_matches_as_indexes(text, overlapping=True):
            if self.word[i] and ((a > 0 and _inside_word(text[a - 1])) or (b < end and _inside_word(text[b]))):
                continue
            got.update(self.terms[i])
            lines.setdefault(bisect.bisect(breaks, a), set()).update(self.terms[i])
            if self.word[i] and self.pairs:
                ends.setdefault(b, []).extend(self.terms[i])
                starts.setdefault(a, []).extend(self.terms[i])
        return Found(got, lines, self._side_by_side(text, ends, starts))

    def _side_by_side(self, text: str, ends: Mapping[int, list[str]],
                      starts: Mapping[int, list[str]]) -> frozenset[tuple[str, str]]:
        """The query's pairs of neighbouring words that stand side by side in `text`: a word ending where only
        spaces, a hyphen or a possessive 's stand before the next word's start."""
        found: set[tuple[str, str]] = set()
        for b, before in ends.items():
            join = _JOIN.match(text, b)
            after = starts.get(join.end(), ()) if join else ()
            found.update(p for p in product(before, after) if p in self.pairs)
        return frozenset(found)


def head_lines(fields: Sequence[str]) -> str:
    """A record's head (title, summary, tags) as lines: each field one, the summary's sentences each one."""
    return "\n".join(x for f in fields for x in _SENTENCE_END.split(" ".join(f.split())) if x)


def score(terms: Sequence[str], weights: Mapping[str, float], head: Sequence[str], body: str,
          relative_length: float, *, whole: bool = False, time_weight: float = 0.0, in_time: bool = False) -> Scored:
    """The relevance of a record with this `head` (its title, summary and tags) and `body` (whole: its body is
    one passage) to `terms` of these `weights` (idf); its length (as the index measures it) over the average
    record's is `relative_length`. `time_weight`: the weight of the time the query names
    (kbsync.retrieval.when), a term of the head that the record holds when its date falls in that time
    (`in_time`)."""
    counts = Counts(terms)
    in_head = counts(head_lines(head))
    passages = split(body, whole=whole)
    heads = [counts(p.heading) for p in passages]
    texts = [counts(p.text) for p in passages]
    body_tf: Counter[str] = Counter()
    for found in (*heads, *texts):
        body_tf.update(found.counts)
    record = 0.0
    held = time_weight if in_time else 0.0
    # the head's own share: it competes with the passages as the record's best place
    in_heads = HEAD_WEIGHT * bm25(1.0 if in_time else 0.0, time_weight, 1.0)
    for t in terms:
        in_h, in_b = in_head.counts[t], body_tf[t]
        in_heads += HEAD_WEIGHT * bm25(in_h, weights[t], 1.0)
        record += bm25(in_b, weights[t], relative_length)
        held += weights[t] if in_h or in_b else 0.0
    ranked = []
    for p, h, x in zip(passages, heads, texts):
        length = estimate_tokens(p.text) / PASSAGE_AVERAGE
        ranked.append((sum(HEAD_WEIGHT * bm25(h.counts[t], weights[t], 1.0) + bm25(x.counts[t], weights[t], length)
                           for t in terms) + _near(x.lines, h.pairs | x.pairs, weights), p))
    ranked.sort(key=lambda sp: (-sp[0], sp[1].ordinal))
    record += in_heads
    best = max(ranked[0][0] if ranked else 0.0, in_heads + _near(in_head.lines, in_head.pairs, weights))
    total = sum(weights[t] for t in terms) + time_weight
    cover = held / total if total else 0.0
    return Scored((record + PASSAGE_WEIGHT * best) * (1 + COVER * cover), tuple(ranked), held)


def _near(lines: Mapping[int, set[str]], pairs: frozenset[tuple[str, str]], weights: Mapping[str, float]) -> float:
    """What a place gains for the query's terms standing near each other in it: LINE_WEIGHT times the weight of
    those its best line holds together (two or more), PHRASE_WEIGHT times that of each pair side by side."""
    together = max((sum(weights[t] for t in held) for held in lines.values() if len(held) > 1), default=0.0)
    return LINE_WEIGHT * together + PHRASE_WEIGHT * sum(weights[a] + weights[b] for a, b in pairs)
