"""Text folded for matching, with a map back to the original's offsets. Pure.

`fold(text)` undoes the usual ways of hiding a phrase from a pattern while keeping
every position traceable to the original (`View.original`):

- invisible characters removed: zero-width spaces and joiners, word joiner and invisible
  operators, bidirectional controls, a BOM inside the text, Unicode tag characters;
- compatibility forms folded (NFKC): full-width letters and punctuation, mathematical
  alphabets, circled letters, ligatures; Cyrillic and Greek look-alikes of Latin letters
  folded to those letters;
- HTML character references decoded (`&#105;` is `i`);
- letters written apart (`I-g-n-o-r-e`, `忽 略 之 前`) joined;
- leetspeak inside words that mix letters and digits (`1gn0re` is `ignore`; short words such as
  `n0t` only on a line that holds a longer one);
- Markdown emphasis (`**`, `__`, `~~`, single `*` and `_` around letters) and a hyphenated
  line break inside a word removed;
- a line break inside a paragraph becomes a space (the next line is no list item, heading,
  quote or table row), so a phrase split over two lines reads as one line.

Each step either keeps the length (a one-for-one character table) or records what it
removed or replaced, so a span found in the folded text maps to the original text.
"""

from __future__ import annotations

import bisect
import html
import itertools
import re
import string
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import AnyStr, Callable, Final, Iterable, Iterator

from kbsync.core.detect import charshape

INVISIBLE: Final = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]")
BIDI: Final = re.compile("[\u202a-\u202e\u2066-\u2069]")
TAGS: Final = re.compile("[\U000e0020-\U000e007e]+")
# Latin look-alikes in other alphabets (lower and upper case), after Unicode's confusables list.
_LOOKALIKES: Final = dict(zip(
    "аеорсухіјѕԁһԛԝмтвнкАЕОРСУХІЈЅВНКМТαεοιρνυκτχΑΕΟΙΡΝΥΚΤΧΒΗΜΖ",
    "aeopcyxijsdhqwmtbhkAEOPCYXIJSBHKMTaeoipvuktxAEOIPNYKTXBHMZ"))
_LOOKALIKE_TABLE: Final = str.maketrans(_LOOKALIKES)
_LOOKALIKE_HINT: Final = re.compile("[\u0370-\u04ff]")
_FOLD_RANGES: Final = ((0x00A0, 0x00FF), (0x2000, 0x2BFF), (0x3000, 0x303F), (0xFF00, 0xFFEF), (0x1D400, 0x1D7FF),
                       (0x1F100, 0x1F1FF))
# The characters of ordinary prose, Chinese or English: ASCII, CJK ideographs and punctuation, full-width forms and
# general punctuation but its invisible and bidirectional controls, and the symbols of notes (° ± · × ÷, arrows,
# mathematical operators, technical symbols, box drawing, shapes, dingbats: those of them that NFKC leaves as they
# are). A text of these alone holds no invisible or look-alike character, and NFKC makes none (it changes only
# full-width forms and a few dots, marks and spaces).
_ORDINARY: Final = ("\x00-\x7f\u4e00-\u9fff\u3000-\u303f\uff00-\uffef\u2010-\u2027\u2030-\u205e"
                    "\u00b0\u00b1\u00b7\u00d7\u00f7\u2190-\u222b\u222e\u2231-\u2328\u232b-\u23ff\u2500-\u27bf\u2b00-\u2bff")
