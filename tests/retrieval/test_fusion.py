"""RRF against hand-computed fused lists, ties included."""

from __future__ import annotations

from fractions import Fraction

from kbsync.retrieval.fusion import Hit, make_rrf, rrf


def hits(source: str, *keys: str) -> tuple[str, list[Hit]]:
    return source, [Hit(source=source, rank=i, title=k.upper(), key=k) for i, k in enumerate(keys, start=1)]


def test_rrf_matches_hand_computed_scores() -> None:
    fused = rrf([hits("a", "x", "y", "z"), hits("b", "y", "w")], k=60)
    # y: 1/62 + 1/61; x: 1/61; w: 1/62; z: 1/63
    assert [f.key for f in fused] == ["y", "x", "w", "z"]
    assert fused[0].exact == Fraction(1, 62) + Fraction(1, 61)
    assert fused[0].score == float(Fraction(1, 62) + Fraction(1, 61))
    assert fused[0].sources == ("a", "b")
    assert fused[1].score == 1 / 61


def test_ties_broken_by_best_rank_then_source_order_then_key() -> None:
    # p: rank 1 in a and rank 3 in b  -> 1/61 + 1/63
    # q: rank 2 in a and rank 2 in b  -> 1/62 + 1/62 (smaller: 2/62 < 1/61+1/63)
    # r only in b at 1, s only in a at 1 is impossible (p is), so use a third source c.
    fused = rrf([hits("a", "p", "q"), hits("b", "r", "q", "p"), hits("c", "t")], k=60)
    keys = [f.key for f in fused]
    assert keys[:2] == ["p", "q"]
    # r (b rank 1) and t (c rank 1) tie on score and best rank: source order b before c.
    assert keys[2:] == ["r", "t"]


def test_ties_on_everything_fall_back_to_key() -> None:
    fused = rrf([("a", [Hit("a", 1, "B", key="b"), Hit("a", 2, "A", key="a")]),
                 ("b", [Hit("b", 1, "A", key="a"), Hit("b", 2, "B", key="b")])], k=60)
    assert [f.key for f in fused] == ["a", "b"]  # same sums, same best rank, same first source


def test_identity_is_key_then_path_then_url() -> None:
    fused = rrf([("a", [Hit("a", 1, "T", path="p.md")]), ("b", [Hit("b", 1, "T", path="p.md", url="http://x")]),
                 ("c", [Hit("c", 1, "U", url="http://x")])], k=1)
    assert [(f.key, f.sources) for f in fused] == [("p.md", ("a", "b")), ("http://x", ("c",))]
    assert fused[0].url == "http://x"


def test_duplicate_within_one_source_counts_once() -> None:
    fused = rrf([("a", [Hit("a", 1, "X", key="x"), Hit("a", 2, "X", key="x")])], k=60)
    assert fused[0].exact == Fraction(1, 61)


def test_k_is_configurable_and_swappable() -> None:
    fuse = make_rrf(0)
    fused = fuse([hits("a", "x", "y")])
    assert [f.score for f in fused] == [1.0, 0.5]


def test_empty_input() -> None:
    assert rrf([]) == []
    assert rrf([("a", [])]) == []


def test_a_weighted_source_counts_its_weight_times_one_vote() -> None:
    fused = rrf([hits("a", "x", "y"), hits("s", "y", "z")], k=60, weights={"s": Fraction(1, 2)})
    # x: 1/61; y: 1/62 + 1/2 * 1/61; z: 1/2 * 1/62
    assert [f.key for f in fused] == ["y", "x", "z"]
    assert fused[0].exact == Fraction(1, 62) + Fraction(1, 122) and fused[2].exact == Fraction(1, 124)
    assert make_rrf(60, {"s": Fraction(1, 2)})([hits("s", "z")])[0].exact == Fraction(1, 122)
