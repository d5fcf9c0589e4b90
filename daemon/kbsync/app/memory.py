"""Facts: set, get, list and forget the keyed bullets of memory/facts.md, memory/preferences.md and
memory/entities/<slug>.md (the format is kbsync.core.facts'; see docs/protocol.md, "Memory files").

Every write holds the file's lock, re-checks its fingerprint, keeps a backup and
replaces the file atomically (kbsync.store.guardededit); the result is checked
against the validator before it stays.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Callable, cast

from kbsync.core.versions import version_of
from kbsync.errors import InputError, NothingFoundError, StaleError

if TYPE_CHECKING:
    from kbsync.results import Fact, FactAction, FactChange
    from kbsync.store.workspace import Workspace


FILE_KINDS = ("facts", "preferences", "entity")  # the memory files, as `kbsync memory` names them
PAGE_SIZE = 50  # facts a page shows: memory of any size stays one quick page


@dataclass(frozen=True)
class FactWritten:
    path: str
    key: str
    value: str
    action: FactAction

    def as_dict(self) -> FactChange:
        """The fields, and the fact's version after the write (none once it is removed)."""
        return {"path": self.path, "key": self.key, "value": self.value, "action": self.action,
                "version": None if self.action == "removed" else version_of(self.value)}


@dataclass(frozen=True)
class FactItem:
    path: str
    key: str  # as written in the file
    value: str
    line: int

    @property
    def version(self) -> str:
        """What an update of this fact sends back as its `base`."""
        return version_of(self.value)

    def as_dict(self) -> Fact:
        return cast("Fact", asdict(self) | {"version": self.version})


def memory_file(*, preferences: bool = False, entity: str | None = None) -> str:
    """The file a fact goes to: memory/facts.md, memory/preferences.md or memory/entities/<slug>.md."""
    from kbsync.core import facts, protocol

    if preferences and entity is not None:
        raise InputError("a fact lives in one file: give preferences or an entity, not both")
    if entity is not None:
        try:
            return facts.entity_relpath(entity)
        except ValueError as exc:
            raise InputError(f"entity: {exc}") from exc
    return protocol.PREFERENCES_MD if preferences else protocol.FACTS_MD


def _heading(relpath: str, entity: str | None) -> str:
    from kbsync.store.initws import FILES

    return FILES.get(relpath) or f"# {' '.join((entity or relpath).split())}\n\n"


def _checked(ws: Workspace, relpath: str) -> None:
    """Refuse a memory file that is a symlink out of the workspace or not a regular file."""
    if ws.path(relpath).exists() or ws.path(relpath).is_symlink():
        ws.relpath(str(ws.path(relpath)))
        ws.checked_path(relpath)


def set_fact(ws: Workspace, key: str, value: str, *, preferences: bool = False, entity: str | None = None,
             base: str | None = None) -> FactWritten:
    """Set the fact `key` to `value`: replaced in place when the key is there, else added after the last fact.
    With `base` (the version of the value as read), only if the fact still has that value (StaleError)."""
    from kbsync.core import facts

    relpath = memory_file(preferences=preferences, entity=entity)
    try:
        name, text = facts.check_key(key), facts.check_value(value)
    except ValueError as exc:
        raise InputError(str(exc)) from exc
    action: FactAction = "unchanged"

    def edit(old: str) -> str:
        nonlocal action
        _check_base(old, name, base, relpath)
        new, action = facts.set_fact(old, name, text, _heading(relpath, entity))
        return new

    _edit(ws, relpath, edit)
    return FactWritten(relpath, name, text, action)


def _check_base(text: str, name: str, base: str | None, relpath: str) -> None:
    """StaleError unless the fact `name` of `text` still has the value of version `base` (None: no check)."""
    from kbsync.core import facts

    if base is None:
        return
    found = facts.parse(text).find(name)
    now = version_of(found.value) if found is not None else "none"
    if now != base:
        gone = "was forgotten" if found is None else f"changed (now {now})"
        raise StaleError(f"fact {name!r} {gone} since version {base} was read; read it again and redo your change",
                         path=relpath, version=now, current=None if found is None else found.value)


def forget_fact(ws: Workspace, key: str, *, preferences: bool = False, entity: str | None = None) -> FactWritten:
    """Remove the fact `key` (every bullet with that key); NothingFoundError when there is none."""
    from kbsync.core import facts

    relpath = memory_file(preferences=preferences, entity=entity)
    found = get_fact(ws, key, preferences=preferences, entity=entity)
    _edit(ws, relpath, lambda old: facts.forget(old, key)[0])
    return FactWritten(relpath, found.key, found.value, "removed")


