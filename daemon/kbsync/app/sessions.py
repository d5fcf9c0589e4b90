"""Sessions and logs: save a session, write one section, split a session, log a tool call or an error."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kbsync.store.sections import SectionResult
    from kbsync.store.sessions import SaveResult
    from kbsync.store.split import SplitResult
    from kbsync.store.workspace import Workspace


def save_session(ws: Workspace, payload: dict[str, Any], where: str = "<stdin>") -> SaveResult:
    """Create or update the session a `session save` object describes (`where` names it in errors)."""
    from kbsync.store.sessions import save_session as save

    return save(ws, payload, where)


def write_section(ws: Workspace, sid: str, name: str, text: str, *, append: bool = False) -> SectionResult:
    """Replace (or append to) the section `name` of session `sid`, under the file's lock."""
    from kbsync.store.sections import write_section as write

    return write(ws, sid, name, text, append=append)


def split_session(ws: Workspace, sid: str, at: list[int] | None = None) -> SplitResult:
    """Split session `sid` into child sessions at its topic headings, or at the given file lines."""
    from kbsync.store.split import split_session as split

    return split(ws, sid, at)


def log_tool_call(ws: Workspace, session: str, tool: str, status: str = "ok", detail: str = "") -> str:
    """Append one line to logs/tool-calls.md; the line written."""
    from kbsync.store.eventlog import log_tool_call as log

    return log(ws, session, tool, status, detail)


def log_error(ws: Workspace, message: str) -> str:
    """Append one line to logs/errors.md; the line written."""
    from kbsync.store.eventlog import log_error as log

    return log(ws, message)


def decode_text(raw: bytes, where: str) -> str:
    """Text input as the workspace reads files: UTF-8, no NUL bytes, a BOM dropped (InputError naming `where`);
    no other control characters, CR line breaks made LF (kbsync.core.textguard)."""
    from kbsync.core.textguard import clean
    from kbsync.store.workspace import decode

    return clean(decode(raw, where), "the text", where=where, multiline=True)