_UNUSUAL: Final = re.compile(f"[^{_ORDINARY}]")
_OTHER: Final = re.compile("[^\x00-\x7f\u4e00-\u9fff\u3000-\u303f\u2000-\u206f\uff00-\uffef]")
_ENTITY: Final = re.compile(r"&(?:#\d{2,7}|#x[0-9a-fA-F]{2,6}|[A-Za-z]{2,8});")
# Words of ASCII letters and digits, as kinds (kbsync.core.detect.charshape): a letter `a`, a leetspeak digit `l`, another
# digit `d`, anything else a space. A leetspeak digit beside a letter is `al` or `la` in the shape.
_WORD_SHAPE: Final = charshape.table({b"a": string.ascii_letters, b"l": "013457", b"d": "2689"})
_WORD_CHARS: Final = frozenset(string.ascii_letters + string.digits)
_LEET: Final = str.maketrans("013457", "oieast")
_MARKS: Final = re.compile(r"\*\*?\*?|__?_?|~~|-\n[ \t]*")  # tried only where `*`, `_`, `~` or `-\n` occurs
_MARK_STARTS: Final = ("*", "_", "~", "-\n")
# Letters written apart to hide a word: four and more single letters with one separator between each
# (`I-g-n-o-r-e`, `i g n o r e`), or Chinese characters with a space between each (`忽 略 之 前`).
# Each is searched only where its hint (what every such run holds inside) occurs in the text's shape: a letter `a`,
# a separator `s` (`·` is led by C2), a CJK ideograph `c` (led by E4 to E9); `sasas` stands for
# `[-. _*·][A-Za-z][-. _*·][A-Za-z][-. _*·]`, `scscs` for ` [\u4e00-\u9fff] [\u4e00-\u9fff] ` (each a superset).
_SPACED_SHAPE: Final = charshape.table({b"a": string.ascii_letters, b"s": "-. _*\xc2", b"c": "\xe4\xe5\xe6\xe7\xe8\xe9"})
_SPACED: Final = (
    (b"sasas", re.compile(r"(?<![A-Za-z])[A-Za-z]([-. _*·])[A-Za-z](?:\1[A-Za-z]){2,}(?![A-Za-z])")),
    (b"scscs", re.compile("[\u4e00-\u9fff](?: [\u4e00-\u9fff]){3,}")),
)
_SOFT_BREAK: Final = re.compile(r"\n(?![ \t]*(?:[-*+#>|]|\d+[.)]|\n|$))")


@lru_cache(maxsize=1)
def _fold_table() -> dict[int, str]:
    """One-for-one folds: each character of the ranges above whose NFKC form is one other character."""
    table = {ord(k): v for k, v in _LOOKALIKES.items()}
    for lo, hi in _FOLD_RANGES:
        for cp in range(lo, hi + 1):
            folded = unicodedata.normalize("NFKC", chr(cp))
            if len(folded) == 1 and folded != chr(cp):
                table[cp] = folded
    return table


@dataclass(frozen=True)
class _Map:
    """Where the pieces of a rewritten text came from: piece i starts at `new[i]` and at `old[i]` in the
    input; `exact[i]` says the piece is a copy (offsets inside it map one for one) or a replacement."""

    new: tuple[int, ...]
    old: tuple[int, ...]
    exact: tuple[bool, ...]

    def back(self, i: int) -> int:
        k = bisect.bisect_right(self.new, i) - 1
        if k < 0:
            return i
        return self.old[k] + (i - self.new[k] if self.exact[k] else 0)


