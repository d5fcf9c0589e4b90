"""Integration rules for sync, as a pure planner used identically by both transports.

Given, for every path where the local and the remote trees differ, its three
versions (the common base, local, remote), decide what the path holds after
the sync and what must be saved as a conflict copy:

- a path changed on one side only takes that side;
- append-only files (index.md, logs/*.md) keep both sides' new lines: the
  remote's text, then the local lines it lacks;
- LEARNING_BOARD.md is merged entry by entry (key `title + source_date`, a key
  written twice told apart by its occurrence); an entry changed on both sides
  keeps the remote's version and the local one goes to a conflict copy, as does
  the text around the entries when both changed it;
- the memory entry files (memory/facts.md, memory/preferences.md,
  memory/entities/*.md) are merged fact by fact (kbsync.core.facts keys), by the
  same rule as the board's entries;
- any other file changed on both sides keeps the remote's version at the path,
  and the local version is saved as a conflict copy. Nothing is merged inside it.

A file that `kbsync init` wrote and nobody changed (its skeleton) yields to the
remote's version. Nothing here touches the disk.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass
from typing import Mapping

from kbsync.core import board, facts, protocol


@dataclass(frozen=True)
class Versions:
    """One path's bytes at the common base, locally and remotely (None: absent)."""

    base: bytes | None
    local: bytes | None
    remote: bytes | None


@dataclass(frozen=True)
class Conflict:
    """The remote's version stays at `relpath`; `local` is to be saved beside it as a conflict copy."""

    relpath: str
    local: bytes
    what: str


@dataclass(frozen=True)
class Plan:
    merged: dict[str, bytes | None]  # every path given, with what it holds after the sync (None: absent)
    conflicts: tuple[Conflict, ...]

    def local_writes(self, changes: Mapping[str, Versions]) -> dict[str, bytes | None]:
        """The paths whose content must change locally, with their new bytes (None: delete)."""
        return {p: data for p, data in self.merged.items() if data != changes[p].local}


def is_append_only(relpath: str) -> bool:
    return relpath == protocol.INDEX_MD or (relpath.startswith("logs/") and relpath.endswith(".md") and relpath.count("/") == 1)


def plan(changes: Mapping[str, Versions], skeleton: Mapping[str, bytes] | None = None) -> Plan:
    """The result of integrating every path of `changes`; see the module docstring."""
    merged: dict[str, bytes | None] = {}
    conflicts: list[Conflict] = []
    for relpath in sorted(changes):
        data, found = integrate_path(relpath, changes[relpath], (skeleton or {}).get(relpath))
        merged[relpath] = data
        conflicts += found
    return Plan(merged, tuple(conflicts))


def integrate_path(relpath: str, v: Versions, skeleton: bytes | None = None) -> tuple[bytes | None, list[Conflict]]:
    """One path's content after the sync, and the conflict copies it needs.

    A path new on both sides is compared with what `init` writes there (`skeleton`),
    so an untouched skeleton file yields to the other side's version.
    """
    if v.base is None and skeleton is not None and v.local is not None and v.remote is not None:
        v = Versions(skeleton, v.local, v.remote)
    if v.local == v.remote or v.local == v.base:
        return v.remote, []
    if v.remote == v.base:
        return v.local, []
    if is_append_only(relpath):
        return union(v.base, v.local, v.remote), []
    if relpath == protocol.BOARD_MD and v.local is not None and v.remote is not None:
        return merge_board(v.base or b"", v.local, v.remote)
    if facts.is_entry_file(relpath) and not protocol.is_conflict_copy(relpath) and v.local is not None and v.remote is not None:
        return merge_facts(relpath, v.base or b"", v.local, v.remote)
    if v.local is None:
        return v.remote, []  # deleted here, changed there: the changed version stays, nothing is lost
    return v.remote, [Conflict(relpath, v.local, both_sides(v))]


def both_sides(v: Versions) -> str:
    """What happened to a path both sides changed, as the conflict's log line says it."""
    if v.remote is None:
        return "changed here, deleted on the remote"
    return "added on both sides" if v.base is None else "changed on both sides"


# ---- append-only files ----------------------------------------------------------------

