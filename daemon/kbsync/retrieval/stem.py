"""English word forms, pure: a query's word also matches the forms of it people write (camp, camps, camped,
camping; story, stories), so "where has she camped" finds the session that says "camping".

A word's stem is the first and last steps of Porter's algorithm (M. F. Porter, "An algorithm for suffix
stripping", 1980): plurals, -ed/-ing endings and a final e (dance, dancing), nothing else (-er, -ness,
-ation stay: they change what a word means more than they change its form). The index is not stemmed; a term stands for its forms (`forms`): the forms
made from its stem by adding those endings back, kept when they have the same stem. Search matches any of
them (kbsync.retrieval.text.match_term) and counts them as the term (kbsync.retrieval.relevance.Counts), and
the term's weight is the idf of the records holding any of them. Words of other scripts, words with digits
and words of fewer than MIN_LENGTH letters are their own only form.
"""

from __future__ import annotations

import functools
import re

MIN_LENGTH = 3
_WORD = re.compile(r"^[a-z]+$")
_DOUBLE_KEPT = frozenset("lsz")


def _consonant(word: str, i: int) -> bool:
    c = word[i]
    if c in "aeiou":
        return False
    if c == "y":
        return i == 0 or not _consonant(word, i - 1)
    return True


def _measure(stem: str) -> int:
    """Porter's m: the number of vowel-consonant sequences in `stem`."""
    m, vowel_seen = 0, False
    for i in range(len(stem)):
        if not _consonant(stem, i):
            vowel_seen = True
        elif vowel_seen:
            m, vowel_seen = m + 1, False
    return m


def _has_vowel(stem: str) -> bool:
    return any(not _consonant(stem, i) for i in range(len(stem)))


def _cvc(stem: str) -> bool:
    """Ends consonant-vowel-consonant, the last not w, x or y (hop, not hoop, not snow)."""
    n = len(stem)
    return (n >= 3 and _consonant(stem, n - 1) and not _consonant(stem, n - 2) and _consonant(stem, n - 3)
            and stem[-1] not in "wxy")


def _step1b_tail(stem: str) -> str:
    if stem.endswith(("at", "bl", "iz")):
        return stem + "e"
    if len(stem) >= 2 and stem[-1] == stem[-2] and _consonant(stem, len(stem) - 1) and stem[-1] not in _DOUBLE_KEPT:
        return stem[:-1]
    if _measure(stem) == 1 and _cvc(stem):
        return stem + "e"
    return stem


@functools.lru_cache(maxsize=4096)
def stem(word: str) -> str:
    """The stem of a folded word (Porter's steps 1 and 5a); the word itself when it is not one of lower-case a-z of at
    least MIN_LENGTH letters."""
    if len(word) < MIN_LENGTH or not _WORD.match(word):
        return word
    w = word
    if w.endswith("sses"):
        w = w[:-2]
    elif w.endswith("ies"):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    if w.endswith("eed"):
        if _measure(w[:-3]) > 0:
            w = w[:-1]
    elif w.endswith("ed") and _has_vowel(w[:-2]):
        w = _step1b_tail(w[:-2])
    elif w.endswith("ing") and _has_vowel(w[:-3]):
        w = _step1b_tail(w[:-3])
    if w.endswith("y") and _has_vowel(w[:-1]):
        w = w[:-1] + "i"
    if w.endswith("e") and (_measure(w[:-1]) > 1 or (_measure(w[:-1]) == 1 and not _cvc(w[:-1]))):
        w = w[:-1]
    return w


_ENDINGS = ("", "s", "es", "d", "ed", "ing")


@functools.lru_cache(maxsize=4096)
def forms(word: str) -> tuple[str, ...]:
    """The forms a folded word stands for in a search, itself first: the forms made from its stem by the endings
    step 1 removes that have the same stem (hikes: hike, hiked, hikes, hiking), added to the stem, to the stem
    with an e, and to a stem ending in e without it (hike: hik + ing; agree: agre + e + ing)."""
    if len(word) < MIN_LENGTH or not _WORD.match(word):
        return (word,)
    s = stem(word)
    bases = {s, s + "e"} | ({s[:-1]} if s.endswith("e") else set()) | ({s[:-1] + "y"} if s.endswith("i") else set())
    made = {b + e for b in bases for e in _ENDINGS}
    if _measure(s) == 1 and _cvc(s):  # hop: hopped, hopping
        made |= {s + s[-1] + e for e in ("ed", "ing")}
    if s.endswith("i"):
        made |= {s[:-1] + e for e in ("ies", "ied")}
    return (word, *sorted(f for f in made if f != word and len(f) >= MIN_LENGTH and stem(f) == s))
