"""A conflict shown entry by entry (board, memory files) or section by section (a session), and the file a
person's picks leave."""

from __future__ import annotations

import pytest

from helpers.board import entry
from kbsync.core import board
from kbsync.core.clashes import clashes, picked

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
