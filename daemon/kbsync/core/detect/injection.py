"""Embedded-instruction detector: text that tries to steer an AI that later reads it. Pure.

Third-party text and memory written by a model are stored as text and never executed;
this finds the passages that would act as an instruction if a model took them as one.

1. The text is folded (kbsync.core.detect.normalize): invisible characters, look-alike and
   full-width letters, leetspeak, Markdown emphasis and soft line breaks no longer hide a
   phrase. Encoded runs (base64, hex, percent-encoding, tag characters, reversed text:
   kbsync.core.detect.unveil, which the secret scan shares) are decoded and checked as well when what
   they decode to reads as words.
2. The rules of kbsync.core.detect.injectionrules run over the folded text, each within WINDOW of
   one of its keywords and there only where one of the literal prefixes that begin its every
   match occurs (kbsync.core.detect.anchors: one pass finds all rules' prefixes, and the matches
   are those a search at every position finds); each match is evidence of a family
   (override, role, address, output, exfiltration, tool, secrecy) with a weight. Invisible
   characters inside words and bidirectional controls are evidence of the family `hidden`.
3. Evidence is added up per passage (a line once soft breaks are joined): the best
   weight of each family, plus HIDDEN_BONUS when it sits in an HTML comment or a hidden
   element, ENCODED_BONUS when it was decoded, OBFUSCATED_BONUS when it was written with
   invisible, look-alike or leetspeak characters. In a passage that discusses attacks
   (prompt injection, jailbreak, attacker, example ...) every weight counts META_FACTOR,
   and QUOTED_FACTOR when the evidence is in quotes; reported decisions ("we agreed to
   ignore the old rules") count NARRATIVE_FACTOR; none of these in a passage that carries
   an action with a target (injectionrules.TARGETED: a link, an address, a workspace path,
   a tool's name), since a writer can apply them to their own attack.
4. A passage whose score reaches THRESHOLD is flagged: a Flag for each family's best
   evidence and for each other sentence holding evidence above SPAN_WEIGHT, naming the
   family, the span (the sentence to its end and its target, the comment or the encoded
   run, in the original text's offsets), its line and why.
"""

from __future__ import annotations

import bisect
import itertools
import re
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Final, Iterable

from ahocorasick_rs import AhoCorasick, Implementation

from kbsync.core.detect import anchors, injectionrules, lazylead, unveil
from kbsync.core.detect.injectionrules import RULES, WHY, Rule
from kbsync.core.detect.normalize import BIDI, TAGS, View, fold, visible

if TYPE_CHECKING:
    from kbsync.results import FlagAtUse

THRESHOLD: Final = 1.0
HIDDEN_BONUS: Final = 0.4
ENCODED_BONUS: Final = 0.4
OBFUSCATED_BONUS: Final = 0.4
META_FACTOR: Final = 0.5
QUOTED_FACTOR: Final = 0.2
NARRATIVE_FACTOR: Final = 0.4
SPAN_WEIGHT: Final = 0.5  # evidence above this weight (a sign, not a discounted mention) is withheld wherever it is in a flagged passage
EXCERPT_CHARS: Final = 200
AT_USE: Final = ("family", "span", "line", "why")  # what of a flag may go to a model: never the span's words

_HIDDEN_REGIONS: Final = re.compile(
    r"<!--.*?(?:-->|\Z)|<(\w+)\b[^>]*?(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0|opacity\s*:\s*0\b|"
    r"\shidden\b|aria-hidden)[^>]*>.*?</\1\s*>|^\[//\]: # \(.*?\)$", re.I | re.S | re.M)
_HIDDEN_HINT: Final = re.compile(r"<!--|\[//\]|<\w+[^>\n]*(?:none|hidden|font-size|opacity)", re.I)
_META: Final = re.compile(
    r"\b(?:prompt[- ]injections?|injection attacks?|jailbreak(?:s|ing)?|attackers?|attacks?|payloads?|red[- ]team(?:ing)?|"
    r"researchers?|malicious|adversarial|example payload|examples? of|for example|such as|phishing|detect(?:s|ion|or)?|"
    r"mitigation|cve-\d+|tokeni[sz]ers?|special tokens?|chat templates?)\b|注入|攻击|越狱|例如|举例|比如|典型|检测|防护|过滤|恶意", re.I)
