"""The blend of the keyword and semantic legs against hand-computed scores, and the semantic score's calibration
by script (kbsync.retrieval.blend, kbsync.retrieval.semanticsearch)."""

from __future__ import annotations

import numpy as np
import pytest

from kbsync.retrieval.blend import CONFIDENCE_POWER, HEAD_ONLY_POWER, MEANING_SCALE, blend
from kbsync.retrieval.fusion import Hit, rrf
from kbsync.retrieval.semanticmodel import DIM
from kbsync.retrieval.semanticsearch import SECOND, Matrix, calibrate
from kbsync.retrieval.semanticstore import EmbeddedUnit


def words(*items: tuple[str, float], cover: float = 1.0) -> list[Hit]:
    return [Hit("sessions", i, k.upper(), key=k, score=s, cover=cover, passage=f"kw {k}", kind="session")
            for i, (k, s) in enumerate(items, start=1)]


def meaning(*items: tuple[str, float], partial: tuple[str, ...] = ()) -> list[Hit]:
    return [Hit("semantic", i, k.upper(), key=k, score=s, passage=f"sem {k}", kind="session", partial=k in partial)
            for i, (k, s) in enumerate(items, start=1)]


def test_scores_blend_by_hand() -> None:
    got = blend(words(("a", 10.0), ("b", 5.0)), meaning(("b", 6.0), ("c", 3.0)), 1.0, 10)
    # share 1/2, confidence 1: a = .5*1 + .5*3/S (the semantic floor); b = .5*.5 + .5*6/S; c = 0 + .5*3/S
    assert [h.key for h in got] == ["b", "a", "c"]
    half = 0.5 / MEANING_SCALE
    assert [h.score for h in got] == pytest.approx([0.25 + 6 * half, 0.5 + 3 * half, 3 * half])
    assert [h.rank for h in got] == [1, 2, 3] and {h.source for h in got} == {"sessions"}
    assert [h.via for h in got] == [("sessions", "semantic"), ("sessions",), ("semantic",)]


def test_a_keyword_leg_that_matched_little_of_the_query_weighs_little() -> None:
    # the first hit holds a tenth of the query's weight (a name in a question of other words): confidence
    # (1/10) ** CONFIDENCE_POWER
    got = blend(words(("name", 30.0), cover=0.1), meaning(("answer", 5.0), ("name", 1.0)), 1.0, 10)
    assert [h.key for h in got] == ["answer", "name"]
    assert got[1].score == pytest.approx(0.5 * 0.1 ** CONFIDENCE_POWER + 0.5 * 1.0 / MEANING_SCALE)


def test_a_record_known_by_its_head_alone_weighs_by_how_sure_the_keyword_leg_is() -> None:
    # "old" is known to the semantic index by its head alone: its meaning counts by what the keyword leg did not
    # find: not at all under a sure keyword leg, by (1 - confidence) cubed under one less sure, in full under
    # one that matched nothing of the query (another language)
    sure = blend(words(("new", 10.0), ("old", 9.0)), meaning(("old", 4.0), ("new", 1.0), partial=("old",)), 1.0, 10)
    assert [h.key for h in sure] == ["new", "old"]
    assert sure[1].score == pytest.approx(0.5 * 0.9)
    some = blend(words(("new", 10.0), ("old", 9.0), cover=0.75), meaning(("old", 4.0), ("new", 1.0), partial=("old",)),
                 1.0, 10)
    sure_of = 0.75 ** CONFIDENCE_POWER
    old = next(h for h in some if h.key == "old")
    assert old.score == pytest.approx(0.5 * sure_of * 0.9 + 0.5 * (1 - sure_of) ** HEAD_ONLY_POWER * 4.0 / MEANING_SCALE)
    whole = blend(words(("new", 10.0), ("old", 9.0)), meaning(("old", 4.0), ("new", 1.0)), 1.0, 10)
    assert [h.key for h in whole] == ["old", "new"]  # known whole, the same record leads
    lost = blend(words(("new", 10.0), cover=0.0), meaning(("old", 4.0), ("new", 1.0), partial=("old",)), 1.0, 10)
    assert [h.key for h in lost] == ["old", "new"] and lost[0].score == pytest.approx(0.5 * 4.0 / MEANING_SCALE)


def test_semantic_weight_sets_the_share_and_one_leg_alone_keeps_its_order() -> None:
    w, m = words(("a", 10.0), ("b", 9.0)), meaning(("b", 6.0), ("a", 5.0))
    assert [h.key for h in blend(w, m, 0.1, 10)] == ["a", "b"]
    assert [h.key for h in blend(w, m, 10.0, 10)] == ["b", "a"]
    assert blend(w, [], 1.0, 1) == w[:1]
    only = blend([], m, 1.0, 10)
    assert [(h.key, h.rank, h.source, h.via) for h in only] == [("b", 1, "semantic", ("semantic",)),
                                                                ("a", 2, "semantic", ("semantic",))]


