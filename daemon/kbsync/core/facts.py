"""The memory entry files (memory/facts.md, memory/preferences.md, memory/entities/<slug>.md), pure.

One bullet a fact: `- KEY: VALUE`. The key is the text before the first colon
(`:` followed by a space or the line's end, or the full-width `：`), read without emphasis marks, case or runs of
space; a bullet without a colon is keyed by its whole text. A bullet's
indented lines that follow belong to it. `*` and `+` bullets are read like
`-`. Everything that is no entry (the heading, blank lines, other headings) is
the file's frame. Parsing keeps every byte: rendering a parsed file gives the
same text. See docs/protocol.md ("Memory files").
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Iterable, TypeVar, Union

from kbsync.core import limits, protocol
from kbsync.core.findings import Finding

if TYPE_CHECKING:
    from kbsync.results import FactAction

_BULLET = re.compile(r"^[-*+][ \t]+(.*?)\s*$")
_SEPARATOR = re.compile(r":(?=\s|$)|：")  # `10:30` and `https://` hold no separator
_EMPHASIS = "*_`"
_UNSAFE_SLUG = re.compile(r'[/\\:*?"<>|\x00-\x1f\x7f]')
MAX_SLUG: Final = 60
MAX_KEY: Final = 200


@dataclass(frozen=True)
class Fact:
    name: str  # the key as written
    value: str  # the text after the separator (continuation lines not included)
    raw: str  # the bullet line and its continuation lines, as written
    line: int  # 1-based line of the bullet

    @property
    def key(self) -> str:
        return normalize_key(self.name)


Block = Union[str, Fact]  # a frame line (with its line ending) or an entry


@dataclass(frozen=True)
class FactFile:
    blocks: tuple[Block, ...]

    def facts(self) -> list[Fact]:
        return [b for b in self.blocks if isinstance(b, Fact)]

    def frame(self) -> str:
        """The file without its entries: what is around them."""
        return "".join(b for b in self.blocks if isinstance(b, str))

    def render(self) -> str:
        return "".join(b if isinstance(b, str) else b.raw for b in self.blocks)

    def find(self, key: str) -> Fact | None:
        wanted = normalize_key(key)
        return next((f for f in self.facts() if f.key == wanted), None)


def is_entry_file(relpath: str) -> bool:
    """memory/facts.md, memory/preferences.md and memory/entities/<slug>.md (conflict copies included)."""
    p = protocol.original_of(relpath)
    if p in (protocol.FACTS_MD, protocol.PREFERENCES_MD):
        return True
    folder, _, name = p.rpartition("/")
    return folder == protocol.ENTITIES_DIR and name.endswith(".md") and not name.startswith(".")


def normalize_key(name: str) -> str:
    """The key a fact is found and merged by: NFC, emphasis marks stripped, case and spaces folded."""
    text = unicodedata.normalize("NFC", name).strip().strip(_EMPHASIS).strip()
    return " ".join(text.casefold().split())


def split_fact(text: str) -> tuple[str, str]:
    """(key as written, value) of a bullet's text; the whole text is the key when there is no separator."""
    m = _SEPARATOR.search(text)
    if m is None:
        return text, ""
    return text[: m.start()].strip(), text[m.end():].strip()


def parse(text: str) -> FactFile:
    """The file as frame lines and entries; lossless."""
    blocks: list[Block] = []
    lines = text.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        m = _BULLET.match(lines[i])
        if m is None:
            blocks.append(lines[i])
            i += 1
            continue
        end = i + 1
        while end < len(lines) and lines[end][:1] in (" ", "\t") and lines[end].strip():
            end += 1
        name, value = split_fact(m.group(1))
        blocks.append(Fact(name, value, "".join(lines[i:end]), i + 1))
        i = end
    return FactFile(tuple(blocks))


def keyed(ff: FactFile) -> dict[str, Fact]:
    """Every entry by key; a key written again is told apart by its occurrence (`key\\x00 2`)."""
    return by_occurrence((fact.key, fact) for fact in ff.facts())


T = TypeVar("T")


def by_occurrence(items: Iterable[tuple[str, T]]) -> dict[str, T]:
    """Keyed items (facts, board entries) by key, a key written again told apart by its occurrence
    (`key\\x00 2`, `key\\x00 3` …), so that no item hides another of the same key."""
    out: dict[str, T] = {}
    for first, item in items:
        key, n = first, 1
        while key in out:
            n += 1
            key = f"{first}\x00{n}"
        out[key] = item
    return out


def key_name(key: str) -> str:
    """The key as written, from a by_occurrence key."""
    return key.split("\x00", 1)[0]


# ---- writing ---------------------------------------------------------------------------

def check_key(name: str) -> str:
    """The key as it will be written; ValueError saying what is wrong with it."""
    text = unicodedata.normalize("NFC", name).strip()
    if not normalize_key(text):
        raise ValueError("the key is empty; give the fact's name, e.g. `language`")
    if _SEPARATOR.search(text) or not limits.one_line(text) or _has_control(text):
        raise ValueError(f"the key {limits.shown(name)} holds a colon, a line break or a control character; use a "
                         "plain name")
    if len(text) > MAX_KEY or text[0] in "-*+#>":
        raise ValueError(f"the key {limits.shown(name)} is over {MAX_KEY} characters or starts with Markdown "
                         "punctuation")
    return text


