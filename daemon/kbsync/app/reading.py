"""Reading one item of the workspace for an assistant: a session by id, a content file by its workspace
path, a board entry by key, the memory files. Paths given from outside are checked strictly: relative,
no `.` or `..` part, never into .git/ or .kbsync/, no symlink anywhere on the way, a Markdown file only."""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kbsync.core import protocol
from kbsync.core.board import normalize_date
from kbsync.errors import InputError, ProtocolError

if TYPE_CHECKING:
    from kbsync.core.detect.injectionclassifier import Learned
    from kbsync.store.workspace import Workspace

_ENTITY_NAME = re.compile(r"^[^/\\\x00-\x1f.][^/\\\x00-\x1f]*$")


@dataclass(frozen=True)
class Item:
    kind: str  # session, file, board, memory
    ref: str  # what was asked for
    path: str  # its workspace path
    text: str  # the workspace text, as the file holds it
    versions: dict[str, str] = field(default_factory=dict)  # what an update sends back as its base: a session's
    # sections by heading, a board entry's as "entry"
    verdicts: Learned | None = field(default=None, compare=False)  # what the classifier flags, for `read`'s caller to
    # withhold beside the rules' flags (kbsync.app.guard)


BOARD_KEY_PREFIX = protocol.BOARD_MD + "#"  # how search names a board entry: LEARNING_BOARD.md#<title>@<date>


def kind_of(ref: str) -> str:
    """What a reference names: a session id, a board key (`<title>@<date>`, the date in any form the board
    accepts, with or without search's `LEARNING_BOARD.md#` in front), a workspace path (it holds a `/`, `\\` or
    `.`), else the raw id a session was saved under (what `session save` and `write_section` take)."""
    ref = ref.strip().removeprefix(BOARD_KEY_PREFIX)
    if protocol.ID_RE.match(ref):
        return "session"
    title, at, date = ref.rpartition("@")
    if title and at and normalize_date(date) and not ref.endswith(".md"):
        return "board"
    return "file" if not ref or any(c in ref for c in "/.\\") else "session"


def read(ws: Workspace, ref: str) -> Item:
    """The full item a reference names (see `kind_of`), with what the classifier flags; InputError naming it when
    there is none."""
    import dataclasses

    from kbsync.app.guard import learned
    from kbsync.core import limits

    limits.check(ref, "ref", limits.REF)
    kind = kind_of(ref)
    if kind == "session":
        item = read_session(ws, ref.strip())
    else:
        item = read_entry(ws, ref.strip().removeprefix(BOARD_KEY_PREFIX)) if kind == "board" else read_file(ws, ref)
    return dataclasses.replace(item, verdicts=learned(ws))


def read_session(ws: Workspace, sid: str) -> Item:
    """Session `sid`'s file, found by its id or by the raw id it was saved under."""
    from kbsync.core.session import parse_session
    from kbsync.core.versions import version_of
    from kbsync.store.sessions import find_given

    relpath = find_given(ws, sid)
    text = _text(ws, content_path(ws, relpath))
    try:
        versions = {h: version_of(c) for h, c in parse_session(text).sections}
    except ProtocolError:
        versions = {}
    return Item("session", sid, relpath, text, versions)


def read_entry(ws: Workspace, key: str) -> Item:
    """Board entry `key` as it is written in LEARNING_BOARD.md."""
    from kbsync.app.board import entry_key, render_entry, show_entry

    shown = show_entry(ws, entry_key(key))
    return Item("board", key, protocol.BOARD_MD, render_entry(shown.entry), {"entry": shown.version})


def read_file(ws: Workspace, given: str) -> Item:
    """A content file by its workspace path."""
    relpath = content_path(ws, given)
    return Item("file", given, relpath, _text(ws, relpath))


MEMORY_FILES = {"facts": protocol.FACTS_MD, "preferences": protocol.PREFERENCES_MD, "board": protocol.BOARD_MD}


def read_memory(ws: Workspace, name: str) -> Item:
    """The facts, the preferences or the board (see MEMORY_FILES); empty text when the file does not exist yet."""
    relpath = MEMORY_FILES[name]
    if not os.path.lexists(ws.path(relpath)):
        return Item("memory", name, relpath, "")
    return Item("memory", name, relpath, _text(ws, content_path(ws, relpath)))


def entity_names(ws: Workspace) -> list[str]:
    """The entity files' names (memory/entities/<name>.md), sorted."""
    folder = ws.path(protocol.ENTITIES_DIR)
    if folder.is_symlink() or not folder.is_dir():
        return []
    return sorted(p.stem for p in folder.glob("*.md") if not p.is_symlink() and p.is_file())


def read_entity(ws: Workspace, name: str) -> Item:
    """The entity file memory/entities/<name>.md."""
    if not _ENTITY_NAME.match(name):
        raise InputError(f"{name!r} is not an entity name; see the list of entities", path=protocol.ENTITIES_DIR)
    relpath = f"{protocol.ENTITIES_DIR}/{name}.md"
    return Item("memory", name, relpath, _text(ws, content_path(ws, relpath)))


def content_path(ws: Workspace, given: str) -> str:
    """`given` as a workspace path kbsync may read for a caller: InputError saying why not otherwise."""
    parts = given.strip().split("/")
    why = _refusal(given.strip(), parts)
    if why:
        raise InputError(why, path=given)
    here = ws.root
    for part in parts:
        here = here / part
        try:
            mode = os.lstat(here).st_mode
        except FileNotFoundError:
            raise InputError("no such file in the workspace", path=given) from None
        if stat.S_ISLNK(mode):
            raise InputError("a symlink; kbsync does not follow links when it reads for an assistant", path=given)
    if not stat.S_ISREG(mode):
        raise InputError("not a file; give the path of a Markdown file", path=given)
    return "/".join(parts)


def _refusal(given: str, parts: list[str]) -> str:
    if not given or given.startswith("/") or "\\" in given or "\x00" in given:
        return "give a path relative to the workspace, such as memory/facts.md"
    if any(p in ("", ".", "..") for p in parts):
        return "a path with an empty, . or .. part; give it plainly, such as sessions/2025-06-11/0930-....md"
    if parts[0] in protocol.IGNORED_DIRS:
        return f"{parts[0]}/ holds kbsync's and git's own state, not workspace content"
    if not given.endswith(".md"):
        return "only the workspace's Markdown files can be read"
    return ""


def _text(ws: Workspace, relpath: str) -> str:
    """The file's text, read without following a symlink that appeared since it was checked."""
    from kbsync.store.workspace import decode

    path = ws.checked_path(relpath)
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as fh:
        return decode(fh.read(), relpath)