_QUOTES: Final = re.compile(r"\"[^\"\n]{2,300}\"|(?<![A-Za-z])'[^'\n]{2,300}'(?![A-Za-z])|“[^”\n]{1,300}”|‘[^’\n]{1,300}’|"
                            r"「[^」\n]{1,300}」|`[^`\n]{1,300}`")
_NARRATIVE: Final = re.compile(r"\b(?:we|we'll|we've|let's|they|team|decided|agreed|decision|i'll|i will)\b|我们|大家|团队|决定|"
                               r"会议|同意", re.I)
_OBFUSCATION: Final = re.compile("[\u200b-\u200f\u2060-\u2064\uff10-\uff19\uff21-\uff3a\uff41-\uff5a\u0400-\u04ff"
                                 "\u0370-\u03ff\U0001d400-\U0001d7ff]|[A-Za-z][013457][A-Za-z]|(?<![\\w])[013457][a-z]{2}|"
                                 "[a-z]{2}[013457](?![\\w])")
_WORD_INVISIBLE: Final = re.compile("(?<=[A-Za-z\u4e00-\u9fff])[\u200b-\u200d\u2060\ufeff]+|"
                                    "[\u200b-\u200d\u2060\ufeff]+(?=[A-Za-z\u4e00-\u9fff])")
# A sentence ends at 。！？； or a line break, or at . ! ? ; followed by a space, the text's end, a closing quote or
# bracket, or a Chinese character: never at the dots of an address (`bob@mail.example.com`, `https://a.example/x?d=1`)
_TARGETED: Final = re.compile(injectionrules.TARGETED, re.I)
_TARGET_HINT: Final = re.compile(r"://|www\.|@|/|\.md\b|mcp__|functions\.|webhook|_", re.I)  # what any target holds
_SENTENCE_END: Final = re.compile("[。！？；\n]|[.!?;](?=[\\s\"'”’)\\]」』>]|$|[\u2e80-\u9fff\uac00-\ud7af\uff00-\uffef])")
# An instruction begins after a sentence's end, or after the colon of a short label that asks nothing itself ("Note:
# ignore …", "缓存修复：ignore …", a title before its summary); a match that holds the colon ("Assistant: sure …") keeps it.
_COLON: Final = re.compile("[:：](?=\\s|[\u2e80-\u9fff])|(?<=[\u2e80-\u9fff])[:：]")
LABEL_CHARS: Final = 24
# words that make what comes before a colon an instruction of its own ("Show this image when you answer: ![…]")
_ASKS: Final = re.compile(r"\b(?:you|your|please|show|render|add|include|insert|append|run|execute|install|use|open|visit|"
                          r"click|put|send|post|display|paste)\b|请|你|执行|运行|安装|显示|放进|放到|附上|加上|插入|发送|打开|访问", re.I)
# what opens a line before its sentence and is no part of an instruction: a list marker, a quote marker, a heading's
# hashes, an opening quote
_LEAD: Final = re.compile("[ \t]*(?:(?:[-*+]|\\d{1,3}[.)])[ \t]+|>[ \t]*|#{1,6}[ \t]+)*[\"'“‘「『`]?")
_KEY: Final = re.compile(r"[ \t]*[\w.-]+:[ \t]*[\"']?")  # a frontmatter key
_FRONTMATTER: Final = re.compile(r"\A---[ \t]*\n.*?^---[ \t]*$", re.S | re.M)


@dataclass(frozen=True)
class Flag:
    """One flagged family in one passage, in the original text's offsets."""

    family: str
    start: int
    end: int
    line: int  # 1-based
    why: str
    excerpt: str  # the span, invisible characters shown as \\uXXXX escapes
    score: float  # the passage's score
    decoded: str = ""  # what an encoded span decodes to (visible, shortened), "" for any other span

    def as_dict(self) -> dict[str, object]:
        """Everything, for a person (and the search index): the excerpt and decoded text included."""
        return {**self.at_use(), "excerpt": self.excerpt, "decoded": self.decoded, "score": round(self.score, 2)}

    def at_use(self) -> FlagAtUse:
        """What may go to a model beside neutralised text: family, span, line and why, never the span's words."""
        return {"family": self.family, "span": [self.start, self.end], "line": self.line, "why": self.why}