def check_value(value: str) -> str:
    if len(value) > limits.LINE:
        raise ValueError(f"the value is {len(value):,} characters, over the {limits.LINE:,} a fact may hold; keep "
                         "the fact short and put the rest in a session or an artifact")
    text = unicodedata.normalize("NFC", value).strip()
    if not limits.one_line(text) or _has_control(text):
        raise ValueError("the value holds a line break or a control character; a fact is one line")
    return text


def _has_control(text: str) -> bool:
    return any(unicodedata.category(ch) == "Cc" and ch != "\t" for ch in text)


def fact_line(name: str, value: str) -> str:
    return f"- {name}: {value}\n" if value else f"- {name}\n"


def set_fact(text: str, name: str, value: str, heading: str) -> tuple[str, FactAction]:
    """`text` with the fact `name` set to `value`: replaced in place (later duplicates of the key removed) or
    appended after the last entry; (new text, "added" | "replaced" | "unchanged"). `heading` starts a new file."""
    name, value = check_key(name), check_value(value)
    ff = parse(text or heading)
    line = fact_line(name, value)
    old = ff.find(name)
    if old is not None and old.raw == line and sum(f.key == old.key for f in ff.facts()) == 1:
        return text, "unchanged"
    if old is None:
        return insert_after_last(ff, [line]).render(), "added"
    blocks = [line if b is old else b for b in ff.blocks if not (isinstance(b, Fact) and b.key == old.key and b is not old)]
    return "".join(b if isinstance(b, str) else b.raw for b in blocks), "replaced"


def forget(text: str, name: str) -> tuple[str, int]:
    """`text` without the facts keyed `name`; how many were removed."""
    ff = parse(text)
    wanted = normalize_key(name)
    kept = tuple(b for b in ff.blocks if not (isinstance(b, Fact) and b.key == wanted))
    return FactFile(kept).render(), len(ff.blocks) - len(kept)


def insert_after_last(ff: FactFile, raws: list[str]) -> FactFile:
    """`ff` with entries (raw texts) added right after its last entry, or at its end when it has none."""
    if not raws:
        return ff
    blocks = list(ff.blocks)
    last = max((i for i, b in enumerate(blocks) if isinstance(b, Fact)), default=len(blocks) - 1)
    if 0 <= last < len(blocks):
        blocks[last] = _with_eol(blocks[last])
    added = list(parse("".join(_ensure_eol(r) for r in raws)).blocks)
    return FactFile(tuple(blocks[: last + 1] + added + blocks[last + 1:]))


def _ensure_eol(raw: str) -> str:
    return raw if raw.endswith("\n") else raw + "\n"


def _with_eol(block: Block) -> Block:
    if isinstance(block, str):
        return _ensure_eol(block)
    return dataclasses.replace(block, raw=_ensure_eol(block.raw))


def entity_slug(name: str) -> str:
    """The file-name form of an entity's name (`Project Alpha` → `project-alpha`, `王五` → `王五`)."""
    if len(name) > limits.NAME:
        raise ValueError(f"the entity name is {len(name):,} characters, over the {limits.NAME} it may hold")
    text = _UNSAFE_SLUG.sub("", unicodedata.normalize("NFC", name).strip()).lower()
    text = re.sub(r"-{2,}", "-", re.sub(r"\s+", "-", text))[:MAX_SLUG].strip("-.")
    if not text or protocol.CONFLICT_RE.search(text + ".md"):
        raise ValueError(f"the entity name {limits.shown(name)} leaves no usable file name; use letters or digits")
    return text


def entity_relpath(name: str) -> str:
    return f"{protocol.ENTITIES_DIR}/{entity_slug(name)}.md"


# ---- validation and repair ---------------------------------------------------------------

REPAIR_HINT = "a fact is one bullet (`- key: value`)"


def _plain_lines(ff: FactFile) -> list[int]:
    """0-based indexes of frame lines that are neither blank, nor a heading, nor indented: facts without a bullet."""
    return [i for i, b in enumerate(ff.blocks) if isinstance(b, str) and b.strip()
            and not b.startswith(("#", " ", "\t", ">", "<!--"))]


def findings(relpath: str, text: str) -> list[Finding]:
    ff = parse(text)
    plain = set(_plain_lines(ff))
    out: list[Finding] = []
    line = 1
    for i, b in enumerate(ff.blocks):
        if i in plain:
            out.append(Finding(relpath, line, "error", f"{REPAIR_HINT}; run `kbsync repair {relpath}` to make it one"))
        line += (b if isinstance(b, str) else b.raw).count("\n")
    seen: dict[str, int] = {}
    for fact in ff.facts():
        if fact.key in seen:
            out.append(Finding(relpath, fact.line, "warning",
                               f"the key {fact.name!r} is also on line {seen[fact.key]}; keep one (`kbsync memory set` does)"))
        seen.setdefault(fact.key, fact.line)
    return sorted(out, key=lambda f: f.line)


def repair(text: str) -> tuple[str, list[str]]:
    """Each fact written without a bullet becomes one (`- ` put in front); nothing else changes."""
    ff = parse(text)
    plain = set(_plain_lines(ff))
    if not plain:
        return text, []
    blocks = ["- " + b if i in plain and isinstance(b, str) else b for i, b in enumerate(ff.blocks)]
    fixed = "".join(b if isinstance(b, str) else b.raw for b in blocks)
    return fixed, [f"made {len(plain)} line(s) into fact bullets"]
