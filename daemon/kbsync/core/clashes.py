"""A conflict shown as what changed, pure: for the board and the memory files, each entry of the conflict
copy beside the file's entry with its key, field by field; for a session, section by section. And the
file that a person's picks leave (each entry the copy's, the file's, or as the person edited it), or the
text a person wrote for the whole file, checked before it is written.

`theirs` is the file as it stands, `mine` the conflict copy's text (see kbsync.core.conflictmerge).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from kbsync.core import board, conflictmerge, facts, frontmatter, protocol
from kbsync.core.boardentry import Entry, entry_from_fields, parse_entry
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
    start: str = ""  # what an edit by hand starts from: the copy's entry or fact as written ("" for a section)


def clashes(relpath: str, theirs: str, mine: str) -> list[Clash]:
    """What differs, entry by entry (board, memory files) or section by section (a session); [] for other
    files (they are shown line by line)."""
    if relpath == protocol.BOARD_MD:
        have = {b.entry.key: b.entry for b in board.parse_board(theirs).entries()}
        return [Clash(b.entry.key, _entry_fields(have.get(b.entry.key), b.entry), True, _ending(b.raw).rstrip("\n") + "\n")
                for b in board.parse_board(mine).entries()]
    if facts.is_entry_file(relpath):
        ours = facts.parse(theirs)
        return [Clash(f.name, (Field("value", _fact_text(ours.find(f.name)), _fact_text(f)),), True, _ending(f.raw))
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


def picked(relpath: str, theirs: str, mine: str, picks: Mapping[str, str],
           edits: Mapping[str, str] | None = None) -> str:
    """The file after each entry or fact `picks` names takes its side: "mine" the copy's version, "edited" the
    person's text for it in `edits` (the entry as the board writes it, the fact's bullet), "theirs" the file's
    (the file's stays for the others too): the board or a memory file. ValueError saying what to change for
    another file, a pick that names nothing, or an edit that is not a valid entry or fact under its own key."""
    wanted = {k for k, side in picks.items() if side == "mine"}
    edited = {k: (edits or {}).get(k, "") for k, side in picks.items() if side == "edited"}
    unknown = set(picks) - {c.key for c in clashes(relpath, theirs, mine) if c.pickable}
    if unknown:
        raise ValueError(f"no entry of the copy is named {sorted(unknown)[0]!r}")
    if relpath == protocol.BOARD_MD:
        text = theirs
        taken = [b.entry for b in board.parse_board(mine).entries() if b.entry.key in wanted]
        for e in taken + [edited_entry(k, raw) for k, raw in edited.items()]:
            text = board.upsert(text, e)[0]
        return text
    if facts.is_entry_file(relpath):
        chosen = "".join(conflictmerge.eol(f.raw) for f in facts.parse(mine).facts() if f.name in wanted)
        chosen += "".join(edited_fact(k, raw) for k, raw in edited.items())
        return conflictmerge.kept(relpath, theirs, chosen, "mine") if chosen else theirs
    raise ValueError(f"{relpath}: only the board's entries and the memory files' facts are taken one by one")


def _ending(text: str) -> str:
    return text.replace("\r\n", "\n")


def edited_entry(key: str, raw: str) -> Entry:
    """The board entry a person wrote for `key` (as LEARNING_BOARD.md writes one: `### title`, the fields, the
    core content); ValueError naming the first problem, as the entry form would, or a changed key."""
    e = parse_entry(_ending(raw).strip("\n") + "\n").entry
    if e.key != key:
        raise ValueError(f"{key}: your edit changes its title or date, so its key, to {e.key!r}; keep them here "
                         "and rename the entry on its edit page afterwards")
    fields = {name: getattr(e, name) for name in ENTRY_FIELDS if name != "scenarios"}
    _ok, problems = entry_from_fields({**fields, "scenarios": list(e.scenarios)})
    if problems:
        raise ValueError(f"{key}: {problems[0][1]}")
    return e


def edited_fact(key: str, raw: str) -> str:
    """The fact a person wrote for `key`: one bullet (`- key: value`, continuation lines indented below it)
    under the same key; ValueError saying what to change."""
    ff = facts.parse(_ending(raw).strip("\n") + "\n")
    found = ff.facts()
    if len(found) != 1 or ff.frame().strip():
        raise ValueError(f"{key}: write the fact as one bullet, `- {key}: value` (continuation lines indented "
                         "below it)")
    if found[0].key != facts.normalize_key(key):
        raise ValueError(f"{key}: your edit names another key ({found[0].name!r}); keep the key here, and set the "
                         "other fact on the Memory page")
    facts.check_value(found[0].value)
    return conflictmerge.eol(found[0].raw)


def by_hand(relpath: str, text: str) -> str:
    """The text a person wrote for the whole of `relpath` (a session, or another file whose copy is not entry by
    entry), as it will be written; ValueError saying what to change: a session must parse, and must not say
    `status: conflict` any more."""
    from kbsync.core.session import parse_session

    if relpath == protocol.BOARD_MD or facts.is_entry_file(relpath):
        raise ValueError(f"{relpath}: take each entry's side, or edit each entry in its own box")
    text = _ending(text)
    if protocol.classify(relpath) == "session":
        try:
            parse_session(text)
        except ProtocolError as exc:
            raise ValueError(f"{relpath}: {exc.message}") from exc
        sp = frontmatter.split(text)
        fields = frontmatter.parse(sp.lines).mapping if sp.state == "ok" else None
        if fields and fields.get("status") == "conflict":
            raise ValueError(f"{relpath}: the text still says status: conflict; set it to open or closed")
    return text
