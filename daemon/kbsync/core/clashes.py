"""A conflict shown as what changed, pure: for the board and the memory files, each entry of the conflict
copy beside the file's entry with its key, field by field; for a session, section by section. And the
file that keeping some entries' copies (a person's picks) leaves.

`theirs` is the file as it stands, `mine` the conflict copy's text (see kbsync.core.conflictmerge).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from kbsync.core import board, conflictmerge, facts, protocol
from kbsync.core.boardentry import Entry
from kbsync.errors import ProtocolError

ENTRY_FIELDS = ("title", "type", "topic", "summary", "core_content", "source", "source_date", "scenarios",
                "confidence", "status")


@dataclass(frozen=True)
class Field:
    name: str
    theirs: str | None  # None: the file has no such entry (or section)
    mine: str | None  # None: the copy has none

    @property
    def changed(self) -> bool:
        return self.theirs != self.mine


@dataclass(frozen=True)
class Clash:
    key: str  # the entry's key, the fact's key or the section's heading
    fields: tuple[Field, ...]  # every field of the entry (a fact or a section: one, "value" or "text")
    pickable: bool  # whether the person can take this clash's side alone (board entries and facts)


def clashes(relpath: str, theirs: str, mine: str) -> list[Clash]:
    """What differs, entry by entry (board, memory files) or section by section (a session); [] for other
    files (they are shown line by line)."""
    if relpath == protocol.BOARD_MD:
        have = {b.entry.key: b.entry for b in board.parse_board(theirs).entries()}
        return [Clash(e.key, _entry_fields(have.get(e.key), e), True)
                for e in (b.entry for b in board.parse_board(mine).entries())]
    if facts.is_entry_file(relpath):
        ours = facts.parse(theirs)
        return [Clash(f.name, (Field("value", _fact_text(ours.find(f.name)), _fact_text(f)),), True)
                for f in facts.parse(mine).facts()]
    if protocol.classify(relpath) == "session":
        return _sections(theirs, mine)
    return []


def _entry_fields(theirs: Entry | None, mine: Entry) -> tuple[Field, ...]:
    def text(e: Entry | None, name: str) -> str | None:
        if e is None:
            return None
        value = getattr(e, name)
        return "\n".join(value) if isinstance(value, tuple) else str(value)
    return tuple(Field(n, text(theirs, n), text(mine, n)) for n in ENTRY_FIELDS)


def _fact_text(f: facts.Fact | None) -> str | None:
    if f is None:
        return None
    rest = f.raw.splitlines()[1:]
    return "\n".join([f.value, *(line.strip() for line in rest)]).strip()


def _sections(theirs: str, mine: str) -> list[Clash]:
    from kbsync.core.session import parse_session

    try:
        old, new = dict(parse_session(theirs).sections), dict(parse_session(mine).sections)
    except ProtocolError:
        return []
    heads = list(dict.fromkeys([*old, *new]))
    return [Clash(h, (Field("text", old.get(h), new.get(h)),), False) for h in heads
            if (old.get(h) or "").strip() != (new.get(h) or "").strip()]


def picked(relpath: str, theirs: str, mine: str, picks: Mapping[str, str]) -> str:
    """The file after taking the copy's version of each entry or fact picked "mine" (the file's stays for
    the others): the board or a memory file. ValueError for another file, or a pick that names nothing."""
    wanted = {k for k, side in picks.items() if side == "mine"}
    unknown = set(picks) - {c.key for c in clashes(relpath, theirs, mine) if c.pickable}
    if unknown:
        raise ValueError(f"no entry of the copy is named {sorted(unknown)[0]!r}")
    if relpath == protocol.BOARD_MD:
        text = theirs
        for e in (b.entry for b in board.parse_board(mine).entries() if b.entry.key in wanted):
            text = board.upsert(text, e)[0]
        return text
    if facts.is_entry_file(relpath):
        chosen = "".join(conflictmerge.eol(f.raw) for f in facts.parse(mine).facts() if f.name in wanted)
        return conflictmerge.kept(relpath, theirs, chosen, "mine") if chosen else theirs
    raise ValueError(f"{relpath}: only the board's entries and the memory files' facts are taken one by one")