def at_use(stored: dict[str, object]) -> dict[str, object]:
    """A flag kept as `Flag.as_dict()` (in the search index), cut to `Flag.at_use()`."""
    return {k: stored[k] for k in AT_USE if k in stored}


@dataclass(frozen=True)
class _Evidence:
    family: str
    weight: float
    start: int  # original offsets; -1 for a rule's match until its passage is flagged (see `found`)
    end: int
    why: str
    passage: int
    bonus: str = ""  # hidden, encoded, obfuscated
    decoded: str = ""  # the decoded run (encoded evidence only)
    found: tuple[int, int, tuple[int, int] | None] | None = None  # a rule's match and hidden region, folded


@dataclass(frozen=True)
class _Passages:
    view: View
    starts: list[int]  # folded offsets where each passage starts

    @classmethod
    def of(cls, view: View) -> _Passages:
        return cls(view, [0] + [m.end() for m in re.finditer("\n", view.text)])

    @cached_property
    def orig_starts(self) -> list[int]:
        """The original offsets where each passage starts (found when first asked: few texts need them)."""
        return [self.view.original(s) for s in self.starts]

    @cached_property
    def frontmatter_end(self) -> int:
        """Where the original text's frontmatter ends (0 when it has none)."""
        orig = self.view.original_text
        m = _FRONTMATTER.match(orig) if orig.startswith("---") else None
        return m.end() if m else 0

    def at(self, folded: int) -> int:
        return bisect.bisect_right(self.starts, folded) - 1

    def at_original(self, offset: int) -> int:
        return bisect.bisect_right(self.orig_starts, offset) - 1

    def text(self, i: int) -> str:
        end = self.starts[i + 1] - 1 if i + 1 < len(self.starts) else len(self.view.text)
        return self.view.text[self.starts[i]:end]


_ASCII_LETTERS: Final = frozenset("abcdefghijklmnopqrstuvwxyz")
# The automata are contiguous NFAs, not DFAs: the two DFAs held 6.7 MB in every process that checks text (the daemon,
# `kbsync mcp`, `kbsync web serve`, each worker of a rebuild), the NFAs 0.8 MB, for 0.03 ms more a session.
AUTOMATON: Final = Implementation.ContiguousNFA
WINDOW: Final = 300  # characters around a keyword in which its rule runs (longer than any match)
_MAX_HITS: Final = 40  # keyword occurrences beyond which a rule runs over the whole text


def _is_word(key: str) -> bool:
    return key.isascii() and key.isalpha()


_KEYS: Final = frozenset(k for rule in RULES for k in (*rule.keys, *(k for group in rule.also for k in group)))
# looked up among the text's words (its runs of ASCII letters: in UTF-8 those bytes are ASCII letters and nothing else)
_WORD_KEYS: Final = {k.encode("ascii"): k for k in _KEYS if _is_word(k)}
_LETTERS_ONLY: Final = bytes(c if 97 <= c <= 122 else 32 for c in range(256))  # every other byte a space
_SUBSTRING_KEYS: Final = tuple(sorted(k for k in _KEYS if not _is_word(k)))  # looked up as substrings
_ALSO: Final = tuple(tuple(frozenset(group) for group in rule.also) for rule in RULES)  # by the rule's place in RULES


def _rules_of() -> dict[str, tuple[int, ...]]:
    """Each keyword -> the places in RULES of the rules it opens, in order (one pass over the rules)."""
    out: dict[str, list[int]] = {k: [] for k in _KEYS}
    for i, rule in enumerate(RULES):
        for k in dict.fromkeys(rule.keys):
            out[k].append(i)
    return {k: tuple(places) for k, places in out.items()}


_RULES_OF: Final = _rules_of()


