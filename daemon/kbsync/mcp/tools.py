"""The tools: a small set with short, exact descriptions, each annotated read-only or destructive.

Every tool calls one use case of kbsync.app and answers with a result whose shape its return annotation names
(kbsync.mcp.results): the SDK lists that shape as the tool's output schema and sends the result as structured
content and as the same JSON in a text block. A kbsync error (bad input, a held lock, a conflict) is
raised as the SDK's ToolError, so the model reads the one clear line that names the file and what to
do; the server itself never stops on a bad call.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Annotated, Any, Callable, Literal, TypeVar

from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from kbsync.app.catchup import answering
from kbsync.errors import KbsyncError
from kbsync.mcp import results
from kbsync.mcp.schemas import EntryIn, SessionIn

if TYPE_CHECKING:
    from mcp.server import MCPServer

    from kbsync.app.workspace import Workspace

F = TypeVar("F", bound=Callable[..., Any])
READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
ADD = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
REPLACE = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False)
SEARCH = ToolAnnotations(read_only_hint=True, open_world_hint=True)

SessionId = Annotated[str, Field(description="YYYYMMDD-HHMM-<7 hex>")]
EntryKey = Annotated[str, Field(description="<title>@<YYYY-MM-DD>")]
BaseVersion = Annotated[str | None, Field(description="version read; changed since: refused")]


def one_line(message: str) -> str:
    """A message of several lines (a list of problems) as one: `first line item; item; ...`."""
    first, *rest = [ln.strip().lstrip("-* ").strip() for ln in message.splitlines() if ln.strip()] or [""]
    return " ".join([first, "; ".join(rest)]) if rest else first


def clear_errors(fn: F) -> F:
    """Raise kbsync's errors (and file system errors) as ToolError: one line for the model. The docstring,
    which the SDK gives as the tool's description, is made one line too. The call is an answer being made
    (kbsync.app.catchup.answering)."""
    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            with answering():  # a background catch-up of the index steps aside meanwhile
                return fn(*args, **kwargs)
        except KbsyncError as exc:
            raise ToolError(one_line(str(exc))) from exc
        except OSError as exc:
            where = f"{exc.filename}: " if exc.filename else ""
            raise ToolError(f"{where}{exc.strerror or exc}; check the path and permissions") from exc
    call.__doc__ = " ".join((fn.__doc__ or "").split())  # the description the model reads: one line
    return call  # type: ignore[return-value]


def register(server: MCPServer[Any], ws: Callable[[], Workspace]) -> None:
    """Add every tool to `server`; `ws` gives the workspace each call works on."""
    _register_reads(server, ws)
    _register_sessions(server, ws)
    _register_board(server, ws)
    _register_memory(server, ws)


def _register_reads(server: MCPServer[Any], ws: Callable[[], Workspace]) -> None:
    @server.tool(structured_output=True, annotations=SEARCH)
    @clear_errors
    def search(query: Annotated[str, Field(description="words and filters (tag: status: type: since: until:)")],
               top: Annotated[int, Field(ge=1, le=50)] = 10, sources: list[str] | None = None) -> results.Found:
        """Federated search of the memory, RRF-fused: source, title, path, summary per hit."""
        from kbsync.app.retrieval import search as run
        from kbsync.mcp import present

        return present.search(run(ws(), query, sources=sources, top=top))

    @server.tool(structured_output=True, annotations=READ)
    @clear_errors
    def get_context(query: str = "", tags: list[str] | None = None,
                    budget_tokens: Annotated[int | None, Field(ge=1)] = None) -> results.Pack:
        """The prompt pack for a task within a token budget: facts, recent summaries, full texts, references,
        board entries, each part with its token count. Call before starting a task."""
        from kbsync.app.retrieval import build_context
        from kbsync.app.shapes import pack
        from kbsync.mcp import present

        return present.pack(pack(build_context(ws(), query, tags or [], budget_tokens)))

    @server.tool(structured_output=True, annotations=READ)
    @clear_errors
    def read(ref: Annotated[str, Field(description="a session id, a workspace path or a board key")],
             offset: int = 0, limit: int = 40_000) -> results.Read:
        """The item a pack or hit names, paged (page.next_offset)."""
        from kbsync.app.reading import read as run
        from kbsync.mcp import present

        return present.item(run(ws(), ref), offset, limit)

    @server.tool(structured_output=True, annotations=READ)
    @clear_errors
    def status() -> results.StatusReport:
        """The workspace's state: git's last commit, the last sync, the daemon, and what waits and why."""
        from kbsync.app.status import report

        return report(ws()).as_dict()


def _register_sessions(server: MCPServer[Any], ws: Callable[[], Workspace]) -> None:
    @server.tool(structured_output=True, annotations=REPLACE)
    @clear_errors
    def save_session(session: SessionIn) -> results.SessionSaved:
        """Create or update a session file (the object `kbsync session save` takes). status closed ends the
        session: the daemon commits it."""
        from kbsync.app.sessions import save_session as save
        from kbsync.app.shapes import session_saved

        return session_saved(save(ws(), session.payload(), "session"))

    @server.tool(structured_output=True, annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False))
    @clear_errors
    def write_section(session_id: SessionId, heading: str, text: str, append: bool = False,
                      base_version: BaseVersion = None) -> results.SectionWritten:
        """Replace (or append to) one section of a session, e.g. 结论 or 待办."""
        from kbsync.app.sessions import write_section as write
        from kbsync.app.shapes import section_written

        return section_written(write(ws(), session_id, heading, text, append=append, base=base_version))

    @server.tool(structured_output=True, annotations=ADD)
    @clear_errors
    def log_tool_call(session_id: SessionId, tool: str, status: str = "ok", detail: str = "") -> results.Logged:
        """Append one line to logs/tool-calls.md for an existing session (its id or the session_id it was saved
        with)."""
        from kbsync.app.sessions import log_session_tool_call as log
        from kbsync.app.shapes import logged

        return logged(log(ws(), session_id, tool, status, detail))


def _register_board(server: MCPServer[Any], ws: Callable[[], Workspace]) -> None:
    @server.tool(structured_output=True, annotations=REPLACE)
    @clear_errors
    def board_add(entry: EntryIn) -> results.EntryWritten:
        """Add a knowledge-board entry (same title and source date: updates it)."""
        from kbsync.app.board import add_entry, clock
        from kbsync.app.shapes import entry_written

        return entry_written(add_entry(ws(), entry.payload(), clock(None), "entry"))

    @server.tool(structured_output=True, annotations=REPLACE)
    @clear_errors
    def board_update(key: EntryKey, entry: EntryIn, base_version: BaseVersion = None) -> results.EntryWritten:
        """Replace an entry with its full new version."""
        from kbsync.app.board import entry_key, update_entry
        from kbsync.app.shapes import entry_written

        return entry_written(update_entry(ws(), entry_key(key), entry.payload(), "entry", base=base_version))

    @server.tool(structured_output=True, annotations=ADD)
    @clear_errors
    def board_feedback(key: EntryKey, verdict: Literal["helpful", "harmful"]) -> results.FeedbackCounts:
        """Count one use of an entry as helpful or harmful."""
        from kbsync.app.board import entry_key, give_feedback

        return give_feedback(ws(), entry_key(key), helpful=verdict == "helpful").as_dict()

    @server.tool(structured_output=True, annotations=ADD)
    @clear_errors
    def board_applied(keys: Annotated[list[EntryKey], Field(min_length=1)]) -> results.Applied:
        """Record that entries were applied now."""
        from kbsync.app.board import applied, clock, entry_key
        from kbsync.app.shapes import applied as shape

        return shape(applied(ws(), [entry_key(k) for k in keys], clock(None)))


Entity = Annotated[str | None, Field(description="an entity's name: its own file memory/entities/<slug>.md")]


def _register_memory(server: MCPServer[Any], ws: Callable[[], Workspace]) -> None:
    @server.tool(structured_output=True, annotations=REPLACE)
    @clear_errors
    def remember(key: str, value: str, entity: Entity = None, preferences: bool = False,
                 base_version: BaseVersion = None) -> results.FactChange:
        """Set a fact (only the latest value matters): the same key is replaced in place."""
        from kbsync.app.memory import set_fact

        return set_fact(ws(), key, value, entity=entity, preferences=preferences, base=base_version).as_dict()

    @server.tool(structured_output=True, annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False))
    @clear_errors
    def forget(key: str, entity: Entity = None, preferences: bool = False) -> results.Forgotten:
        """Remove a fact."""
        from kbsync.app.memory import forget_fact
        from kbsync.mcp import present

        return present.removed(forget_fact(ws(), key, entity=entity, preferences=preferences))
