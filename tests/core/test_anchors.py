"""Prefixes that begin every match of a pattern: what the instruction detector tries its rules at."""

from __future__ import annotations

import json
import re
from pathlib import Path

from kbsync.core.anchors import prefixes
from kbsync.core.injectionrules import RULES
from kbsync.core.normalize import fold

DATA = Path(__file__).resolve().parents[1] / "data"


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
