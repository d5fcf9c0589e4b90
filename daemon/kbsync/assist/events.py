"""The answer to each hook event (docs/assist.md): the event's JSON in, what to print out.

- SessionStart: the memory block without a prompt (facts and preferences); a resumed conversation's
  session is opened again if it was closed.
- UserPromptSubmit: the memory block for the prompt; the entries it names are remembered for the end.
- Stop: the turn's session kept (kbsync.app.conversation); once, a request to the model to write the
  session's conclusion and to-do (never while `stop_hook_active` is set).
- SessionEnd: the session kept and closed, so the daemon commits it.

Blocks come from the daemon's local server when one runs for the workspace, else from this process.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from kbsync.errors import InputError

if TYPE_CHECKING:
    from kbsync.app.recall import Block
    from kbsync.app.workspace import Workspace

INJECTING = ("SessionStart", "UserPromptSubmit")


def block(ws: Workspace, query: str, budget: int | None = None, session: str = "") -> Block:
    """The memory block, the entries it names remembered for `session`: the daemon's when it runs, else made
    here."""
    from kbsync.assist import daemonclient

    try:
        return daemonclient.memory_block(ws, query, budget, session)
    except daemonclient.NoDaemon:
        from kbsync.app.conversation import block_for

        return block_for(ws, query, budget, session)


def _field(data: dict[str, Any], name: str, kind: type, default: Any = None) -> Any:
    value = data.get(name, default)
    if not isinstance(value, kind):
        raise InputError(f"the event's `{name}` is missing or not a {kind.__name__}", path="<stdin>")
    return value


def answer(ws: Workspace, event: str, data: dict[str, Any]) -> str:
    """What the hook prints for `event` ("" for nothing)."""
    sid = _field(data, "session_id", str)
    if event in INJECTING:
        if event == "SessionStart" and data.get("source") == "resume":
            from kbsync.app.conversation import reopen

            reopen(ws, sid)
        found = block(ws, _field(data, "prompt", str) if event == "UserPromptSubmit" else "", session=sid)
        return context_output(event, found.text) if found.text else ""
    from kbsync.app.conversation import keep

    closing = event == "SessionEnd"
    kept = keep(ws, sid, _field(data, "transcript_path", str, ""), closing=closing,
                             stop_hook_active=_field(data, "stop_hook_active", bool, False))
    return json.dumps({"decision": "block", "reason": kept.ask}, ensure_ascii=False) if kept.ask else ""


def context_output(event: str, text: str) -> str:
    """The documented way to add context to the model's input for `event`."""
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}, ensure_ascii=False)
