"""Secret scanner: gitleaks-style rules (kbsync/data/secret-rules.toml) over a file's text.

Pure: text in, findings out. A rule runs only where one of its keywords occurs
(case-insensitive), and then only over the lines around those occurrences, so a
large file with no keyword costs one lower-casing and a few substring searches.
A finding keeps only a masked preview (at most the first 4 characters) and a
fingerprint; the secret itself never leaves this module.

Disguises (kbsync.core.detect.unveil): the text is scanned as normalised (NFKC, which
folds full-width letters, with zero-width characters removed), and so is what its
encoded runs long enough to hide a token (MIN_DECODED bytes) decode to, two layers
deep; a finding in decoded text names the line of the run and the encoding. The
runs are those the instruction detector checks too, decoded once for both.

Opt-outs: fingerprints listed in the committed `.kbsync-allow`, and a line holding
an inline marker (`kbsync:allow`, or the markers the rules file lists), but only
in files a person writes: never in the folders and files kbsync's own writers
fill with text from elsewhere (`session save` and `session section`: sessions/,
index.md; `log`: logs/; the scan: candidates/).
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import hashlib
import math
import re
import tomllib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from ahocorasick_rs import AhoCorasick

from kbsync.core.detect import lazylead, unveil
from kbsync.errors import ConfigError

RULES_FILE = Path(__file__).parents[2] / "data" / "secret-rules.toml"
ALLOW_FILE = ".kbsync-allow"
INLINE_MARKER = "kbsync:allow"
MASK = "********"
PREVIEW_CHARS = 4
BINARY_SNIFF = 8000  # bytes git itself looks at to call a file binary
_BEFORE = 256  # characters before a keyword where a match may start (OpenAI keys: ~90)
_AFTER = 512  # characters after a keyword a single-line match may reach (generic values: ~200)
MIN_DECODED = 16  # bytes of decoded text: the shortest token the rules know (an AWS key id) is 20
_SELF_EXEMPT = ("secret-rules.toml", ALLOW_FILE)  # the rules themselves and the allowlist
MACHINE_FOLDERS = frozenset({"sessions", "logs", "candidates"})  # filled by kbsync's writers from outside text
MACHINE_FILES = frozenset({"index.md"})


@dataclass(frozen=True)
class SecretFinding:
    path: str
    line: int
    rule: str
    preview: str  # first characters of the secret, then a mask
    fingerprint: str  # `<rule>@<16 hex>`, what `.kbsync-allow` lists
    encoding: str | None = None  # where the secret was found decoded: "base64", "hex", "percent", "base64/hex"

    def __str__(self) -> str:
        where = f" in {self.encoding}-encoded text" if self.encoding else ""
        return f"{self.path}:{self.line}: secret ({self.rule}){where} {self.preview} [{self.fingerprint}]"


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
    keywords: tuple[str, ...]  # every rule's keywords, lower-cased
    automaton: AhoCorasick  # finds each occurrence of each of them (overlapping ones too) in one pass


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
        keywords=tuple(keywords),
        automaton=AhoCorasick(keywords),
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


def honours_inline_allow(relpath: str) -> bool:
    """Whether an inline marker may allow a line of this file: only where a person writes the text, not
    in a folder or file that kbsync's writers fill (judged by every folder of the path, so a workspace
    inside a larger repository is judged the same way by the git hooks)."""
    parts = relpath.replace("\\", "/").split("/")
    return parts[-1] not in MACHINE_FILES and MACHINE_FOLDERS.isdisjoint(parts[:-1])


def scan_text(
    relpath: str, text: str, allowed: frozenset[str] = frozenset(), rules: RuleSet | None = None, *,
    inline_allow: bool | None = None, decode: bool = True,
) -> list[SecretFinding]:
    """Every secret in `text`, in file order, minus `allowed` fingerprints and inline-allowed lines.

    `inline_allow`: whether inline markers count (default: honours_inline_allow(relpath); text from a scan
    passes False). `decode`: see through normalisation and encodings (False only to measure the cost)."""
    if relpath.rsplit("/", 1)[-1] in _SELF_EXEMPT:
        return []
    ruleset = rules or default_rules()
    markers = ruleset.markers if (honours_inline_allow(relpath) if inline_allow is None else inline_allow) else ()
    if not decode:
        return _drop_allowed(_scan_plain(relpath, text, ruleset, markers), allowed)
    plain = unveil.normalise(text)
    found = _scan_plain(relpath, plain, ruleset, markers) + _scan_decoded(relpath, plain, ruleset, markers)
    return _drop_allowed(list({(f.line, f.fingerprint): f for f in found}.values()), allowed)


def _drop_allowed(found: list[SecretFinding], allowed: frozenset[str]) -> list[SecretFinding]:
    return sorted((f for f in found if f.fingerprint not in allowed), key=lambda f: (f.line, f.rule))


def _scan_decoded(relpath: str, text: str, rs: RuleSet, markers: tuple[str, ...]) -> list[SecretFinding]:
    """Findings in what the encoded runs of `text` decode to, each at the line of its run; a marker on that
    line of `text` allows it (where markers count), one inside the decoded text never does."""
    out: list[SecretFinding] = []
    for run in unveil.nested(text):
        if len(run.text.encode("utf-8")) < MIN_DECODED or (markers and any(k in _line_at(text, run.start) for k in markers)):
            continue
        line = text.count("\n", 0, run.start) + 1
        out += [dataclasses.replace(f, path=relpath, line=line, encoding=run.encoding)
                for f in _scan_plain(relpath, unveil.normalise(run.text), rs, ())]
    return out


def _line_at(text: str, pos: int) -> str:
    return text[text.rfind("\n", 0, pos) + 1 : _line_end(text, pos)]


def _scan_plain(relpath: str, text: str, ruleset: RuleSet, markers: tuple[str, ...]) -> list[SecretFinding]:
    """The rules over `text` as it is; a line holding one of `markers` is allowed."""
    starts = _keyword_starts(ruleset, _ascii_lower(text))
    present = set().union(*starts.values())
    claimed: list[tuple[int, int]] = []
    found: list[SecretFinding] = []
    for rule in ruleset.rules:  # specific rules come first; a span is reported once
        if rule.keywords.isdisjoint(present):
            continue
        hits = [pos for pos, kws in starts.items() if not rule.keywords.isdisjoint(kws)]
        for span, finding in _scan_rule(rule, ruleset, relpath, text, hits, markers):
            if not any(s < span[1] and span[0] < e for s, e in claimed):
                claimed.append(span)
                found.append(finding)
    return found


def _ascii_lower(text: str) -> str:
    """A lower-cased copy with the same length, so offsets into it are offsets into `text`."""
    low = text.lower()
    return low if len(low) == len(text) else text.translate(_ASCII_LOWER)


_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


def _keyword_starts(rs: RuleSet, low: str) -> dict[int, set[str]]:
    """Position -> the keywords that start there, in order of position: one Aho-Corasick pass that reports
    overlapping occurrences too (keywords overlap, as `key` inside `secretkey`)."""
    out: dict[int, set[str]] = {}
    for i, start, _end in rs.automaton.find_matches_as_indexes(low, overlapping=True):
        out.setdefault(start, set()).add(rs.keywords[i])
    return dict(sorted(out.items()))


def _scan_rule(
    rule: Rule, rs: RuleSet, relpath: str, text: str, hits: list[int], markers: tuple[str, ...]
) -> Iterator[tuple[tuple[int, int], SecretFinding]]:
    _re(rule.regex)  # compiled here first: a bad pattern is a ConfigError naming the rules file
    # where the rule's keywords begin every match of its lazily led choice, their positions are where it may match
    places = hits if lazylead.covers(rule.regex, rule.keywords) and not lazylead.has_twins(text) else None
    for start, end in _windows(rule, text, hits):
        near = places[bisect.bisect_left(places, start):bisect.bisect_left(places, end)] if places is not None else None
        for m in lazylead.finditer(rule.regex, text, start, end, near):
            group = _secret_group(m, rule.secret_group)
            secret = m.group(group) or ""
            if secret and _accepted(rule, rs, text, m, group, markers):
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


def _accepted(rule: Rule, rs: RuleSet, text: str, m: re.Match[str], group: int, markers: tuple[str, ...]) -> bool:
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
    return not (any(k in lines for k in markers) or any(_re(p).search(lines) for p in rule.allow_line))


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
