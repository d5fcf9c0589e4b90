"""kbsync.core.highlight: the query's words marked in a result."""

from __future__ import annotations

from kbsync.core.highlight import Segment, mark, pieces, snippet


def _marked(segments: list[Segment]) -> list[str]:
    return [s.text for s in segments if s.marked]


def test_words_are_marked_case_insensitively_and_the_text_is_kept_whole() -> None:
    text = "Deploy failed; the deploy lock stayed"
    segments = mark(text, ["deploy"])
    assert "".join(s.text for s in segments) == text
    assert _marked(segments) == ["Deploy", "deploy"]


def test_chinese_and_mixed_terms_are_matched_piece_by_piece() -> None:
    assert pieces(["合同deploy"]) == ["deploy", "合同"]
    assert _marked(mark("审查合同后再 deploy 到生产", ["合同deploy"])) == ["合同", "deploy"]


def test_overlapping_matches_merge_and_no_terms_mark_nothing() -> None:
    assert _marked(mark("合同风险", ["合同", "同风"])) == ["合同风"]
    assert mark("plain", []) == [Segment("plain", False)]
    assert mark("", ["x"]) == [Segment("", False)]


def test_a_snippet_is_cut_around_the_first_match() -> None:
    text = "开头。" + "无关的文字 " * 60 + "这里提到合同风险。" + " 结尾" * 40
    cut = snippet(text, ["合同"], width=60)
    assert "合同" in cut and cut.startswith("…") and cut.endswith("…") and len(cut) <= 62
    assert snippet("short  text\n here", ["x"]) == "short text here"
