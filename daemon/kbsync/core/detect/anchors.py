"""Where a match of a regular expression can start: the literal strings that every match begins with. Pure.

`prefixes(regex)` reads a pattern as `re` parses it (case-insensitively) and returns lower-cased
strings one of which begins every match, or None when a match could begin otherwise (with a class of
characters, a wildcard, or a repeat with nothing fixed before it). Zero-width items (`\\b`, `^`,
lookarounds) are passed over: they only narrow where a match may start. A prefix is cut at MAX_LEN
characters and a pattern has at most MAX_COUNT of them (else None).

kbsync.core.detect.injection tries a rule only at the positions where one of its prefixes occurs in the
lower-cased text, which finds exactly the matches that a search trying every position finds: a
position where no prefix starts cannot start a match. `starts(regex)` is what it looks for.

Working the prefixes out parses every rule (30 ms for the detector's 174, in each process that checks
text: the first `kbsync search`, the first guarded MCP answer). So the detector's table is stored in
kbsync/data/anchors.json (`render`; written by scripts/anchors) and `table` takes it from there when it
was made from the same patterns, by this module as it is, under the same Python and Unicode versions
(whose parser and case folding the prefixes follow); else it works them out. tests/core/detect/test_anchors.py
fails while the stored table is not the one the rules give.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import unicodedata
import warnings
from pathlib import Path
from typing import Any, Final, Sequence

with warnings.catch_warnings():  # the parser `re` itself uses, under its documented older name
    warnings.simplefilter("ignore", DeprecationWarning)
    import sre_constants as C
    import sre_parse

MAX_LEN: Final = 4
MAX_COUNT: Final = 2000
SMALL_CLASS: Final = 8  # a class of at most this many single characters is read as a choice between them
Node = tuple[Any, Any]
STORE: Final = Path(__file__).parents[2] / "data" / "anchors.json"
Table = tuple[frozenset[str] | None, ...]


class _Open(Exception):
    """Some match may begin with no literal character."""


def prefixes(regex: str, max_len: int = MAX_LEN) -> frozenset[str] | None:
    """The lower-cased prefixes (of at most `max_len` characters) one of which begins every match of `regex`
    (compiled with re.IGNORECASE)."""
    try:
        return frozenset(_after(list(sre_parse.parse(regex, re.IGNORECASE).data), "", max_len))
    except _Open:
        return None


def _after(nodes: list[Node], acc: str, max_len: int) -> set[str]:
    """`acc` followed by the prefixes of what `nodes` match."""
    if len(acc) >= max_len or not nodes:
        return _done(acc)
    (op, av), rest = nodes[0], nodes[1:]
    if op in (C.AT, C.ASSERT, C.ASSERT_NOT):
        return _after(rest, acc, max_len)
    if op is C.LITERAL:
        return _after(rest, acc + chr(av).lower(), max_len)
    if op is C.SUBPATTERN:
        return _after(list(av[-1].data) + rest, acc, max_len)
    if op is C.BRANCH:
        return _union(_after(list(alt.data) + rest, acc, max_len) for alt in av[1])
    if op is C.IN and len(av) <= SMALL_CLASS and all(o is C.LITERAL for o, _ in av):
        return _union(_after(rest, acc + chr(c).lower(), max_len) for _, c in av)
    if op in (C.MAX_REPEAT, C.MIN_REPEAT):
        low, high, item = av
        if high == 1:  # an optional part: what it and the rest begin with, or the rest alone
            once = _after(list(item.data) + rest, acc, max_len)
        else:  # what the first repetition begins with (the rest is not followed)
            once = _after(list(item.data), acc, max_len)
        return _union((once, _after(rest, acc, max_len))) if low == 0 else once
    return _done(acc)


def _done(acc: str) -> set[str]:
    if not acc:
        raise _Open
    return {acc}


def _union(parts: Any) -> set[str]:
    out: set[str] = set()
    for part in parts:
        out |= part
        if len(out) > MAX_COUNT:
            raise _Open
    return out


def starts(regex: str) -> frozenset[str] | None:
    """The prefixes worth looking for, of those that begin every match of `regex`: only those that begin with no
    other one (where a longer one occurs, the shorter one does too), and none when one is a single ASCII character
    (a letter or a full stop occurs everywhere, and trying the pattern at each costs more than its search)."""
    found = prefixes(regex)
    if found is None or any(len(p) == 1 and p.isascii() for p in found):
        return None
    return frozenset(p for p in found if not any(p[:n] in found for n in range(1, len(p))))


def table(regexes: Sequence[str]) -> Table:
    """`starts` of each of `regexes`: from the stored table when it was made from them, by this module, under
    this Python and Unicode version; else worked out."""
    try:
        stored = json.loads(STORE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        stored = None
    rows = stored.get("starts") if isinstance(stored, dict) and stored.get("made") == _made(regexes) else None
    if isinstance(rows, list) and len(rows) == len(regexes) and all(
            r is None or isinstance(r, list) and all(isinstance(p, str) and p for p in r) for r in rows):
        return tuple(None if r is None else frozenset(r) for r in rows)
    return tuple(starts(r) for r in regexes)


def render(regexes: Sequence[str]) -> str:
    """The stored table of `regexes` (kbsync/data/anchors.json)."""
    rows = ",\n".join(json.dumps(None if s is None else sorted(s), ensure_ascii=False) for s in map(starts, regexes))
    return f'{{"made": {json.dumps(_made(regexes))},\n"starts": [\n{rows}\n]}}\n'  # a line a rule


def _made(regexes: Sequence[str]) -> str:
    """What a table depends on: the patterns, this module's code, Python's parser and Unicode's case folding."""
    h = hashlib.sha256(Path(__file__).read_bytes())
    for r in regexes:
        h.update(b"\0" + r.encode("utf-8"))
    return f"{h.hexdigest()} python {sys.version_info[0]}.{sys.version_info[1]} unicode {unicodedata.unidata_version}"
