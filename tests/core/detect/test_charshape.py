"""Substring searches of a text's shape in place of class searches: the same places as the regexes they replace."""

from __future__ import annotations

import random
import re

from kbsync.core.detect import charshape, normalize

PIECES = ("I-g-n-o-r-e", "i g n o r e", "1gn0re", "d0 n0t t3ll", "**", "*", "***", "_", "__", "~~", "~", "-\n", "-\n  ",
          "忽 略 之 前", "·", "a·b·c·d", "→", "ａｂ", "，", "\u200b", "x", "ab3", "3ab", "a1", " ", "\n", "中文", "0x1f", "é",
          "\ud800", "𝐢", "2", "9z")


def _texts(seed: str, n: int = 3000) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(PIECES) for _ in range(rng.randrange(0, 40))) for _ in range(n)]


def test_a_shape_has_one_byte_for_each_character() -> None:
    tab = charshape.table({b"a": "ab", b"c": "\xe4"})
    assert charshape.shape(charshape.utf8("ab-中\ud800𝐢b"), tab) == b"aa c  a"


def test_the_marks_are_those_the_pattern_finds() -> None:
    for text in _texts("marks"):
        assert [m.span() for m in normalize._marks(text)] == [m.span() for m in normalize._MARKS.finditer(text)], text


def test_the_leetspeak_words_are_the_runs_around_each_digit_beside_a_letter() -> None:
    hint, run = re.compile(r"[013457](?:(?<=[A-Za-z][013457])|(?=[A-Za-z]))"), re.compile("[A-Za-z0-9]+")
    for text in _texts("leet"):
        want = sorted({next(r.span() for r in run.finditer(text) if r.start() <= m.start() < r.end())
                       for m in hint.finditer(text)})
        assert normalize._leet_words(charshape.shape(charshape.utf8(text), normalize._WORD_SHAPE)) == want, text


def test_the_spaced_hints_occur_in_the_shape_of_every_text_that_holds_their_pattern() -> None:
    patterns = (re.compile(r"[-. _*·][A-Za-z][-. _*·][A-Za-z][-. _*·]"), re.compile(" [\u4e00-\u9fff] [\u4e00-\u9fff] "))
    found = 0
    for text in _texts("spaced"):
        shape = charshape.shape(charshape.utf8(text), normalize._SPACED_SHAPE)
        for pattern, (hint, _spaced) in zip(patterns, normalize._SPACED):
            if pattern.search(text):
                found += 1
                assert hint in shape, text
    assert found > 100
