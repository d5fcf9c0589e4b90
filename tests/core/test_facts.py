"""The memory entry format (kbsync.core.facts) and what a settled conflict leaves (kbsync.core.conflictmerge)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kbsync.config import Config
from kbsync.core import facts
from kbsync.core.conflictmerge import kept
from kbsync.core.repair import repair_text
from kbsync.core.validate import validate_text

HAND = "# 长期事实\n\n- 语言: 中文\n  (since 2024)\n* **Owner**：王五\n- 会议 10:30 每周一\nplain line\n"


@given(st.text(alphabet="-*+ :：ab\n\t#x", max_size=80))
def test_parsing_keeps_every_character(text: str) -> None:
    assert facts.parse(text).render() == text


def test_keys_are_found_in_hand_edits() -> None:
    found = {f.key: f.value for f in facts.parse(HAND).facts()}
    assert found == {"语言": "中文", "owner": "王五", "会议 10:30 每周一": ""}
    assert facts.parse(HAND).facts()[0].raw == "- 语言: 中文\n  (since 2024)\n"


def test_set_replaces_in_place_and_appends_after_the_last_fact() -> None:
    text, action = facts.set_fact(HAND, "OWNER", "李四", "# h\n")
    assert action == "replaced" and "- OWNER: 李四\n- 会议" in text and "王五" not in text
    text, action = facts.set_fact(HAND, "tone", "brief", "# h\n")
    assert action == "added" and text.endswith("- 会议 10:30 每周一\n- tone: brief\nplain line\n")
    assert facts.set_fact("- a: 1\n", "a", "1", "# h\n") == ("- a: 1\n", "unchanged")
    assert facts.set_fact("", "a", "1", "# h\n") == ("# h\n- a: 1\n", "added")
    assert facts.forget(HAND, "语言") == (HAND.replace("- 语言: 中文\n  (since 2024)\n", ""), 1)


@pytest.mark.parametrize("key", ["", "a: b", "x\ny", "- dash", "a：b"])
def test_bad_keys_are_refused(key: str) -> None:
    with pytest.raises(ValueError):
        facts.check_key(key)


def test_validate_and_repair_know_the_format() -> None:
    findings = validate_text("memory/entities/acme.md", HAND + "- 语言: 英文\n", Config())
    assert [(f.line, f.level) for f in findings] == [(7, "error"), (8, "warning")]
    fixed = repair_text("memory/facts.md", HAND, Config())
    assert fixed.text == HAND.replace("plain line", "- plain line") and fixed.findings == []
    assert repair_text("memory/facts.md", fixed.text, Config()).text == fixed.text


def test_entity_slugs_are_file_safe() -> None:
    assert facts.entity_slug("Project Alpha") == "project-alpha"
    assert facts.entity_slug("王五") == "王五"
    assert facts.entity_slug("../../etc/passwd") == "etcpasswd"
    with pytest.raises(ValueError):
        facts.entity_slug("///")


def test_settling_entry_conflicts() -> None:
    theirs, mine = "# F\n\n- a: 1\n- b: 2\n", "# F\n\n- a: 9\n- c: 3\n"
    assert kept("memory/facts.md", theirs, mine, "theirs") == theirs
    assert kept("memory/facts.md", theirs, mine, "mine") == "# F\n\n- a: 9\n- b: 2\n- c: 3\n"
    both = kept("memory/facts.md", theirs, mine, "both")
    assert both == "# F\n\n- a: 1\n  9\n- b: 2\n- c: 3\n"  # one key, one fact: both values kept in it
    assert not [f for f in facts.findings("memory/facts.md", both) if f.level != "info"]
    assert kept("artifacts/x.md", "old\n", "new\n", "mine") == "new\n"
    with pytest.raises(ValueError):
        kept("artifacts/x.md", "old\n", "new\n", "both")