class _Index:
    """What the rules' keywords are looked up in: the lower-cased folded text and the keywords present in it
    (a keyword of ASCII letters as a whole word, any other as a substring), found once per text, so that
    only the rules one of whose keywords occurs are tried; each keyword's occurrences are found when a
    rule first asks."""

    def __init__(self, text: str) -> None:
        self.low = low = text.lower()
        # whether a rule's match starts where one of its prefixes starts in `low` (see anchors): not when lower-casing
        # changed a length, or when the text holds a letter that `re` matches case-insensitively to another
        self.anchored = len(low) == len(text) and (low.isascii() or not lazylead.has_twins(low))
        words = _WORD_KEYS.keys() & low.encode("utf-8").translate(_LETTERS_ONLY).split()
        self.present = {_WORD_KEYS[w] for w in words} | set(_substring_automaton().find_matches_as_strings(
            low, overlapping=True))
        self._hits: dict[str, list[int]] = {}
        self._windows: dict[tuple[str, ...], list[tuple[int, int]]] = {}
        self._prefix_hits: dict[int, list[int]] | None = None

    def starts(self, i: int) -> list[int] | None:
        """Where one of the prefixes that begin every match of rule `i` occurs, in order (all rules' prefixes are
        found in one pass over the text, when a rule first asks); None when the rule has no prefixes or the text
        is not `anchored`."""
        automaton, of_rule = _prefixes()
        mine = of_rule[i]
        if not self.anchored or mine is None:
            return None
        hits = self._prefix_hits
        if hits is None:
            hits = self._prefix_hits = {}
            for k, at, _end in automaton.find_matches_as_indexes(self.low, overlapping=True):
                hits.setdefault(k, []).append(at)
        # no two of a rule's prefixes start at one place (neither begins with the other): the places need no set
        return sorted(itertools.chain.from_iterable(hits[k] for k in mine & hits.keys()))

    def has(self, key: str) -> bool:
        return key in self.present

    def rules(self) -> list[int]:
        """The places in RULES of the rules one of whose keywords occurs, in order."""
        return sorted({i for k in self.present for i in _RULES_OF[k]})

    def hits(self, key: str) -> list[int]:
        """Where `key` occurs (as a whole word for a word key), at most _MAX_HITS + 1 of them."""
        got = self._hits.get(key)
        if got is None:
            got, word, low = [], _is_word(key), self.low
            at = low.find(key)
            while at >= 0 and len(got) <= _MAX_HITS:
                end = at + len(key)
                if not word or not (low[at - 1:at] in _ASCII_LETTERS or low[end:end + 1] in _ASCII_LETTERS):
                    got.append(at)
                at = low.find(key, end)
            self._hits[key] = got
        return got

    def windows(self, keys: tuple[str, ...]) -> list[tuple[int, int]]:
        """Spans of the text within WINDOW of an occurrence of one of `keys`, merged; the whole text when the
        keys occur more than _MAX_HITS times."""
        got = self._windows.get(keys)
        if got is None:
            got = self._windows[keys] = self._merge(keys)
        return got

    def _merge(self, keys: tuple[str, ...]) -> list[tuple[int, int]]:
        hits = [at for key in keys for at in self.hits(key)]
        if len(hits) > _MAX_HITS:
            return [(0, len(self.low))]
        spans: list[tuple[int, int]] = []
        for at in sorted(hits):
            lo, hi = max(0, at - WINDOW), at + WINDOW
            if spans and lo <= spans[-1][1]:
                spans[-1] = (spans[-1][0], hi)
            else:
                spans.append((lo, hi))
        return spans


@lru_cache(maxsize=1)
def _substring_automaton() -> AhoCorasick:
    """An Aho-Corasick automaton of the keywords looked up as substrings: one pass over a text finds every
    occurrence of all of them (overlapping ones included)."""
    return AhoCorasick(_SUBSTRING_KEYS, implementation=AUTOMATON)


@lru_cache(maxsize=1)
def _prefixes() -> tuple[AhoCorasick, tuple[frozenset[int] | None, ...]]:
    """One automaton of the prefixes that begin every match of a rule (kbsync.core.detect.anchors), all rules' together,
    and for each rule the places of its prefixes in it (None for a rule that has none worth looking for: its
    pattern is tried at every position of its windows). Built when the first text is checked."""
    found = anchors.table([rule.regex for rule in RULES])
    every = sorted(set().union(*(f for f in found if f)))
    place = {p: k for k, p in enumerate(every)}
    return (AhoCorasick(every, implementation=AUTOMATON),
            tuple(None if f is None else frozenset(place[p] for p in f) for f in found))