def _lines(data: bytes | None) -> list[bytes]:
    return (data or b"").splitlines(keepends=True)


def _added(lines: list[bytes], base: list[bytes]) -> list[bytes]:
    """Lines of `lines` beyond those of `base` (as a multiset), in order."""
    left = Counter(base)
    out = []
    for line in lines:
        if left[line] > 0:
            left[line] -= 1
        else:
            out.append(line)
    return out


def union(base: bytes | None, local: bytes | None, remote: bytes | None) -> bytes:
    """The remote's lines, then each line the local side added that the remote side did not add too."""
    b = [_eol(x) for x in _lines(base)]
    r = [_eol(x) for x in _lines(remote)]
    theirs = Counter(_added(r, b))
    mine = []
    for line in _added([_eol(x) for x in _lines(local)], b):
        if theirs[line] > 0:
            theirs[line] -= 1
        else:
            mine.append(line)
    return b"".join(_lines(remote)[:-1] + r[-1:] + mine) if r else b"".join(mine)


def _eol(line: bytes) -> bytes:
    return line if line.endswith(b"\n") else line + b"\n"


# ---- the board ---------------------------------------------------------------------------

def _entries(b: board.Board) -> dict[str, str]:
    """The board's entries by key; an entry whose key another holds too (a person's two drafts) is told apart by
    its occurrence, as the memory files' facts are, so the merge never reduces two to one."""
    return facts.by_occurrence((e.entry.key, e.raw.rstrip("\r\n")) for e in b.entries())


def _frame(b: board.Board) -> str:
    """The board without its entries: what is around them."""
    sections = tuple(dataclasses.replace(s, entries=()) for s in b.sections)
    return board.render_board(dataclasses.replace(b, sections=sections))


