"""The matches of a regex that opens with a lazy run before a choice of words, found without trying every position. Pure.

gitleaks' generic rule opens with `[\\w.-]{0,50}?(?:access|auth|...|token)`: searched position by position, the
lazy run looks up to fifty characters ahead at each one, and in prose whose every character is a word character
(Chinese) that is fifty steps a position. A match of such a pattern can only begin at most N characters before
a place where the choice matches, so `finditer(regex, text, lo, hi)` finds those places with the choice alone
(compiled with the pattern's own flags: the same case rules), and tries the whole pattern only at the positions
up to N before each, in order, going on after each match's end: exactly what `re.finditer` finds (the pattern
opens with no lookbehind, `\\b` or `^`, so a match tried at a position is the match a search finds there).
Where the caller knows already where some words occur (the secret scan's keyword pass), `places` gives those
positions instead of a search of the choice; `covers` tells when that is exact: every match of the choice begins
with one of the words, and the text holds no character that `re` matches case-insensitively to an ASCII letter
but a lower-casing does not turn into it (CASE_TWINS).
A pattern of any other shape, or one whose choice can match an empty string, is searched as it is.
"""

from __future__ import annotations

import functools
import re
import warnings
from typing import Final, Iterable, Iterator

with warnings.catch_warnings():  # the parser `re` itself uses, under its documented older name
    warnings.simplefilter("ignore", DeprecationWarning)
    import sre_parse

from kbsync.core.detect import anchors

# The characters beyond ASCII that `re` matches case-insensitively to an ASCII letter (İ, ı, ſ, the Kelvin sign).
CASE_TWINS: Final = "\u0130\u0131\u017f\u212a"
CHOICE_LEN: Final = 64  # how far the words that begin every match of a choice are read
# `(?flags)` and then `[class]{0,N}?`: the lazy run, and where the group after it starts
_LEAD: Final = re.compile(r"(\(\?[aiLmsux]+\))?\[(?:\\.|[^\]\\])+\]\{0,(\d+)\}\?(?=\(\?:)")


@functools.cache
def _split(regex: str) -> tuple[re.Pattern[str], re.Pattern[str] | None, int]:
    """The compiled pattern, the choice after its lazy run (compiled with its flags; None when the pattern
    has no lazy lead) and the run's longest length."""
    whole = re.compile(regex)
    lead = _LEAD.match(regex)
    choice = (lead.group(1) or "") + group if lead and (group := _group(regex, lead.end())) else None
    if lead is None or choice is None or sre_parse.parse(choice).getwidth()[0] == 0:
        return whole, None, 0
    return whole, re.compile(choice), int(lead.group(2))


def _group(regex: str, at: int) -> str | None:
    """The parenthesised group that opens at `regex[at]`, up to its closing parenthesis (a parenthesis inside a
    class or escaped does not count); None when it never closes."""
    depth, i = 0, at
    while i < len(regex):
        c = regex[i]
        if c == "[":
            i = _class_end(regex, i)
            continue
        depth += (c == "(") - (c == ")")
        i += 2 if c == "\\" else 1
        if depth == 0:
            return regex[at:i]
    return None


def _class_end(regex: str, at: int) -> int:
    """Where the class that opens at `regex[at]` ends (past its `]`; a `]` first in it, or after `^`, is a member)."""
    i = at + 1 + (regex[at + 1:at + 2] == "^")
    i += regex[i:i + 1] == "]"
    while i < len(regex) and regex[i] != "]":
        i += 2 if regex[i] == "\\" else 1
    return i + 1


@functools.cache
def covers(regex: str, words: frozenset[str]) -> bool:
    """Whether every match of the choice after the lazy run of `regex` begins with one of `words` (lower case) in
    the lower-cased text: then the positions of those words are a superset of where the choice matches."""
    choice = _split(regex)[1]
    found = anchors.prefixes(choice.pattern, CHOICE_LEN) if choice else None
    return found is not None and all(any(p.startswith(w) for w in words) for p in found)


def has_twins(text: str) -> bool:
    return any(c in text for c in CASE_TWINS)


def finditer(regex: str, text: str, lo: int, hi: int, places: list[int] | None = None) -> Iterator[re.Match[str]]:
    """What `re.compile(regex).finditer(text, lo, hi)` finds, in order. `places`: positions, in order, where the
    choice after the lazy run may match (a superset: see `covers`); found by the choice's search when None."""
    whole, choice, longest = _split(regex)
    if choice is None:
        yield from whole.finditer(text, lo, hi)
        return
    pos = lo
    at_choice = _found(choice, text, lo, hi) if places is None else places
    for start, end in _spans(at_choice, longest, lo, hi):
        for at in range(max(start, pos), end):
            if at >= pos and (m := whole.match(text, at, hi)):
                pos = m.end()  # never empty: it holds a match of the choice
                yield m


def _found(choice: re.Pattern[str], text: str, lo: int, hi: int) -> Iterator[int]:
    """Every position in [lo, hi) where `choice` matches (overlapping ones too)."""
    m = choice.search(text, lo, hi)
    while m:
        yield m.start()
        m = choice.search(text, m.start() + 1, hi)


def _spans(places: Iterable[int], longest: int, lo: int, hi: int) -> Iterator[tuple[int, int]]:
    """Merged spans [start, end) of the positions in [lo, hi) up to `longest` before each of `places` (in order)."""
    span: tuple[int, int] | None = None
    for at in places:
        if not lo <= at < hi:
            continue
        if span and at - longest <= span[1]:
            span = (span[0], at + 1)
        else:
            if span:
                yield span
            span = (max(lo, at - longest), at + 1)
    if span:
        yield span
