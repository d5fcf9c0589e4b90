"""Search text, pure: CJK bigram tokens for the full-text index and parsed queries.

SQLite's unicode61 tokenizer keeps a run of Chinese characters as one token,
so a two-character word inside a sentence is never found. Before text goes
into the index, every run of CJK characters is rewritten as its overlapping
bigrams plus the run's last character alone (合同风险 -> 合同 同风 风险 险);
other text is left to unicode61. A query is rewritten the same way: a CJK run
of two characters is its bigram, a single character a prefix query (险*),
which the trailing unigram makes complete, and a longer run the AND of its
bigrams. The index keeps no positions, so that AND also holds where the
bigrams stand apart: such a match is checked against the text (`holds`).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import re
from dataclasses import dataclass, field

from kbsync.core.highlight import CJK as _CJK

CJK_RUN = re.compile(f"[{_CJK}]+")
# A query word: letters and digits, as unicode61 keeps them in one token. The few letters Python counts but
# SQLite's tables do not (New Tai Lue vowel signs, two Vedic signs) split a word, as the index split it: a
# word of two tokens would be a phrase, which an index without positions cannot match.
_WORD = re.compile(r"[^\W_\u19b0-\u19c0\u19c8\u19c9\u1cf2\u1cf3]+")
FILTER_KEYS = ("tag", "status", "type", "since", "until", "source")
_FILTER = re.compile(r'^(%s):(?:"([^"]*)"|(\S*))$' % "|".join(FILTER_KEYS))
_DATE = re.compile(r"^\d{4}(-\d{2}(-\d{2})?)?$")


def bigrams(run: str) -> list[str]:
    """The tokens that stand for one CJK run: overlapping bigrams and the last character."""
    if len(run) == 1:
        return [run]
    return [run[i:i + 2] for i in range(len(run) - 1)] + [run[-1]]


def index_text(text: str) -> str:
    """`text` with every CJK run replaced by its bigram tokens, for the FTS5 index."""
    parts = _RUN_SPLIT.split(text)
    parts[1::2] = map(_run_tokens, parts[1::2])
    return "".join(parts)


_RUN_SPLIT = re.compile(f"([{_CJK}]+)")


@functools.lru_cache(maxsize=8192)  # runs repeat (words, set phrases): most are rewritten once
def _run_tokens(run: str) -> str:
    return " " + " ".join(bigrams(run)) + " "


def index_tokens(text: str) -> tuple[str, int]:
    """What the index is given for `text`: the text between its CJK runs as it stands, then the tokens of the
    runs (their bigrams and last characters) each once; and the length of `index_text(text)`. The index
    keeps which column of a record holds a token, not how often or where, so this holds what `index_text`
    holds, and a bigram said again (most of them: a run of k characters is k tokens) costs the writer
    nothing; a run of k characters is 3k characters of `index_text`."""
    parts = _RUN_SPLIT.split(text)
    runs = parts[1::2]
    grams = set().union(*map(_run_grams, set(runs)))
    return " ".join(parts[0::2]) + " " + " ".join(grams), len(text) + 2 * sum(map(len, runs))


@functools.lru_cache(maxsize=4096)  # a few MB: every process that indexes (the daemon too) keeps it
def _run_grams(run: str) -> tuple[str, ...]:
    return tuple(bigrams(run))


@dataclass(frozen=True)
class Query:
    """A parsed query: free-text terms and field filters."""

    terms: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    status: str = ""
    type: str = ""
    since: str = ""
    until: str = ""
    source: str = ""
    errors: tuple[str, ...] = field(default=(), compare=False)

    @property
    def has_filters(self) -> bool:
        return bool(self.tags or self.status or self.type or self.since or self.until or self.source)

    @property
    def text(self) -> str:
        return " ".join(self.terms)


def parse_query(text: str) -> Query:
    """Split `tag:x status:open 合同 deploy` into filters and terms; bad dates are listed in `errors`."""
    terms: list[str] = []
    tags: list[str] = []
    single: dict[str, str] = {}
    errors: list[str] = []
    for word in _split(text):
        m = _FILTER.match(word)
        if not m:
            terms.append(word)
            continue
        key, value = m.group(1), (m.group(2) if m.group(2) is not None else m.group(3)) or ""
        if key in ("since", "until") and not is_date(value):
            errors.append(f"{key}:{value} is not a date; write {key}:YYYY-MM-DD (or YYYY-MM, YYYY)")
        elif key == "tag":
            tags.append(value.casefold())
        else:
            single[key] = value.casefold() if key in ("status", "source") else value
    return Query(terms=tuple(terms), tags=tuple(tags), errors=tuple(errors), **single)


def is_date(value: str) -> bool:
    """`YYYY`, `YYYY-MM` or `YYYY-MM-DD` naming a real year, month or day (not 2026-13, not 2026-02-31)."""
    if not _DATE.match(value):
        return False
    year, month, day = (value.split("-") + ["01", "01"])[:3]
    try:
        dt.date(int(year), int(month), int(day))
    except ValueError:
        return False
    return True


def with_filters(query: Query, *, tag: str | None = None, status: str | None = None, since: str | None = None,
                 until: str | None = None) -> Query:
    """`query` with these filters added (given as separate values rather than in the text); a bad date is
    listed in `errors` as parse_query lists it."""
    errors = list(query.errors)
    for key, value in (("since", since), ("until", until)):
        if value is not None and not is_date(value):
            errors.append(f"{key}={value!r} is not a date; write YYYY-MM-DD")
    return dataclasses.replace(
        query, tags=query.tags + ((tag.casefold(),) if tag else ()), status=(status or query.status).casefold(),
        since=since or query.since, until=until or query.until, errors=tuple(errors))


def _split(text: str) -> list[str]:
    """Whitespace-separated words, keeping `key:"quoted value"` together."""
    return [a or b for a, b in re.findall(r'(\S+:"[^"]*")|(\S+)', text)]


def fts_expression(terms: tuple[str, ...]) -> str:
    """An FTS5 MATCH expression requiring every term; "" when there is nothing to match."""
    return " AND ".join(fts_parts(terms))


def fts_parts(terms: tuple[str, ...]) -> list[str]:
    """The words of an FTS5 MATCH expression requiring every term, each once."""
    return list(dict.fromkeys(p for term in terms for p in _term_parts(term)))


def _term_parts(term: str) -> list[str]:
    parts: list[str] = []
    pos = 0
    for m in CJK_RUN.finditer(term):
        parts.extend(_words(term[pos:m.start()]))
        run = m.group(0)
        parts.extend([f'"{run}"*'] if len(run) == 1 else [f'"{g}"' for g in dict.fromkeys(bigrams(run)[:-1])])
        pos = m.end()
    parts.extend(_words(term[pos:]))
    return parts


def _words(text: str) -> list[str]:
    return [f'"{w}"' for w in _WORD.findall(text)]


def long_runs(terms: tuple[str, ...]) -> tuple[str, ...]:
    """The CJK runs of three or more characters in `terms`: the parts of a match the index cannot confirm."""
    return tuple(dict.fromkeys(run for term in terms for run in CJK_RUN.findall(term) if len(run) > 2))


def holds(texts: tuple[str, ...], runs: tuple[str, ...]) -> bool:
    """Whether every one of `runs` stands in one of `texts`."""
    return all(any(run in text for text in texts) for run in runs)
