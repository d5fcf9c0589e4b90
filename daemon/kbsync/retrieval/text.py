"""Search text, pure: CJK bigram tokens for the full-text index, parsed queries and their terms.

SQLite's unicode61 tokenizer keeps a run of Chinese characters as one token,
so a two-character word inside a sentence is never found. Before text goes
into the index, every run of CJK characters is rewritten as its overlapping
bigrams plus the run's last character alone (合同风险 -> 合同 同风 风险 险);
other text is left to unicode61. A query is rewritten the same way into its
terms (`query_terms`): its words, case-folded, and the bigrams of its CJK runs
(a single character is a prefix term, 险*, which the trailing unigram makes
complete), less the shipped stop words (kbsync/data/stopwords.json). A search
ranks the records holding any of them. A quoted phrase is kept whole: a record
must hold it as written (`holds`), and its words count as terms too.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import json
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from kbsync.core.highlight import CJK as _CJK
from kbsync.retrieval.stem import forms
from kbsync.retrieval.when import window

CJK_RUN = re.compile(f"[{_CJK}]+")
# A query word: letters and digits, as unicode61 keeps them in one token. The few letters Python counts but
# SQLite's tables do not (New Tai Lue vowel signs, two Vedic signs) split a word, as the index split it: a
# word of two tokens would be a phrase, which an index without positions cannot match.
_WORD = re.compile(r"[^\W_\u19b0-\u19c0\u19c8\u19c9\u1cf2\u1cf3]+")
_TERM = re.compile(f"([{_CJK}]+)|[^\\W_{_CJK}\u19b0-\u19c0\u19c8\u19c9\u1cf2\u1cf3]+")  # a CJK run, or a word
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
    phrases: tuple[str, ...] = ()  # quoted in the query: a record must hold each as written
    tags: tuple[str, ...] = ()
    status: str = ""
    type: str = ""
    since: str = ""
    until: str = ""
    source: str = ""
    when: tuple[str, ...] = ()  # the first and last day a record's date matches for the time the words name
    errors: tuple[str, ...] = field(default=(), compare=False)

    @property
    def has_filters(self) -> bool:
        return bool(self.tags or self.status or self.type or self.since or self.until or self.source)

    @property
    def words(self) -> bool:
        """Whether the query has anything to match (terms or phrases), beside its filters."""
        return bool(self.terms or self.phrases)

    @property
    def text(self) -> str:
        return " ".join([*self.terms, *(f'"{p}"' for p in self.phrases)])


def parse_query(text: str) -> Query:
    """Split `tag:x status:open 合同 deploy` into filters and terms; bad dates are listed in `errors`."""
    terms: list[str] = []
    phrases: list[str] = []
    tags: list[str] = []
    single: dict[str, str] = {}
    errors: list[str] = []
    for word in _split(text):
        if len(word) > 1 and word.startswith('"') and word.endswith('"'):
            if word[1:-1].strip():
                phrases.append(" ".join(word[1:-1].split()))
            continue
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
    return Query(terms=tuple(terms), phrases=tuple(dict.fromkeys(phrases)), tags=tuple(tags), errors=tuple(errors),
                 when=window(" ".join(terms)) or (), **single)


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
    """Whitespace-separated words, keeping `key:"quoted value"` and a `"quoted phrase"` together."""
    return [a or b or c for a, b, c in re.findall(r'(\S+:"[^"]*")|("[^"]*")|(\S+)', text)]


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


# ---- the terms a search ranks by ------------------------------------------------

@functools.cache
def _stop() -> tuple[frozenset[str], frozenset[str], str]:
    data = json.loads((Path(__file__).parent.parent / "data" / "stopwords.json").read_text(encoding="utf-8"))
    return frozenset(data["en"]), frozenset(data["zh"]), str(data["zh_particles"])


def stop_word(token: str) -> bool:
    """Whether a query drops `token` (a case-folded word or a CJK bigram): a shipped stop word, or a bigram holding
    a particle (的, 吗 ...)."""
    en, zh, particles = _stop()
    return token in en or token in zh or (bool(CJK_RUN.match(token)) and any(c in particles for c in token))


def fold(word: str) -> str:
    """A word as unicode61 (remove_diacritics 2) indexes it: case-folded, without its diacritics."""
    word = word.casefold()
    if word.isascii():
        return word
    return "".join(c for c in unicodedata.normalize("NFD", word) if not unicodedata.combining(c))


def text_tokens(text: str) -> list[str]:
    """The tokens of `text` as the index holds them, in order: words folded, each CJK run its bigrams and last
    character (a lone CJK character is itself)."""
    out: list[str] = []
    for i, part in enumerate(_RUN_SPLIT.split(text)):
        if i % 2:
            out += _run_grams(part)
        elif part:
            low = part.casefold()
            words = _WORD.findall(low)
            out += words if low.isascii() else map(fold, words)
    return out


def query_terms(query: Query) -> tuple[str, ...]:
    """The terms a search ranks by, each once, in query order: the words of its terms and phrases folded, the
    bigrams of their CJK runs (a run of one character is that character, a prefix term), less the stop words;
    all of them when every one is a stop word (a query is never emptied by them)."""
    found: list[str] = []
    for text in (*query.terms, *query.phrases):
        for m in _TERM.finditer(text):
            run = m.group(1)
            found += (bigrams(run)[:-1] or [run]) if run else [fold(m.group(0))]
    found = list(dict.fromkeys(found))
    kept = [t for t in found if not stop_word(t)]
    return tuple(kept or found)


def match_term(term: str) -> str:
    """The FTS5 MATCH expression of one term: a prefix query for a lone CJK character, else the token or any of
    the word's forms (kbsync.retrieval.stem)."""
    if len(term) == 1 and CJK_RUN.match(term):
        return f'"{term}"*'
    found = forms(term)
    return f'"{term}"' if len(found) == 1 else "(" + " OR ".join(f'"{f}"' for f in found) + ")"


def long_runs(terms: tuple[str, ...]) -> tuple[str, ...]:
    """The CJK runs of three or more characters in `terms`: the parts of a match the index cannot confirm."""
    return tuple(dict.fromkeys(run for term in terms for run in CJK_RUN.findall(term) if len(run) > 2))


def holds(texts: tuple[str, ...], runs: tuple[str, ...]) -> bool:
    """Whether every one of `runs` stands in one of `texts`."""
    return all(any(run in text for text in texts) for run in runs)
