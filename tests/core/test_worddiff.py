"""kbsync.core.worddiff: both versions side by side, changed words marked."""

from __future__ import annotations

from kbsync.core.worddiff import line_diff, tokens, word_marks


def _marked(segments: tuple[object, ...]) -> list[str]:
    return [s.text for s in segments if s.marked]  # type: ignore[attr-defined]


def test_a_changed_line_marks_only_the_words_that_differ() -> None:
    old, new = word_marks("retry three times then stop", "retry five times then stop")
    assert _marked(old) == ["three"] and _marked(new) == ["five"]
    assert "".join(s.text for s in new) == "retry five times then stop"


def test_chinese_is_compared_character_by_character() -> None:
    assert tokens("发布前检查") == ["发", "布", "前", "检", "查"]
    old, new = word_marks("发布前检查锁文件", "发布后检查锁文件")
    assert _marked(old) == ["前"] and _marked(new) == ["后"]


def test_every_line_of_both_versions_is_aligned() -> None:
    rows = line_diff("a\nb\nc\nd\n", "a\nB\nc\ne\nf\n")
    assert [r.kind for r in rows] == ["same", "changed", "same", "changed", "added"]
    assert [(r.old.number if r.old else None, r.new.number if r.new else None) for r in rows] == [
        (1, 1), (2, 2), (3, 3), (4, 4), (None, 5)]
    removed = line_diff("x\ny\n", "x\n")
    assert removed[1].kind == "removed" and removed[1].new is None and _marked(removed[1].old.segments) == ["y"]
    assert all(r.kind == "same" for r in line_diff("same\n", "same\n"))
