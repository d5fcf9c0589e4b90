"""Blending the two legs of the workspace's own search for one kind of record, pure: keyword relevance and
meaning (the semantic index) become one ranked list before the sources are fused.

Rank fusion (RRF) of the two lists was measured first and kept neither leg's strength: it counts a rank and
forgets by how much a record led, so a session both legs list fairly low overtakes the one the keyword leg
found far ahead; and a keyword leg that matched only a name of the query (a Chinese question about an English
session matches its speakers' names and nothing else) casts full votes. A blend of the scores keeps both
(docs/retrieval.md, docs/benchmarks.md):

    score = share * confidence ** CONFIDENCE_POWER * keyword / best keyword  +  (1 - share) * meaning / MEANING_SCALE

- `keyword / best keyword`: the keyword relevance (kbsync.retrieval.relevance) over the list's first;
- `confidence`: how much of the query the keyword leg matched at all, its first hit's share of the query's
  weight (the idf of the terms it holds over all of the query's, terms found nowhere counting most): near 1
  for a question in the texts' own words, near 0 for one whose words are not in them;
- `meaning`: the semantic score (a cosine above its script's mean, in standard deviations:
  kbsync.retrieval.semanticsearch), over MEANING_SCALE, which brings a clear answer near 1;
- `share`: 1 / (1 + `[search] semantic_weight`), 0.4 by default (a weight of 1.5).

The confidence to the power 1.5, the meaning over 5 and the share of 0.4 were chosen together on LoCoMo's
conversations 0-4, the 12,000-session corpus and the cross-language set (docs/benchmarks.md): the confidence
as it is (power 1) let an English question's common words, found in English sessions, push the Chinese
session that answers it out of the top 5 (top 5 0.64); squared, it cost LoCoMo's own top 5.

A record the semantic index knows by its head alone (its passages are outside the window: a large workspace's
older sessions) was compared by its start only, which tells the sessions of one topic poorly apart: its meaning
counts by what the keyword leg did not find, `(1 - confidence) ** HEAD_ONLY_POWER` of it: nothing where that
leg is sure, in full where it found nothing of the query (a question in another language). Measured with
LoCoMo inside the 12,000-session corpus, where every LoCoMo session is known by its head alone, with the
weights of then (power 1, scale 4, share 0.5): top 1 0.57 -> 0.67, top 5 0.85 -> 0.88 (a quarter of the
meaning under a sure keyword leg: 0.66, 0.87; a half: 0.65, 0.86); with today's weights and keyword leg, the
cube of `1 - confidence` rather than itself: 0.70 -> 0.73, 0.91 -> 0.92 (the keyword leg alone: 0.73,
0.92). Nothing changes in a workspace whose records all have their passages (docs/benchmarks.md).

A record one leg did not list has that leg's lowest listed part at most: 0 for the keyword leg, the
semantic list's lowest for the semantic one. The best passage named is the one of the leg that gave the record
more of its score; everything else of a record (its flags above all) is the keyword hit's, when there is one.
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

from kbsync.retrieval.fusion import Hit

MEANING_SCALE = 5.0
CONFIDENCE_POWER = 1.5
HEAD_ONLY_POWER = 3


def blend(words: Sequence[Hit], meaning: Sequence[Hit], semantic_weight: float, limit: int) -> list[Hit]:
    """The best `limit` of the records either list holds (`words`: keyword hits, best first; `meaning`: the
    semantic hits of the same kind), by the blended score, as the keyword list's hits (source, ranks from 1)
    with the sources that found each in `via`."""
    if not meaning:
        return list(words[:limit])
    name = words[0].source if words else meaning[0].source
    share = 1.0 / (1.0 + semantic_weight)
    best = max((h.score for h in words), default=0.0)
    confidence = (words[0].cover if words else 0.0) ** CONFIDENCE_POWER
    parts_m = {h.identity: (1.0 - share) * h.score * ((1.0 - confidence) ** HEAD_ONLY_POWER if h.partial else 1.0) / MEANING_SCALE
               for h in meaning}
    floor = min(parts_m.values())
    by_words = {h.identity: h for h in words}
    by_meaning = {h.identity: h for h in meaning}
    scored = []
    for ident in dict.fromkeys([*by_words, *by_meaning]):
        w, m = by_words.get(ident), by_meaning.get(ident)
        part_w = share * confidence * (w.score / best if w and best > 0 else 0.0)
        part_m = parts_m.get(ident, floor)
        base = w or m
        assert base is not None
        told = m if m and m.passage and (not w or not w.passage or part_m > part_w) else base
        via = tuple(h.source for h in (w, m) if h)
        scored.append((part_w + part_m, ident, dataclasses.replace(
            base, source=name, score=part_w + part_m, via=via, heading=told.heading, passage=told.passage)))
    scored.sort(key=lambda s: (-s[0], s[1]))
    return [dataclasses.replace(h, rank=i) for i, (_, _, h) in enumerate(scored[:limit], start=1)]