def test_a_record_keeps_its_keyword_flags_and_the_passage_of_the_leg_that_gave_more() -> None:
    flag = ({"family": "override"},)
    w = [Hit("sessions", 1, "A", key="a", score=10.0, cover=0.1, flags=flag, passage="kw a"),
         Hit("sessions", 2, "B", key="b", score=9.0, cover=1.0, passage="kw b")]
    got = {h.key: h for h in blend(w, meaning(("a", 6.0), ("b", 0.0)), 1.0, 10)}
    assert got["a"].flags == flag and got["a"].passage == "sem a"  # meaning gave a more
    assert got["b"].passage == "kw b"


def test_fusion_names_every_source_that_found_a_blended_record() -> None:
    fused = rrf([("sessions", blend(words(("a", 1.0)), meaning(("a", 6.0), ("c", 1.0)), 1.0, 10))])
    assert [(f.key, f.sources) for f in fused] == [("a", ("sessions", "semantic")), ("c", ("semantic",))]


def test_calibration_takes_out_the_scripts_bias() -> None:
    # Chinese units all sit 0.1 nearer to the query than English ones: calibrated, the best of each script
    # leads by what it leads its own script by
    rng = np.random.default_rng(0)
    en, zh = rng.normal(0.80, 0.01, 200), rng.normal(0.90, 0.01, 200)
    en[7] += 0.08  # 8 deviations above its script's mean
    zh[3] += 0.06  # 6 above its own, and the highest cosine of all
    scores = np.concatenate([en, zh])
    cjk = np.array([False] * 200 + [True] * 200)
    got = calibrate(scores, cjk)
    assert int(np.argmax(scores)) == 203 and int(np.argmax(got)) == 7
    one = calibrate(scores[:200], cjk[:200])  # one script: the order is the cosine's
    assert list(np.argsort(-one)) == list(np.argsort(-scores[:200]))


def test_a_script_with_few_units_is_drawn_to_the_overall_mean() -> None:
    scores = np.array([0.8] * 100 + [0.9])
    cjk = np.array([False] * 100 + [True])
    assert calibrate(scores, cjk)[-1] > 0  # alone in its script it is not its own mean


def unit(key: str, ordinal: int, kind: str, vec: list[float], passages: int = 0) -> EmbeddedUnit:
    v = np.zeros(DIM, np.float32)
    v[: len(vec)] = vec
    v /= np.linalg.norm(v)
    return key, f"{key}.md", kind, key.upper(), "", ordinal, False, passages, v.tobytes()


def test_matrix_gives_the_best_records_of_the_kinds_with_the_second_unit_counted() -> None:
    # "two" has the nearest unit, but its other one is far: "one", whose only unit is a little less near, leads
    rows = [unit("one", 0, "session", [1, 0.15]), unit("two", 0, "session", [1, 0.1]), unit("two", 1, "session", [0, 1]),
            unit("b", 0, "board", [0.2, 1])] + [unit(f"far{i}", 0, "session", [0.1, 1]) for i in range(10)]
    m = Matrix(rows)
    q = np.zeros(DIM, np.float32)
    q[0] = 1
    got = m.top(q, ["session", "board"], 2)
    assert [(f.key, f.kind) for f in got] == [("one", "session"), ("two", "session")]
    assert [f.key for f in m.top(q, ["board"], 2)] == ["b"]
    scores = calibrate(m.vectors @ q, m.cjk)
    two = next(f for f in got if f.key == "two")
    assert scores[1] > scores[0] and two.ordinal == 0
    assert two.score == pytest.approx(float(scores[1] + SECOND * scores[2]) / (1 + SECOND))
    assert not any(f.partial for f in got)


def test_matrix_names_the_records_known_by_their_head_alone() -> None:
    rows = [unit("whole", 0, "session", [1, 0.1], passages=1), unit("whole", 1, "session", [1, 0.2], passages=1),
            unit("short", 0, "session", [1, 0.3]), unit("headonly", 0, "session", [1, 0.4], passages=3)]
    q = np.zeros(DIM, np.float32)
    q[0] = 1
    got = {f.key: f.partial for f in Matrix(rows).top(q, ["session"], 3)}
    assert got == {"whole": False, "short": False, "headonly": True}


def test_a_pack_orders_passages_by_their_own_and_their_sessions_relevance() -> None:
    from kbsync.retrieval.contextfiles import _passages
    from kbsync.retrieval.db import Row
    from kbsync.retrieval.passages import Passage

    def row(key: str, *scored: tuple[float, str]) -> Row:
        return Row(key, f"{key}.md", "session", key.upper(), "", (), "", "", "", "2025-01-01", "", {},
                   passages=tuple((s, Passage(i, "结论", t)) for i, (s, t) in enumerate(scored)))

    a, b = row("a", (10.0, "a best"), (2.0, "a other")), row("b", (9.0, "b best"))
    order = [Hit("sessions", 1, "B", key="b", score=1.0), Hit("sessions", 2, "A", key="a", score=0.2),
             Hit("sessions", 3, "C", key="c", score=0.1, heading="结论", passage="c by meaning")]
    c = row("c")
    got = _passages(order, [a, b], {"a": a, "b": b, "c": c})
    # b best: 9/10 + 0.5 x 1 = 1.4; a best: 1 + 0.5 x 0.2 = 1.1; a other: 0.2 + 0.1; then c, found by meaning only
    assert [p.text for p in got] == ["b best", "a best", "a other", "c by meaning"]
    assert got[-1].relpath == "c.md" and got[-1].heading == "结论"
