"""Secret scanner: gitleaks-style rules (kbsync/data/secret-rules.toml) over a file's text.

Pure: text in, findings out. A rule runs only where one of its keywords occurs
(case-insensitive), and then only over the lines around those occurrences, so a
large file with no keyword costs one lower-casing and a few substring searches.
A finding keeps only a masked preview (at most the first 4 characters) and a
fingerprint; the secret itself never leaves this module.

Opt-outs: a line holding an inline marker (`kbsync:allow`, or the markers the
rules file lists), and fingerprints listed in the committed `.kbsync-allow`.
"""

from __future__ import annotations

import functools
import hashlib
import math
import re
import tomllib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from kbsync.errors import ConfigError

RULES_FILE = Path(__file__).parent.parent / "data" / "secret-rules.toml"
ALLOW_FILE = ".kbsync-allow"
INLINE_MARKER = "kbsync:allow"
MASK = "********"
PREVIEW_CHARS = 4
BINARY_SNIFF = 8000  # bytes git itself looks at to call a file binary
_BEFORE = 256  # characters before a keyword where a match may start (OpenAI keys: ~90)
_AFTER = 512  # characters after a keyword a single-line match may reach (generic values: ~200)
_SELF_EXEMPT = ("secret-rules.toml", ALLOW_FILE)  # the rules themselves and the allowlist


@dataclass(frozen=True)
class SecretFinding:
    path: str
    line: int
    rule: str
    preview: str  # first characters of the secret, then a mask
    fingerprint: str  # `<rule>@<16 hex>`, what `.kbsync-allow` lists

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: secret ({self.rule}) {self.preview} [{self.fingerprint}]"


@dataclass(frozen=True)
class Rule:
    """One rule; its regexes are compiled the first time a keyword of the rule occurs (see `_re`)."""

    id: str
    regex: str
    keywords: frozenset[str]
    secret_group: int | None = None
    entropy: float | None = None
    multiline: bool = False
    allow_secret: tuple[str, ...] = ()
    allow_match: tuple[str, ...] = ()
    allow_line: tuple[str, ...] = ()
    stopwords: tuple[str, ...] = ()


@dataclass(frozen=True)
class RuleSet:
    rules: tuple[Rule, ...]
    allow_secret: tuple[str, ...]
    stopwords: tuple[str, ...]
    markers: tuple[str, ...]
    keyword_re: re.Pattern[str]  # any rule's keyword, in lower-cased text
    by_first: dict[str, tuple[str, ...]]  # first character -> keywords starting with it


# ---- rules ---------------------------------------------------------------------

@functools.cache
def _re(pattern: str) -> re.Pattern[str]:
    """A rule's regex, compiled on first use: most files hit no keyword of most rules, and compiling
    every rule up front would cost a short-lived process more than scanning."""
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ConfigError(f"bad regex {pattern[:40]!r} ({exc}); fix the rules file", path=str(RULES_FILE)) from exc


def _rule(data: dict[str, Any]) -> Rule:
    return Rule(
        id=str(data["id"]),
        regex=str(data["regex"]),
        keywords=frozenset(k.lower() for k in data.get("keywords", ())),
        secret_group=data.get("secret_group"),
        entropy=data.get("entropy"),
        multiline=r"[\s\S" in data["regex"],
        allow_secret=tuple(data.get("allowlist_regexes", ())),
        allow_match=tuple(data.get("allowlist_match_regexes", ())),
        allow_line=tuple(data.get("allowlist_line_regexes", ())),
        stopwords=tuple(w.lower() for w in data.get("stopwords", ())),
    )


def parse_rules(text: str) -> RuleSet:
    """A RuleSet from the rules file's TOML text."""
    data = tomllib.loads(text)
    glob = data.get("global_allowlist", {})
    rules = tuple(_rule(r) for r in data.get("rules", []))
    keywords = sorted({k for r in rules for k in r.keywords})
    return RuleSet(
        rules=rules,
        allow_secret=tuple(glob.get("regexes", ())),
        stopwords=tuple(w.lower() for w in glob.get("stopwords", ())),
        markers=(INLINE_MARKER, *glob.get("inline_markers", ())),
        keyword_re=re.compile("|".join(map(re.escape, keywords))),
        by_first={c: tuple(k for k in keywords if k[0] == c) for c in {k[0] for k in keywords}},
    )


@functools.cache
def default_rules() -> RuleSet:
    """The packaged rules, read and compiled once per process."""
    return parse_rules(RULES_FILE.read_text(encoding="utf-8"))


# ---- allowlist -----------------------------------------------------------------

def parse_allowlist(text: str) -> frozenset[str]:
    """Fingerprints from `.kbsync-allow`: one per line, `#` starts a comment."""
    return frozenset(
        word for line in text.splitlines() if (word := line.split("#", 1)[0].strip().split(" ", 1)[0])
    )


# ---- scanning ------------------------------------------------------------------

def is_binary(data: bytes) -> bool:
    return b"\x00" in data[:BINARY_SNIFF]


def scan_bytes(relpath: str, data: bytes, allowed: frozenset[str] = frozenset()) -> list[SecretFinding]:
    """scan_text over a file's bytes; binary files (NUL bytes, as git judges) are not scanned."""
    if is_binary(data):
        return []
    return scan_text(relpath, data.decode("utf-8", errors="replace"), allowed)


