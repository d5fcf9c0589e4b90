"""What the semantic index embeds of a record, pure: its head, and its passages where the budget allows.

Embedding every passage of every session is out of reach (12,000 sessions are about 180,000 passages at
tens of milliseconds each), so each record gives one *head*: its title, tags and summary, then the start
of its body up to HEAD_TOKENS (a board entry, fact file or short session is whole in it); and its body in
*passages* (the keyword index's: `##` sections cut at about 200 tokens), which are embedded only for the newest
records, within `[search] semantic_passages` passages over the workspace (see `window`). A unit is known
by the digest of the model's name and its text: a text embedded once is never embedded again, whichever
file or rebuild brings it back. A unit's script (`cjk`: mostly Chinese, Japanese or Korean characters, or not)
is kept beside it: the search compares a query with the texts of each script on their own footing (see
kbsync.retrieval.semanticsearch).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Iterable

from kbsync.core.highlight import CJK
from kbsync.retrieval.context import estimate_tokens
from kbsync.retrieval.passages import Passage, split
from kbsync.retrieval.records import Record

MODEL = "multilingual-e5-small-q4"  # part of every digest: another model's vectors are never mixed in
HEAD_TOKENS = 64
SCHEME = f"{MODEL} head {HEAD_TOKENS}"  # how records become units: an index planned otherwise is planned again
_HEADING = re.compile(r"^##[ \t]+.*$", re.MULTILINE)
_CJK_CHAR = re.compile(f"[{CJK}]")
CJK_SHARE = 0.3  # a text is of the CJK script when at least this share of its letters and digits are CJK


@dataclass(frozen=True)
class Unit:
    """One text to embed: `ordinal` 0 is the record's head, 1 on its passages in file order."""

    key: str
    ordinal: int
    text: str

    @property
    def digest(self) -> str:
        return digest(self.text)

    @property
    def cjk(self) -> bool:
        return is_cjk(self.text)


def is_cjk(text: str) -> bool:
    """Whether `text` is mostly of the CJK script: at least CJK_SHARE of its letters and digits (a Chinese
    text with a few English names and terms is; an English one quoting a Chinese word is not)."""
    letters = sum(1 for c in text if c.isalnum())
    return letters > 0 and len(_CJK_CHAR.findall(text)) >= CJK_SHARE * letters


def digest(text: str) -> str:
    return hashlib.sha256(f"{MODEL}\0{text}".encode("utf-8")).hexdigest()[:32]


def head(rec: Record) -> Unit:
    """The record's head: title, tags, summary, then the body's start, about HEAD_TOKENS in all."""
    return Unit(rec.key, 0, clip(whole_head(rec), HEAD_TOKENS))


def whole_head(rec: Record) -> str:
    """The text a head is the start of: title, tags, summary and body."""
    return "\n".join(x for x in [rec.title, " ".join(f"#{t}" for t in rec.tags), rec.summary, _plain(rec.body)]
                     if x.strip())


def passages(rec: Record) -> list[Unit]:
    """The record's passages as the keyword index cuts them (kbsync.retrieval.passages), none when the head
    holds all of its body."""
    if estimate_tokens(_plain(rec.body)) + estimate_tokens(rec.summary) <= HEAD_TOKENS:
        return []
    return [Unit(rec.key, p.ordinal + 1, p.text) for p in split(rec.body)]


def passage_at(rec: Record, ordinal: int) -> Passage | None:
    """The passage a unit of this ordinal (1 on) was cut from, as the record reads now (None: no such one)."""
    found = split(rec.body)
    return found[ordinal - 1] if 0 < ordinal <= len(found) else None


def clip(text: str, tokens: int) -> str:
    """The longest start of `text` within `tokens` (by the context pack's estimate), at least one character."""
    if estimate_tokens(text) <= tokens:
        return text
    lo, hi = 1, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if estimate_tokens(text[:mid]) <= tokens:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo]


def _plain(body: str) -> str:
    """The body without its `##` headings (the fixed section names say nothing about its content)."""
    return _HEADING.sub("", body).strip()


def window(sizes: Iterable[tuple[str, str, int]], budget: int) -> set[str]:
    """The records whose passages are embedded: from (key, date, passage count), the newest first (ties by
    key) while their passages fit in `budget` in all; a record that does not fit is skipped, not the rest."""
    chosen: set[str] = set()
    left = budget
    for key, _date, n in sorted(sizes, key=lambda s: (s[1], s[0]), reverse=True):
        if 0 < n <= left:
            chosen.add(key)
            left -= n
    return chosen