def merge_keyed(base: Mapping[str, str], local: Mapping[str, str], remote: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """Keyed entries merged: each key's result (remote order first, then the keys only this side has) and the
    keys changed differently on both sides (their result is the remote's; the local ones go to a copy)."""
    result: dict[str, str] = {}
    clashes: list[str] = []
    for key in list(remote) + [k for k in local if k not in remote]:
        mine, theirs, old = local.get(key), remote.get(key), base.get(key)
        kept = theirs if mine == old or mine == theirs else mine if theirs == old else theirs
        if kept is not None:
            result[key] = kept
        if mine not in (old, theirs) and theirs != old and mine is not None:
            clashes.append(key)
    return result, clashes


def _clash_what(keys: list[str], names: Mapping[str, str], base: Mapping[str, str]) -> str:
    added = all(k not in base for k in keys)
    shown = (names.get(k, facts.key_name(k)) for k in keys)
    return f"entries {', '.join(shown)} {'added' if added else 'changed'} on both sides"


def merge_board(base: bytes, local: bytes, remote: bytes) -> tuple[bytes | None, list[Conflict]]:
    """Entry by entry; the whole file as a conflict when the text around the entries changed on both sides."""
    try:
        texts = [x.decode("utf-8") for x in (base, local, remote)]
    except UnicodeDecodeError:
        return remote, [Conflict(protocol.BOARD_MD, local, "changed on both sides")]
    b, l, r = (board.parse_board(t) for t in texts)
    if _frame(l) != _frame(r) and _frame(l) != _frame(b) and _frame(r) != _frame(b):
        return remote, [Conflict(protocol.BOARD_MD, local, "changed on both sides")]
    eb, el = _entries(b), _entries(l)
    result, clashes = merge_keyed(eb, el, _entries(r))
    frame_from = l if _frame(r) == _frame(b) else r
    text = _with_entries(frame_from, [board.parse_entry(raw + "\n") for raw in result.values()])
    if not clashes:
        return text.encode("utf-8"), []
    copy = _conflict_board(l, clashes).encode("utf-8")
    return text.encode("utf-8"), [Conflict(protocol.BOARD_MD, copy, _clash_what(clashes, {}, eb))]


def _with_entries(frame: board.Board, blocks: list[board.EntryBlock]) -> str:
    """`frame` with its (last) records section holding exactly `blocks`."""
    records = [i for i, s in enumerate(frame.sections) if s.name == board.RECORDS]
    if not records:
        frame = board.parse_board(board.repair_board(board.render_board(frame))[0])
        records = [i for i, s in enumerate(frame.sections) if s.name == board.RECORDS]
    last = records[-1]
    sections = []
    for i, s in enumerate(frame.sections):
        if s.name != board.RECORDS:
            sections.append(s)
            continue
        entries = tuple(blocks) if i == last else ()
        spaced = _spaced_blocks(entries, i + 1 < len(frame.sections))
        sections.append(dataclasses.replace(s, intro=_spaced(s.intro, bool(entries)), entries=spaced))
    return board.render_board(dataclasses.replace(frame, sections=tuple(sections)))


def _spaced(intro: str, before_entries: bool) -> str:
    """A section's intro ending in a blank line when entries follow it."""
    if not before_entries:
        return intro
    body = intro.rstrip("\n")
    return (body + "\n\n") if body else "\n"


def _spaced_blocks(blocks: tuple[board.EntryBlock, ...], more_follow: bool) -> tuple[board.EntryBlock, ...]:
    """Entry blocks separated by one blank line; the last one ends the file with one newline."""
    out = []
    for n, blk in enumerate(blocks):
        tail = "\n\n" if n + 1 < len(blocks) or more_follow else "\n"
        out.append(dataclasses.replace(blk, raw=blk.raw.rstrip("\r\n") + tail))
    return tuple(out)


def _conflict_board(local: board.Board, keys: list[str]) -> str:
    """The local board with only the entries in conflict: a valid board a person can compare."""
    entries = _entries(local)
    return _with_entries(local, [board.parse_entry(entries[k] + "\n") for k in keys])


# ---- the memory entry files --------------------------------------------------------------

def _raws(ff: facts.FactFile) -> dict[str, str]:
    return {k: f.raw for k, f in facts.keyed(ff).items()}


def merge_facts(relpath: str, base: bytes, local: bytes, remote: bytes) -> tuple[bytes | None, list[Conflict]]:
    """Fact by fact, as the board's entries; the whole file as a conflict when its frame changed on both sides.

    The result keeps the structure (and entry order) of the side whose frame is taken, each entry holding its
    merged version; the entries only the other side has follow its last entry, in that side's order."""
    try:
        b, l, r = (facts.parse(x.decode("utf-8")) for x in (base, local, remote))
    except UnicodeDecodeError:
        return remote, [Conflict(relpath, local, "changed on both sides")]
    if l.frame() != r.frame() and b.frame() not in (l.frame(), r.frame()):
        return remote, [Conflict(relpath, local, "added on both sides" if not base else "changed on both sides")]
    eb, el, er = _raws(b), _raws(l), _raws(r)
    result, clashes = merge_keyed(eb, el, er)
    shape = l if r.frame() == b.frame() != l.frame() else r  # the remote's, unless only this side changed the frame
    text = _fill(shape, result).render().encode("utf-8")
    if not clashes:
        return text, []
    names = {k: f.name for k, f in facts.keyed(l).items()}
    return text, [Conflict(relpath, _only(l, set(clashes)).render().encode("utf-8"), _clash_what(clashes, names, eb))]


def _fill(shape: facts.FactFile, result: Mapping[str, str]) -> facts.FactFile:
    """`shape` with each entry holding its merged version (dropped when deleted), then the other side's new ones."""
    keys = {id(f): k for k, f in facts.keyed(shape).items()}
    blocks: list[facts.Block] = []
    for block in shape.blocks:
        if isinstance(block, str):
            blocks.append(block)
        elif keys[id(block)] in result:
            blocks.append(dataclasses.replace(block, raw=result[keys[id(block)]]))
    placed = set(keys.values())
    return facts.insert_after_last(facts.FactFile(tuple(blocks)), [raw for k, raw in result.items() if k not in placed])


def _only(ff: facts.FactFile, keys: set[str]) -> facts.FactFile:
    """`ff` holding only the entries keyed `keys`: the conflict copy a person compares."""
    wanted = {id(f) for k, f in facts.keyed(ff).items() if k in keys}
    return facts.FactFile(tuple(b for b in ff.blocks if isinstance(b, str) or id(b) in wanted))