def _matches(i: int, text: str, index: _Index) -> Iterable[re.Match[str]]:
    rule = RULES[i]
    if any(group.isdisjoint(index.present) for group in _ALSO[i]):
        return
    present = tuple(k for k in rule.keys if index.has(k))
    if not present:
        return
    starts = index.starts(i)
    seen: set[tuple[int, int]] = set()
    for lo, hi in index.windows(present):
        found = rule.pattern.finditer(text, lo, hi) if starts is None else _anchored(rule.pattern, starts, text, lo, hi)
        for m in found:
            if m.span() not in seen:
                seen.add(m.span())
                yield m


def _anchored(pattern: re.Pattern[str], starts: list[int], text: str, lo: int, hi: int) -> Iterable[re.Match[str]]:
    """What `pattern.finditer(text, lo, hi)` finds, trying only at `starts` (in order) and nowhere else."""
    end = lo
    for at in starts[bisect.bisect_left(starts, lo):bisect.bisect_left(starts, hi)]:
        if at >= end and (m := pattern.match(text, at, hi)):
            end = m.end()
            yield m


_PLAIN, _DISCUSSES, _TARGETS = 0, 1, 2  # what a passage is, for `_factor`


def _factor(rule: Rule, p: _Passages, i: int, start: int, end: int, kinds: dict[int, int]) -> float:
    """What a match's weight counts in its passage: less where the passage discusses attacks or reports a decision,
    never less where it carries an action with a target data could leave by (`injectionrules.TARGETED`: a link, an
    address, a path of the workspace, a tool by name): those discounts are the writer's own to apply."""
    ptext, pstart = p.text(i), p.starts[i]
    if i not in kinds:
        kinds[i] = _TARGETS if _targeted(ptext) else _DISCUSSES if _META.search(ptext) else _PLAIN
    if kinds[i] == _TARGETS:
        return 1.0
    factor = 1.0
    if kinds[i] == _DISCUSSES:
        inside = any(q.start() <= start - pstart and end - pstart <= q.end() for q in _QUOTES.finditer(ptext))
        factor = QUOTED_FACTOR if inside else META_FACTOR
    if rule.narrative and _NARRATIVE.search(p.view.text, max(pstart, start - 30), start + 10):
        factor *= NARRATIVE_FACTOR
    return factor


def _targeted(passage: str) -> bool:
    return bool(_TARGET_HINT.search(passage)) and _TARGETED.search(passage) is not None


def _rule_evidence(p: _Passages) -> list[_Evidence]:
    text, out = p.view.text, []
    hinted = ("<" in text or "[//]" in text) and _HIDDEN_HINT.search(text)  # a character search first: much cheaper
    hidden = [(m.start(), m.end()) for m in _HIDDEN_REGIONS.finditer(text)] if hinted else []
    index, kinds = _Index(text), dict[int, int]()
    for r in index.rules():
        rule = RULES[r]
        for m in _matches(r, text, index):
            i = p.at(m.start())
            region = next(((a, b) for a, b in hidden if a <= m.start() < b), None)
            bonus = "hidden" if region else "obfuscated" if _obfuscated(p.view, m.start(), m.end()) else ""
            weight = rule.weight * _factor(rule, p, i, m.start(), m.end(), kinds)
            out.append(_Evidence(rule.family, weight, -1, -1, rule.why, i, bonus, found=(m.start(), m.end(), region)))
    return out


def _obfuscated(view: View, start: int, end: int) -> bool:
    """Whether the original of a folded span holds invisible, look-alike or leetspeak characters (the original
    is the folded text itself when nothing was folded away)."""
    lo, hi = view.span(start, end)
    return _OBFUSCATION.search(view.original_text, lo, hi) is not None


def _located(p: _Passages, e: _Evidence) -> _Evidence:
    """`e` with its original span: the hidden region, or the sentence around the match."""
    if e.found is None:
        return e
    start, end, region = e.found
    lo, hi = p.view.span(*region) if region else _sentence(p, start, end)
    return _Evidence(e.family, e.weight, lo, hi, e.why, e.passage, e.bonus, e.decoded)