@dataclass(frozen=True)
class View:
    """A folded text and the maps (latest last) that lead back to the original."""

    text: str
    original_text: str
    maps: tuple[_Map, ...] = ()
    invisible: bool = False  # whether the original holds an invisible character (INVISIBLE)

    def original(self, i: int) -> int:
        """The original offset of offset `i` of the folded text (an end offset maps to an end offset)."""
        for m in reversed(self.maps):
            i = m.back(i)
        return min(i, len(self.original_text))

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original span of the folded span [start, end)."""
        lo = self.original(start)
        hi = self.original(end - 1) + 1 if end > start else lo
        return lo, max(lo, hi)


def rewrite(text: str, pattern: re.Pattern[str], repl: Callable[[re.Match[str]], str],
            found: Iterable[re.Match[str]] | None = None) -> tuple[str, _Map | None]:
    """`pattern.sub(repl, text)` and the map back to `text` (None when nothing changed). `found`: the matches of
    `pattern.finditer(text)` when the caller finds them another way."""
    parts: list[str] = []
    pieces: list[tuple[int, int, bool]] = []  # (new offset, old offset, copied one for one)
    at = pos = 0
    for m in pattern.finditer(text) if found is None else found:
        got = repl(m)
        if got == m.group():
            continue
        pieces += [(pos, at, True), (pos + m.start() - at, m.start(), False)]
        parts += [text[at:m.start()], got]
        pos += m.start() - at + len(got)
        at = m.end()
    if not pieces:
        return text, None
    pieces.append((pos, at, True))
    parts.append(text[at:])
    new, old, exact = zip(*pieces)
    return "".join(parts), _Map(new, old, exact)


@lru_cache(maxsize=1)
def _foldable() -> re.Pattern[str]:
    """Runs of the characters that the fold table changes."""
    points = sorted(_fold_table())
    ranges, lo = [], points[0]
    for a, b in zip(points, points[1:] + [-1]):
        if b != a + 1:
            ranges.append(re.escape(chr(lo)) + ("-" + re.escape(chr(a)) if a != lo else ""))
            lo = b
    return re.compile("[" + "".join(ranges) + "]+")


def _fold_run(m: re.Match[str]) -> str:
    return m.group().translate(_fold_table())


def _is_mark(text: str, m: re.Match[str]) -> bool:
    """Whether a run of `*`, `_`, `~~` or a hyphenated line break found by _MARKS is emphasis or a split word."""
    before = text[m.start() - 1] if m.start() else " "
    after = text[m.end()] if m.end() < len(text) else " "
    mark = m.group()[0]
    if mark == "-":
        return before.isalpha() and after.islower()
    if mark == "_":
        return not (before in _WORD_CHARS and after in _WORD_CHARS)
    return mark == "~" or not (before.isspace() and after.isspace())


def _leet_words(shape: bytes) -> list[tuple[int, int]]:
    """The words (runs of ASCII letters and digits) that hold a leetspeak digit beside a letter, in order, found in
    the text's _WORD_SHAPE."""
    words: list[tuple[int, int]] = []
    for at in sorted({*_occurrences(shape, b"al", 1), *_occurrences(shape, b"la", 0)}):  # the digit's place
        if words and at < words[-1][1]:
            continue
        end = shape.find(b" ", at)
        words.append((shape.rfind(b" ", 0, at) + 1, len(shape) if end < 0 else end))
    return words


def _occurrences(data: AnyStr, needle: AnyStr, shift: int = 0) -> Iterator[int]:
    """Where `needle` occurs in `data` (overlapping occurrences too), each place plus `shift`."""
    at = data.find(needle)
    while at >= 0:
        yield at + shift
        at = data.find(needle, at + 1)


def _leet(text: str, shape: bytes) -> str:
    """Leetspeak digits read as letters (length kept) in words that mix letters and digits: words of four
    characters and more with two letters, and on a line that holds one of those, the short words too
    (`D0 n0t t3ll`). `shape`: the text's _WORD_SHAPE."""
    words = _leet_words(shape)
    long = {(lo, hi) for lo, hi in words if hi - lo >= 4 and shape.count(b"a", lo, hi) >= 2}
    if not long:
        return text
    line_of, line, last = [], 0, 0
    for lo, _hi in words:
        line, last = line + text.count("\n", last, lo), lo
        line_of.append(line)
    lines = {line_of[i] for i, w in enumerate(words) if w in long}
    picked = [w for i, w in enumerate(words) if w in long or line_of[i] in lines]
    out, at = [], 0
    for lo, hi in picked:
        out += [text[at:lo], text[lo:hi].translate(_LEET)]
        at = hi
    return "".join(out) + text[at:]


