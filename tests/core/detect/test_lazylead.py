"""Patterns that open with a lazy run: the matches found where they can start are those of `re.finditer`."""

from __future__ import annotations

import random
import re
import string

import pytest

from kbsync.core.detect import lazylead, secrets

LEAD_RULES = ("generic-api-key", "alibaba-secret-key", "telegram-bot-api-token")
PIECES = ("access", "Auth", "api", "aPi", "API", "credential", "creds", "KEY", "passwd", "password", "secret", "Token",
          "alibaba", "telegr", "\u212aey", "credent\u0130al", "secretoken", "accessecret", " = ", ": ", "=>", "'", '"', "`",
          "\n", "\t", " ", ".", "-", "_", "中文的说明", "密钥", "abcdefghij0123456789", "Zx9Qw8Er7Ty6Ui5Op4", "AAAA", "==",
          "12345678:A", "/", "+", ";", "\\n")
VALUE = "".join(f"{c}{i % 10}" for i, c in enumerate(string.ascii_lowercase[:15], 1))  # 30 characters, built at run time
# whole assignments, so that the rules whose values have a fixed length match too
ASSIGNED = (VALUE, "alibaba_key = " + VALUE + " ", "telegram: 12345678:A" + string.ascii_lowercase[1:] + "_-0123456\n")


def _text(rng: random.Random) -> str:
    return "".join(rng.choice(PIECES + ASSIGNED) for _ in range(rng.randrange(1, 120)))


@pytest.mark.parametrize("rule_id", LEAD_RULES)
def test_the_matches_are_those_of_a_search_at_every_position(rule_id: str) -> None:
    regex = next(r.regex for r in secrets.default_rules().rules if r.id == rule_id)
    assert lazylead._split(regex)[1] is not None  # the rule has the lazy lead this is about
    rng, pattern, found = random.Random(rule_id), re.compile(regex), 0
    for _ in range(3000):
        text = _text(rng)
        lo = rng.randrange(len(text) + 1)
        hi = rng.randrange(lo, len(text) + 1)
        want = [(m.span(), m.groups()) for m in pattern.finditer(text, lo, hi)]
        assert [(m.span(), m.groups()) for m in lazylead.finditer(regex, text, lo, hi)] == want, (text, lo, hi)
        found += len(want)
    assert found > 50  # the texts do hold matches


@pytest.mark.parametrize("regex", [r"(?i)[\w.-]{0,5}?(?:a*)x", r"[\w]{0,5}?(?:ab|[)]c)\d", r"a+b", r"(?:x)[\w]{0,3}?(?:y)"])
def test_other_shapes_are_searched_as_they_are(regex: str) -> None:
    rng = random.Random(regex)
    for _ in range(500):
        text = "".join(rng.choice("abxy)c1 ") for _ in range(rng.randrange(30)))
        assert [m.span() for m in lazylead.finditer(regex, text, 0, len(text))] == \
            [m.span() for m in re.finditer(regex, text)]


def test_a_class_inside_the_choice_is_read_whole() -> None:
    assert lazylead._group("(?:a|[)(]|b)c", 0) == "(?:a|[)(]|b)"
    assert lazylead._group(r"(?:a|\)|[]x])c", 0) == r"(?:a|\)|[]x])"
    assert lazylead._group("(?:a", 0) is None


def _places(text: str, words: frozenset[str]) -> list[int]:
    low = text.lower()
    return sorted({i for w in words for i in range(len(low)) if low.startswith(w, i)})


@pytest.mark.parametrize("rule_id", LEAD_RULES)
def test_the_keywords_positions_serve_as_the_choices_where_no_case_twin_occurs(rule_id: str) -> None:
    rule = next(r for r in secrets.default_rules().rules if r.id == rule_id)
    assert lazylead.covers(rule.regex, rule.keywords)
    rng, pattern, found = random.Random(rule_id + "places"), re.compile(rule.regex), 0
    for _ in range(2000):
        text = _text(rng)
        if lazylead.has_twins(text):
            continue
        want = [(m.span(), m.groups()) for m in pattern.finditer(text)]
        got = lazylead.finditer(rule.regex, text, 0, len(text), _places(text, rule.keywords))
        assert [(m.span(), m.groups()) for m in got] == want, text
        found += len(want)
    assert found > 30


def test_the_case_twins_are_every_character_beyond_ascii_that_re_matches_to_an_ascii_letter() -> None:
    letter = re.compile("(?i)[a-z]")
    beyond = {chr(c) for c in range(128, 0x110000) if letter.match(chr(c)) and not chr(c).lower().isascii()}
    assert beyond | {"\u212a"} == set(lazylead.CASE_TWINS)
    assert not lazylead.covers(r"(?i)[\w]{0,9}?(?:passw(?:or)?d|tok)", frozenset({"password", "tok"}))