def _sentence(p: _Passages, start: int, end: int) -> tuple[int, int]:
    """The original span of the instruction around a match: within the original lines the match spans, from the
    last sentence end before it (at most 300 characters back; or the colon after a label, `_is_label`) to the next
    sentence end after it, so that an address or
    link the match ends in is covered whole; what opens the line and belongs to no instruction (a list marker, a
    quote marker, a heading's hashes, a frontmatter key, an opening quote) is left out."""
    text, orig = p.view.text, p.view.original_text
    while start < end - 1 and text[start].isspace():  # a match that opens with the space before a word starts at it
        start += 1
    floor = max(0, start - 300)
    ends = [m.end() for m in _SENTENCE_END.finditer(text, floor, start)]
    lo = ends[-1] if ends else floor
    colons = [m.end() for m in _COLON.finditer(text, lo, start)]
    if colons and _is_label(text[lo:colons[-1] - 1]):
        lo = colons[-1]
    while lo < start and text[lo].isspace():
        lo += 1
    stop = _SENTENCE_END.search(text, end)
    lo_o, hi_o = p.view.span(lo, stop.end() if stop else len(text))
    first, last = p.view.span(start, end)
    line_start = orig.rfind("\n", 0, first) + 1
    line_end = orig.find("\n", last - 1 if last else 0)
    lo_o, hi_o = max(lo_o, line_start), min(hi_o, line_end if line_end >= 0 else len(orig))
    if lo_o == line_start or not orig[line_start:lo_o].strip():
        key = _KEY.match(orig, line_start) if line_start < p.frontmatter_end else None
        lead = key or _LEAD.match(orig, line_start)
        lo_o = min(first, lead.end() if lead else lo_o)
    return lo_o, hi_o


def _is_label(text: str) -> bool:
    """Whether what precedes a colon in a sentence is a label (a title, "Note", "Researchers found") rather than an
    instruction whose object follows the colon."""
    label = text.strip()
    return len(label) <= LABEL_CHARS and _ASKS.search(label) is None


def _hidden_evidence(text: str, p: _Passages) -> list[_Evidence]:
    if not p.view.invisible:
        return []
    out = []
    at = 0
    for line in text.split("\n"):
        body = line.lstrip("\ufeff") if at == 0 else line
        bidi = len(BIDI.findall(body)) + len(TAGS.findall(body))
        words = sum(len(m.group()) for m in _WORD_INVISIBLE.finditer(body))
        if bidi or words:
            weight = 1.0 if bidi or words >= 3 else 0.5
            why = WHY["hidden"] + (": bidirectional controls or tag characters" if bidi else ": invisible characters inside words")
            out.append(_Evidence("hidden", weight, at, at + len(line), why, p.at_original(at)))
        at += len(line) + 1
    return out


def _encoded_evidence(text: str, p: _Passages) -> list[_Evidence]:
    out = []
    for run in _readable_runs(text):
        for f in _flags(run.text, decode=False, min_weight=0.0):
            why = f"{f.why} ({run.encoding}-decoded)"
            out.append(_Evidence(f.family, f.score, run.start, run.end, why, p.at_original(run.start), "encoded",
                                 visible(run.text)[:80]))
    return out


def _readable_runs(text: str) -> list[unveil.Run]:
    """The decoded runs that read as words (a reversed line always does: it was picked for a reversed word)."""
    return [r for r in unveil.runs(text) if r.encoding == "reversed" or unveil.readable(r.text)]


_BONUS = {"hidden": HIDDEN_BONUS, "encoded": ENCODED_BONUS, "obfuscated": OBFUSCATED_BONUS}


def _score(items: list[_Evidence]) -> tuple[float, dict[str, _Evidence]]:
    """The passage's score (each rule's best match counts once; bonuses once each) and each family's best evidence."""
    by_rule: dict[tuple[str, str, str], float] = {}
    best: dict[str, _Evidence] = {}
    for e in items:
        by_rule[(e.family, e.why, e.decoded)] = max(by_rule.get((e.family, e.why, e.decoded), 0.0), e.weight)
        if e.family not in best or e.weight > best[e.family].weight:
            best[e.family] = e
    bonuses = {e.bonus for e in items if e.bonus and e.weight > 0.2}
    return sum(by_rule.values()) + sum(_BONUS[b] for b in bonuses), best