def get_fact(ws: Workspace, key: str, *, preferences: bool = False, entity: str | None = None) -> FactItem:
    """The fact `key` of its file (the first, should a hand edit have written it twice)."""
    from kbsync.core import facts, limits

    relpath = memory_file(preferences=preferences, entity=entity)
    found = next((f for f in _facts_of(ws, relpath) if f.key == facts.normalize_key(key)), None)
    if found is None:
        raise NothingFoundError(f"no fact {limits.shown(key)}; see `kbsync memory list`", path=relpath)
    return FactItem(relpath, found.name, found.value, found.line)


def list_facts(ws: Workspace, *, preferences: bool = False, entity: str | None = None) -> list[FactItem]:
    """Every fact of every memory file (facts, preferences, then the entities by name), or, with `preferences`
    or `entity`, of that one file."""
    chosen = [memory_file(preferences=preferences, entity=entity)] if preferences or entity is not None else None
    return [FactItem(rel, f.name, f.value, f.line) for rel in chosen or memory_files(ws) for f in _facts_of(ws, rel)]


@dataclass(frozen=True)
class FactPage:
    """One page of the facts a search and a file kept (kbsync.core.paging)."""

    items: list[FactItem]  # the page asked for, in list_facts' order
    matched: int  # facts the search and the file kept, on every page
    total: int  # facts of every memory file
    page: int
    pages: int
    start: int  # where the page's first fact is among the matched ones (0-based)


def file_kind(relpath: str) -> str:
    """The memory file `relpath` is, as `kbsync memory` names it: one of FILE_KINDS."""
    from kbsync.core import protocol

    if relpath == protocol.PREFERENCES_MD:
        return "preferences"
    return "entity" if relpath.startswith(f"{protocol.ENTITIES_DIR}/") else "facts"


def _kept(items: list[FactItem], q: str, kind: str) -> list[FactItem]:
    words = q.casefold().split()
    return [i for i in items if (not kind or file_kind(i.path) == kind)
            and all(w in f"{i.key}\n{i.value}".casefold() for w in words)]


def matching(ws: Workspace, q: str = "", kind: str = "") -> list[FactItem]:
    """The facts (in list_facts' order) of the file kind `kind` ("" for any) whose key or value holds every word
    of `q` (case ignored)."""
    return _kept(list_facts(ws), q, kind)


def browse(ws: Workspace, *, q: str = "", kind: str = "", page: int = 1, size: int = PAGE_SIZE) -> FactPage:
    """Page `page` of the facts `matching` keeps: the search and the file first, so the count and the pages are
    of what matches."""
    from kbsync.core.paging import paged

    every = list_facts(ws)
    kept = _kept(every, q, kind)
    shown, page, pages = paged(kept, page, size)
    return FactPage(shown, len(kept), len(every), page, pages, (page - 1) * size)


def page_holding(index: int, matched: int, size: int = PAGE_SIZE) -> int:
    """The page of `matched` facts that shows the `index`-th (0-based; just past the last: the last page)."""
    from kbsync.core.paging import page_holding as holding

    return holding(index, matched, size)


def memory_files(ws: Workspace) -> list[str]:
    from kbsync.core import facts, protocol

    entities = [rel for rel in ws.iter_files(protocol.ENTITIES_DIR) if facts.is_entry_file(rel)
                and not protocol.is_conflict_copy(rel)] if ws.path(protocol.ENTITIES_DIR).is_dir() else []
    return [rel for rel in (protocol.FACTS_MD, protocol.PREFERENCES_MD) if ws.path(rel).is_file()] + entities


def _facts_of(ws: Workspace, relpath: str) -> list[Any]:
    from kbsync.core import facts

    if not ws.path(relpath).exists():
        return []
    _checked(ws, relpath)
    return facts.parse(ws.read_text(relpath)).facts()


def _edit(ws: Workspace, relpath: str, edit: Callable[[str], str]) -> None:
    """`edit` under the file's lock (kbsync.store.guardededit); a result with more validation errors than the
    text it was made from is not kept (the old bytes are restored)."""
    from kbsync.retrieval.index import written
    from kbsync.store.guardededit import edit_file

    _checked(ws, relpath)
    ws.path(relpath).parent.mkdir(parents=True, exist_ok=True)
    before = 0

    def counted(old: str) -> str:
        nonlocal before
        before = _errors(ws, relpath, old)
        return edit(old)

    edit_file(ws, relpath, counted, lambda text: _errors(ws, relpath, text) <= before)
    written(ws, [relpath])  # found by search when the call returns


def _errors(ws: Workspace, relpath: str, text: str) -> int:
    from kbsync.core.validate import validate_text

    return sum(f.level == "error" for f in validate_text(relpath, text, ws.config))
