"""A conflict shown entry by entry (board, memory files) or section by section (a session), and the file a
person's picks leave."""

from __future__ import annotations

import pytest

from helpers.board import entry
from kbsync.core import board
from kbsync.core.clashes import by_hand, clashes, picked

FACTS = "memory/facts.md"


def _board(*entries: object) -> str:
    text = board.NEW_BOARD
    for e in entries:
        text = board.upsert(text, e)[0]  # type: ignore[arg-type]
    return text


def test_board_entries_side_by_side_with_their_changed_fields() -> None:
    theirs = _board(entry(title="甲", summary="旧"), entry(title="乙"))
    mine = _board(entry(title="甲", summary="新", confidence="low"), entry(title="丙"))
    got = {c.key: c for c in clashes("LEARNING_BOARD.md", theirs, mine)}
    assert set(got) == {"甲@2025-06-11", "丙@2025-06-11"}
    assert [f.name for f in got["甲@2025-06-11"].fields if f.changed] == ["summary", "confidence"]
    assert all(f.theirs is None for f in got["丙@2025-06-11"].fields)  # new in the copy
    kept = picked("LEARNING_BOARD.md", theirs, mine, {"甲@2025-06-11": "theirs", "丙@2025-06-11": "mine"})
    assert "- 摘要: 旧\n" in kept and "### 丙\n" in kept and "### 乙\n" in kept


def test_facts_one_by_one() -> None:
    theirs, mine = "# F\n\n- a: 1\n- b: 2\n", "# F\n\n- a: 9\n- c: 3\n"
    assert [(c.key, c.fields[0].theirs, c.fields[0].mine) for c in clashes(FACTS, theirs, mine)] == [
        ("a", "1", "9"), ("c", None, "3")]
    assert picked(FACTS, theirs, mine, {"a": "theirs", "c": "mine"}) == "# F\n\n- a: 1\n- b: 2\n- c: 3\n"
    assert picked(FACTS, theirs, mine, {"a": "theirs", "c": "theirs"}) == theirs
    with pytest.raises(ValueError):
        picked(FACTS, theirs, mine, {"zzz": "mine"})


def test_a_session_section_by_section_and_no_picks_for_it() -> None:
    head = "---\nid: 20250611-1432-a1b2c3d\nts: 2025-06-11T14:32:00+08:00\nstatus: {s}\n---\n\n"
    theirs = head.format(s="open") + "## 结论\n\n甲\n\n## 待办\n\n- x\n"
    mine = head.format(s="conflict") + "## 结论\n\n乙\n\n## 待办\n\n- x\n"
    got = clashes("sessions/2025-06-11/1432-a1b2c3d-t.md", theirs, mine)
    assert [(c.key, c.fields[0].theirs.strip(), c.fields[0].mine.strip(), c.pickable) for c in got] == [  # type: ignore[union-attr]
        ("结论", "甲", "乙", False)]
    with pytest.raises(ValueError):
        picked("sessions/2025-06-11/1432-a1b2c3d-t.md", theirs, mine, {})


def test_an_entry_edited_by_hand_is_checked_as_the_entry_form_checks_it() -> None:
    theirs = _board(entry(title="甲", summary="旧"), entry(title="乙"))
    mine = _board(entry(title="甲", summary="新"))
    clash = clashes("LEARNING_BOARD.md", theirs, mine)[0]
    assert clash.start.startswith("### 甲\n") and "- 摘要: 新\n" in clash.start  # an edit starts from mine
    edit = clash.start.replace("- 摘要: 新\n", "- 摘要: 新旧合一\n").replace("\n", "\r\n")  # as a browser sends it
    kept = picked("LEARNING_BOARD.md", theirs, mine, {"甲@2025-06-11": "edited"}, {"甲@2025-06-11": edit})
    assert "- 摘要: 新旧合一\n" in kept and "\r" not in kept and "### 乙\n" in kept and kept.count("### 甲\n") == 1
    for bad, says in ((clash.start.replace("### 甲", "### 丁"), "key"),
                      (clash.start.replace("- 置信度: high", "- 置信度: 很高"), "confidence"),
                      (clash.start.replace("- 类型: 踩坑\n", ""), "type")):
        with pytest.raises(ValueError, match=says):
            picked("LEARNING_BOARD.md", theirs, mine, {"甲@2025-06-11": "edited"}, {"甲@2025-06-11": bad})


def test_a_fact_edited_by_hand_keeps_its_key_and_stays_one_fact() -> None:
    theirs, mine = "# F\n\n- a: 1\n- b: 2\n", "# F\n\n- a: 9\n"
    assert clashes(FACTS, theirs, mine)[0].start == "- a: 9\n"
    assert picked(FACTS, theirs, mine, {"a": "edited"}, {"a": "- a: 1 或 9\n"}) == "# F\n\n- a: 1 或 9\n- b: 2\n"
    for bad in ("- z: 9\n", "- a: 9\n- b: 3\n", "随便写的\n- a: 9\n", ""):
        with pytest.raises(ValueError):
            picked(FACTS, theirs, mine, {"a": "edited"}, {"a": bad})


def test_a_whole_file_written_by_hand_is_taken_as_written_once_it_is_valid() -> None:
    head = "---\nid: 20250611-1432-a1b2c3d\nts: 2025-06-11T14:32:00+08:00\nstatus: {s}\n---\n\n## 结论\n\n甲乙\n"
    session = "sessions/2025-06-11/1432-a1b2c3d-t.md"
    assert by_hand(session, head.format(s="closed").replace("\n", "\r\n")) == head.format(s="closed")
    with pytest.raises(ValueError, match="status: conflict"):
        by_hand(session, head.format(s="conflict"))
    with pytest.raises(ValueError):
        by_hand(session, "---\nid: [\n---\n")
    assert by_hand("artifacts/plan.md", "# 计划\n\n随便\n") == "# 计划\n\n随便\n"
    for entries_file in ("LEARNING_BOARD.md", FACTS):
        with pytest.raises(ValueError, match="each entry"):
            by_hand(entries_file, "x\n")