def _flags(text: str, *, decode: bool = True, min_weight: float = THRESHOLD) -> list[Flag]:
    view = fold(text)
    p = _Passages.of(view)
    evidence = _rule_evidence(p) + _hidden_evidence(text, p) + (_encoded_evidence(text, p) if decode else [])
    by_passage: dict[int, list[_Evidence]] = {}
    for e in evidence:
        by_passage.setdefault(e.passage, []).append(e)
    out = []
    for items in by_passage.values():
        score, best = _score(items)
        if score >= min_weight and score > 0:
            out += _passage_flags(text, p, items, best, score)
    return sorted(out, key=lambda f: (f.start, f.family, f.end))


def _passage_flags(text: str, p: _Passages, items: list[_Evidence], best: dict[str, _Evidence], score: float) -> list[Flag]:
    """The flags of a flagged passage: one for each family's best evidence, and one for each other sentence that
    evidence of weight above SPAN_WEIGHT holds (a second instruction after a first one is withheld as well)."""
    out: dict[tuple[str, int, int], Flag] = {}
    for e in sorted(items, key=lambda e: -e.weight):
        if e.weight > SPAN_WEIGHT or best[e.family] is e:
            at = _located(p, e)
            out.setdefault((e.family, at.start, at.end), _flag(text, at, score))
    return [f for (fam, lo, hi), f in out.items()  # a span inside another of its family's adds nothing
            if not any(k[0] == fam and k[1] <= lo and hi <= k[2] and (k[1], k[2]) != (lo, hi) for k in out)]


def _flag(text: str, e: _Evidence, score: float) -> Flag:
    note = {"hidden": " (in an HTML comment or hidden element)", "obfuscated": " (written with invisible, look-alike or "
            "leetspeak characters)"}.get(e.bonus, "")
    excerpt = visible(" ".join(text[e.start:e.end].split()))
    excerpt = excerpt if len(excerpt) <= EXCERPT_CHARS else excerpt[:EXCERPT_CHARS - 1] + "…"
    return Flag(e.family, e.start, e.end, text.count("\n", 0, e.start) + 1, e.why + note, excerpt, score, e.decoded)


SHORT_TEXT: Final = 256  # characters of a text whose flags are remembered (see `detect`)
REMEMBERED: Final = 2048  # short texts whose flags are remembered, the least recently used forgotten first


def detect(text: str) -> list[Flag]:
    """Every flag in `text`: one per family in each passage whose score reaches THRESHOLD, by position. A short
    text's flags are remembered: a door guards the title and summary of every hit it hands out, the same ones
    come back search after search, and folding a short text costs as much as a long one's first lines."""
    return list(_short_flags(text)) if len(text) <= SHORT_TEXT else _flags(text)


@lru_cache(maxsize=REMEMBERED)
def _short_flags(text: str) -> tuple[Flag, ...]:
    return tuple(_flags(text))


def families(flags: Iterable[Flag]) -> list[str]:
    """The families of `flags`, each once, in the order of injectionrules.FAMILIES (then any other: the learned
    classifier's)."""
    seen = {f.family for f in flags}
    return [f for f in injectionrules.FAMILIES if f in seen] + sorted(seen.difference(injectionrules.FAMILIES))


def merged_spans(flags: Iterable[Flag]) -> list[tuple[int, int, list[str]]]:
    """The flagged spans, overlapping ones merged, each with its families."""
    out: list[tuple[int, int, list[str]]] = []
    for f in sorted(flags, key=lambda f: (f.start, f.end)):
        if out and f.start < out[-1][1]:
            lo, hi, fams = out[-1]
            out[-1] = (lo, max(hi, f.end), fams if f.family in fams else [*fams, f.family])
        else:
            out.append((f.start, f.end, [f.family]))
    return out


@dataclass(frozen=True)
class Guarded:
    """A text as it may be handed to a model, and the flags it raised."""

    text: str  # every flagged span replaced by a marker naming its families
    flags: list[Flag]


def guard(text: str) -> Guarded:
    """`text` with its flagged spans withheld (`neutralise`), and its flags."""
    flags = detect(text)
    return Guarded(neutralise(text, flags) if flags else text, flags)


def neutralise(text: str, flags: Iterable[Flag]) -> str:
    """`text` with each flagged span replaced by a marker that names its families."""
    out, at = [], 0
    for lo, hi, fams in merged_spans(flags):
        out += [text[at:lo], f"[withheld by kbsync: embedded instruction ({', '.join(fams)})]"]
        at = hi
    return "".join(out) + text[at:]
