"""The board model: parse, render, validate, repair (pure)."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from helpers.board import HAND_EDITED, entry
from kbsync.core import board as B
from kbsync.core.findings import has_errors


def test_render_then_parse_gives_the_entry_back() -> None:
    e = entry()
    block = B.parse_entry(B.render_entry(e))
    assert block.entry == e
    assert block.notes == ()


def test_hand_edited_board_parses_and_round_trips_byte_stable() -> None:
    board = B.parse_board(HAND_EDITED)
    assert B.render_board(board) == HAND_EDITED
    first, second = (b.entry for b in board.entries())
    assert first.key == "重试要设上限@2025-05-02"
    assert (first.type, first.topic, first.confidence) == ("方法", "git", "medium")
    assert first.scenarios == ("推送失败", "网络抖动", "CI")
    assert first.core_content == "推送失败时不要无限重试。"
    assert second.scenarios == ("全文搜索",)
    assert second.status == "decaying"
    assert second.core_content == "rg is the default.\nMore lines."


def test_hand_edited_board_is_valid_and_not_rewritten_by_repair() -> None:
    assert not has_errors(B.validate_board(HAND_EDITED))
    assert B.validate_board(HAND_EDITED) == []
    assert B.repair_board(HAND_EDITED) == (HAND_EDITED, [])


def test_board_render_is_byte_stable_after_edits() -> None:
    text, _ = B.upsert(HAND_EDITED, entry())
    assert B.render_board(B.parse_board(text)) == text
    again, action = B.upsert(text, entry())
    assert (again, action) == (text, "unchanged")


def test_add_twice_changes_nothing_and_same_key_updates_in_place() -> None:
    text, action = B.upsert("", entry())
    assert action == "added"
    assert B.upsert(text, entry()) == (text, "unchanged")
    other, _ = B.upsert(text, entry(title="另一条"))
    updated, action = B.upsert(other, entry(summary="新的摘要"))
    assert action == "updated"
    keys = [b.entry.key for b in B.parse_board(updated).entries()]
    assert keys == ["发布前确认锁文件@2025-06-11", "另一条@2025-06-11"]
    assert B.parse_board(updated).entries()[0].entry.summary == "新的摘要"
    assert B.validate_board(updated) == []


def test_update_keeps_other_hand_edited_entries_verbatim() -> None:
    hand_first = B.parse_board(HAND_EDITED).entries()[0].raw
    text, _ = B.upsert(HAND_EDITED, entry(title="Tool pick", source_date="2025-01-01"))
    assert hand_first in text
    assert "- core content: rg is the default." not in text


def test_equal_entry_in_hand_formatting_is_unchanged() -> None:
    first = B.parse_board(HAND_EDITED).entries()[0].entry
    assert B.upsert(HAND_EDITED, first) == (HAND_EDITED, "unchanged")


def test_set_status_touches_only_the_status_line() -> None:
    text, changed = B.set_status(HAND_EDITED, "Tool pick@2025-01-01", "active")
    assert changed
    assert text == HAND_EDITED.replace("- status: decaying", "- status: active")
    inserted, _ = B.set_status(HAND_EDITED, "重试要设上限@2025-05-02", "decaying")
    assert "- 来源: sessions/2025-05-02/0930-1234567-推送.md\n- 状态: decaying\n" in inserted
    assert B.parse_board(inserted).entries()[0].entry.status == "decaying"


def test_validate_reports_each_problem_with_its_line() -> None:
    text = "## 长期说明\n\n## 长期趋势\n\n## 学习记录\n\n### 坏条目\n\n- 类型: 理论\n- 来源日期: 2025-13-01\n- 场景:\n\n核心内容:\n"
    found = B.validate_board(text)
    messages = [(f.line, f.level, f.message) for f in found]
    assert (9, "error", "类型 '理论' is not one of 观点, 方法, 踩坑, 工具") in messages
    assert (10, "error", "来源日期 '2025-13-01' is not a date YYYY-MM-DD") in messages
    assert any(line == 7 and "scenarios" in msg for line, _lvl, msg in messages)
    assert any(line == 7 and "core_content" in msg for line, _lvl, msg in messages)
    assert has_errors(found)


def test_duplicate_key_is_an_error() -> None:
    block = B.render_entry(entry())
    text = "## 长期说明\n\n## 长期趋势\n\n## 学习记录\n\n" + block + "\n" + block
    assert any("appears twice" in f.message and f.level == "error" for f in B.validate_board(text))


def test_repair_fixes_drift_and_missing_sections_losslessly_and_idempotently() -> None:
    text = "# 看板\n### 长期说明：第一阶段\n说明\n\n## 学习记录\n\n### A\n类型：method\n- 来源日期：2025/6/1\n- confidence: 高\n"
    repaired, fixes = B.repair_board(text)
    assert len(fixes) == 5
    assert "## 长期说明\n第一阶段\n说明\n\n## 长期趋势\n\n## 学习记录\n" in repaired
    assert "类型：方法\n- 来源日期：2025-06-01\n- confidence: high\n" in repaired
    assert B.repair_board(repaired) == (repaired, [])
    assert not any(f.message.startswith("heading") or "missing" in f.message and "section" in f.message
                   for f in B.validate_board(repaired))


def test_repair_of_empty_text_builds_the_three_sections() -> None:
    repaired, _ = B.repair_board("")
    assert repaired == "## 长期说明\n\n## 长期趋势\n\n## 学习记录\n"


def test_headings_inside_code_fences_are_content() -> None:
    e = entry(core_content="```\n## 长期趋势\n### not an entry\n```")
    text, _ = B.upsert("", e)
    board = B.parse_board(text)
    assert [b.entry for b in board.entries()] == [e]


def test_keys_split_at_the_last_at_sign() -> None:
    assert B.split_key("a@b@2025-01-01") == ("a@b", "2025-01-01")


def test_entry_from_dict_lists_every_problem() -> None:
    got, problems = B.entry_from_dict({"title": "t", "type": "x", "scenarios": [], "summary": "s" * 101,
                                        "topic": "t", "core_content": "c", "source": "s",
                                        "source_date": "2025-1-1", "confidence": "sure"})
    assert got is None
    assert len(problems) == 5, problems


_text = st.text(alphabet=st.sampled_from(list("#-: ：\n\r`~ab长期说明学习记录场景类型*")), max_size=200)
_line = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1, max_size=30)


@settings(max_examples=150, deadline=None)
@given(_text)
@example("```")  # a fence left open: the sections added after it were inside it, and added again each time
@example("x\n~~~\n```\n")
def test_any_text_round_trips_and_repair_is_idempotent(text: str) -> None:
    assert B.render_board(B.parse_board(text)) == text
    once, _ = B.repair_board(text)
    assert B.repair_board(once)[0] == once


@settings(max_examples=100, deadline=None)
@given(title=_line.filter(lambda s: s.strip() == s and not s.startswith("#")),
       summary=_line.filter(lambda s: s.strip() == s),
       scen=st.lists(_line.filter(lambda s: s.strip() == s and not any(c in s for c in ";；、,，")), min_size=1, max_size=3))
def test_rendered_entries_parse_back(title: str, summary: str, scen: list[str]) -> None:
    e = entry(title=title, summary=summary, scenarios=tuple(scen))
    text, _ = B.upsert("", e)
    assert B.parse_board(text).find(e.key) is not None
    assert B.parse_board(text).find(e.key).entry == e  # type: ignore[union-attr]


def test_a_fence_left_open_is_closed_before_the_missing_sections_are_added() -> None:
    once, fixes = B.repair_board("笔记\n```\ncode")
    assert once.startswith("笔记\n```\ncode\n```\n") and [s.name for s in B.parse_board(once).sections][-3:] == list(B.BOARD_SECTIONS)
    assert fixes[0] == "line 2: closed the code fence left open to the end"
    assert B.repair_board(once) == (once, [])


# ---- what an entry's fields may form in the board file -----------------------------------------------

TRICKY_CORES = [
    "### 伪条目\n- 类型: 方法",
    "# 一级\n## 学习记录\n###### 六级",
    "   ### 缩进的标题",
    "```\n代码没有关上",
    "~~~\n## 在代码里\n~~~\n## 在代码外",
    "a\u2028### 换行符\u2029## 段落符\x85### NEL",
    "<<<<<<< HEAD\n=======\n>>>>>>> theirs",
]


@pytest.mark.parametrize("core", TRICKY_CORES)
def test_core_content_never_forms_a_heading_or_leaves_a_fence_open(core: str) -> None:
    from helpers.board import payload
    from kbsync.core.board import entry_from_dict, parse_board, upsert, validate_board
    from kbsync.core.boardentry import safe_core

    first, problems = entry_from_dict(payload(core_content=core))
    assert first is not None, problems
    later, _ = entry_from_dict(payload(title="后来的"))
    assert later is not None
    text = upsert(upsert("", first)[0], later)[0]
    assert [b.entry.title for b in parse_board(text).entries()] == [first.title, "后来的"]
    assert [f for f in validate_board(text) if f.level == "error"] == []
    assert safe_core(safe_core(core)) == safe_core(core)
    assert safe_core(core).replace("\\", "").startswith(core)  # no character removed
