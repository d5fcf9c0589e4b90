"""Prefixes that begin every match of a pattern: what the instruction detector tries its rules at."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kbsync.core.detect import anchors
from kbsync.core.detect.anchors import prefixes
from kbsync.core.detect.injectionrules import RULES
from kbsync.core.detect.normalize import fold

DATA = Path(__file__).resolve().parents[2] / "data"


def test_prefixes_pass_over_zero_width_items_and_follow_groups_choices_and_optional_parts() -> None:
    assert prefixes(r"\b(?:Ignore|skip)\s+all") == {"igno", "skip"}  # cut at MAX_LEN (4) characters
    assert prefixes(r"(?<![a-z])(?:the )?rules?") == {"the ", "rule"}
    assert prefixes(r"[.!?]\s*do") == {".", "!", "?", ".do", "!do", "?do"}  # a superset does no harm
    assert prefixes(r"e-?mail") == {"e-ma", "emai"}  # an optional part is followed by what comes after it
    assert prefixes(r"passw(?:or)?d", 12) == {"password", "passwd"}  # prefixes longer than MAX_LEN when asked


def test_a_pattern_that_may_begin_with_a_class_or_a_wildcard_has_none() -> None:
    assert prefixes(r"\s+ignore") is None
    assert prefixes(r"(?:ignore|.)") is None
    assert prefixes(r"x?") is None


def test_every_match_of_every_rule_begins_with_one_of_its_prefixes() -> None:
    texts = [json.loads(line)["text"] for name in ("injection_tuning.jsonl", "injection_heldout.jsonl")
             for line in (DATA / name).read_text(encoding="utf-8").splitlines() if line.strip()]
    folded = [fold(t).text for t in texts]
    matched = 0
    for rule in RULES:
        starts = prefixes(rule.regex)
        if starts is None:
            continue
        pattern = re.compile(rule.regex, re.IGNORECASE)
        for text in folded:
            for m in pattern.finditer(text):
                matched += 1
                assert any(text.lower().startswith(p, m.start()) for p in starts), (rule.regex[:60], m.group())
    assert matched > 500


def test_the_stored_table_is_the_one_the_rules_give() -> None:
    """kbsync/data/anchors.json holds `starts` of every rule, made from the rules and anchors.py as they are."""
    regexes = [rule.regex for rule in RULES]
    stored = json.loads(anchors.STORE.read_text(encoding="utf-8"))
    message = "kbsync/data/anchors.json is out of date: run scripts/anchors"
    assert stored["made"].split()[0] == anchors._made(regexes).split()[0], message
    assert [None if s is None else frozenset(s) for s in stored["starts"]] == [anchors.starts(r) for r in regexes], message
    if stored["made"] == anchors._made(regexes):
        assert anchors.STORE.read_text(encoding="utf-8") == anchors.render(regexes), message


def test_the_table_is_taken_from_the_store_only_when_it_was_made_from_the_same_patterns_and_code(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    regexes = [r"ignore\s+all", r"(?:skip|drop) it", r"\s+x"]
    worked_out = (frozenset({"igno"}), frozenset({"skip", "drop"}), None)
    store = tmp_path / "anchors.json"
    monkeypatch.setattr(anchors, "STORE", store)
    assert anchors.table(regexes) == worked_out  # no store
    store.write_text(anchors.render(regexes), encoding="utf-8")
    assert anchors.table(regexes) == worked_out
    planted = {"made": anchors._made(regexes), "starts": [["zzzz"], None, None]}
    store.write_text(json.dumps(planted), encoding="utf-8")
    assert anchors.table(regexes) == (frozenset({"zzzz"}), None, None)  # taken as stored when made from the same
    assert anchors.table([*regexes[:2], r"\s+y"]) == (*worked_out[:2], None)  # another pattern: worked out
    store.write_text(json.dumps({**planted, "made": planted["made"].replace("python", "python 0.0 was")}),
                     encoding="utf-8")
    assert anchors.table(regexes) == worked_out  # another Python or Unicode version: worked out
    for rows in ([["zzzz"], None], [["zzzz"], None, [1]], [["zzzz"], None, [""]], "zzzz"):  # not one row a pattern
        store.write_text(json.dumps({**planted, "starts": rows}), encoding="utf-8")
        assert anchors.table(regexes) == worked_out
    store.write_text("{not json", encoding="utf-8")
    assert anchors.table(regexes) == worked_out


def test_starts_are_the_prefixes_worth_looking_for() -> None:
    assert anchors.starts(r"(?:ab|x)") is None  # a single ASCII character occurs everywhere
    assert anchors.starts(r"(?:ig|ign|skip)") == {"ig", "skip"}  # where `ign` occurs, `ig` does too
    assert anchors.starts(r"\s+x") is None