def _fold_compat(t: str, step: Callable[[str, re.Pattern[str], Callable[[re.Match[str]], str]], str],
                 unusual: bool) -> str:
    """NFKC and look-alikes: the whole text at once when that keeps its length (offsets stay put), else run by run.
    `unusual`: whether the text holds a character outside ordinary prose (else no look-alike is looked for)."""
    n = _nfkc(t)
    if len(n) == len(t):
        return n.translate(_LOOKALIKE_TABLE) if unusual and _LOOKALIKE_HINT.search(n) else n
    t = _foldable().sub(_fold_run, t)
    return step(t, _OTHER, _nfkc_char) if unusual and _OTHER.search(t) else t


# The full-width forms of ASCII and the ideographic space: the characters of Chinese prose that NFKC changes.
_FULL_WIDTH: Final = re.compile("[\u3000\uff01-\uff5e]")
_FULL_WIDTH_NFKC: Final = {chr(c): unicodedata.normalize("NFKC", chr(c)) for c in (0x3000, *range(0xFF01, 0xFF5F))}


def _nfkc(t: str) -> str:
    """NFKC of `t`. Full-width punctuation is folded first, one character for one (NFKC of the result is NFKC of
    `t`), so that Chinese prose is often NFKC already, which `is_normalized` tells at once."""
    quick, m = t, _FULL_WIDTH.search(t)
    while m:  # a few distinct ones, each replaced in one pass (one for one: the next one is after this one)
        quick = quick.replace(m.group(), _FULL_WIDTH_NFKC[m.group()])
        m = _FULL_WIDTH.search(quick, m.start())
    return quick if unicodedata.is_normalized("NFKC", quick) else unicodedata.normalize("NFKC", quick)


def _nfkc_char(m: re.Match[str]) -> str:
    return unicodedata.normalize("NFKC", m.group())


def _joined(m: re.Match[str]) -> str:
    return m.group().replace(m.group(1) if m.re.groups else " ", "")


def _entity(m: re.Match[str]) -> str:
    return html.unescape(m.group())


def _marks(t: str) -> Iterator[re.Match[str]]:
    """What `_MARKS.finditer(t)` finds: every match starts where `*`, `_`, `~` or `-\\n` does (found by substring
    searches), and is tried there, in order, past the end of the one before."""
    end = 0
    for at in sorted(itertools.chain.from_iterable(_occurrences(t, s) for s in _MARK_STARTS)):
        if at >= end and (m := _MARKS.match(t, at)):
            end = m.end()
            yield m


def fold(text: str) -> View:
    """`text` folded for matching (see the module's docstring), with its map back."""
    maps: list[_Map] = []

    def step(t: str, pattern: re.Pattern[str], repl: Callable[[re.Match[str]], str],
             found: Iterable[re.Match[str]] | None = None) -> str:
        out, m = rewrite(t, pattern, repl, found)
        if m is not None:
            maps.append(m)
        return out

    unusual = not text.isascii() and _UNUSUAL.search(text) is not None
    invisible = unusual and INVISIBLE.search(text) is not None
    t = step(text, INVISIBLE, lambda m: "") if invisible else text
    if not t.isascii():
        t = _fold_compat(t, step, unusual)
    if "&" in t:
        t = step(t, _ENTITY, _entity)
    data = charshape.utf8(t)
    shape = charshape.shape(data, _SPACED_SHAPE)
    for hint, spaced in _SPACED:
        if hint in shape and (joined := step(t, spaced, _joined)) is not t:
            t, data = joined, charshape.utf8(joined)  # changed: its shape is taken again
            shape = charshape.shape(data, _SPACED_SHAPE)
    t = _leet(t, charshape.shape(data, _WORD_SHAPE))
    t = step(t, _MARKS, lambda m: "" if _is_mark(m.string, m) else m.group(), _marks(t))
    return View(_SOFT_BREAK.sub(" ", t), text, tuple(maps), invisible)


def visible(text: str) -> str:
    """`text` with invisible characters written as \\uXXXX escapes, so a person can see them."""
    return INVISIBLE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