def scan_text(
    relpath: str, text: str, allowed: frozenset[str] = frozenset(), rules: RuleSet | None = None
) -> list[SecretFinding]:
    """Every secret in `text`, in file order, minus inline-allowed lines and `allowed` fingerprints."""
    if relpath.rsplit("/", 1)[-1] in _SELF_EXEMPT:
        return []
    ruleset = rules or default_rules()
    starts = _keyword_starts(ruleset, _ascii_lower(text))
    claimed: list[tuple[int, int]] = []
    found: list[SecretFinding] = []
    for rule in ruleset.rules if starts else ():  # specific rules come first; a span is reported once
        hits = [pos for pos, kws in starts.items() if not rule.keywords.isdisjoint(kws)]
        for span, finding in _scan_rule(rule, ruleset, relpath, text, hits):
            if not any(s < span[1] and span[0] < e for s, e in claimed):
                claimed.append(span)
                found.append(finding)
    return sorted((f for f in found if f.fingerprint not in allowed), key=lambda f: (f.line, f.rule))


def _ascii_lower(text: str) -> str:
    """A lower-cased copy with the same length, so offsets into it are offsets into `text`."""
    low = text.lower()
    return low if len(low) == len(text) else text.translate(_ASCII_LOWER)


_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


def _keyword_starts(rs: RuleSet, low: str) -> dict[int, set[str]]:
    """Position -> the keywords that start there: one regex pass, then exact checks inside each
    match (keywords overlap, as `key` inside `secretkey`)."""
    out: dict[int, set[str]] = {}
    for m in rs.keyword_re.finditer(low):
        for pos in range(m.start(), m.end()):
            kws = {k for k in rs.by_first.get(low[pos], ()) if low.startswith(k, pos)}
            if kws:
                out[pos] = kws
    return out


def _scan_rule(
    rule: Rule, rs: RuleSet, relpath: str, text: str, hits: list[int]
) -> Iterator[tuple[tuple[int, int], SecretFinding]]:
    for start, end in _windows(rule, text, hits):
        for m in _re(rule.regex).finditer(text, start, end):
            group = _secret_group(m, rule.secret_group)
            secret = m.group(group) or ""
            if secret and _accepted(rule, rs, text, m, group):
                yield m.span(group), _finding(relpath, text, m.start(group), rule.id, secret)


def _windows(rule: Rule, text: str, hits: list[int]) -> list[tuple[int, int]]:
    r"""Merged spans of `text` around each keyword occurrence (in order) that the rule's regex must search.

    A span starts at the keyword's line (with the newline before it, for `\s`- or
    `^`-led patterns) and ends with the next line; multi-line rules run to the end.
    """
    spans: list[tuple[int, int]] = []
    for hit in hits:
        start = max(0, text.rfind("\n", 0, hit), hit - _BEFORE)
        end = len(text) if rule.multiline else min(_line_end(text, _line_end(text, hit)), hit + _AFTER)
        if spans and start <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(end, spans[-1][1]))
        else:
            spans.append((start, end))
    return spans


def _line_end(text: str, pos: int) -> int:
    end = text.find("\n", pos)
    return len(text) if end < 0 else end + 1


def _secret_group(m: re.Match[str], group: int | None) -> int:
    """The configured group, else the first non-empty one, else the whole match (0)."""
    if group is not None:
        return group
    return next((i for i, g in enumerate(m.groups(), 1) if g), 0)


def _accepted(rule: Rule, rs: RuleSet, text: str, m: re.Match[str], group: int) -> bool:
    """True when the match is a finding: entropy high enough and no allowlist or stopword drops it."""
    secret = m.group(group)
    if rule.entropy is not None and shannon_entropy(secret) < rule.entropy:
        return False
    lower = secret.lower()
    if any(w in lower for w in rule.stopwords) or any(w in lower for w in rs.stopwords):
        return False
    if any(_re(p).search(secret) for p in (*rule.allow_secret, *rs.allow_secret)):
        return False
    if any(_re(p).search(m.group(0)) for p in rule.allow_match):
        return False
    lines = text[text.rfind("\n", 0, m.start(group)) + 1 : _line_end(text, m.end(group) - 1)]
    return not (any(k in lines for k in rs.markers) or any(_re(p).search(lines) for p in rule.allow_line))


def shannon_entropy(s: str) -> float:
    """Shannon entropy in bits per character."""
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values()) if n else 0.0


def mask(secret: str) -> str:
    """At most the first 4 characters (fewer for a short secret), then a fixed-width mask."""
    return secret[: min(PREVIEW_CHARS, len(secret) // 4)] + MASK


def fingerprint(rule_id: str, secret: str) -> str:
    """Stable across moves and edits of the file; the hash does not reveal the secret."""
    return f"{rule_id}@{hashlib.sha256(f'{rule_id}:{secret}'.encode()).hexdigest()[:16]}"


def _finding(relpath: str, text: str, start: int, rule_id: str, secret: str) -> SecretFinding:
    line = text.count("\n", 0, start) + 1
    return SecretFinding(relpath, line, rule_id, mask(secret), fingerprint(rule_id, secret))
