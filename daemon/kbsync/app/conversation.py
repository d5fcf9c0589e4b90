"""Keeping an assistant's conversation as one session without the model having to remember: what its hooks
do at the end of each turn and when the conversation ends (docs/assist.md).

One session file per conversation, keyed by the assistant's own session id (`session save` keys a file by
that raw id, so every turn and a resumed conversation land in the same file). kbsync writes the sections it
can take from the transcript, 用户输入 (the prompts, secrets withheld) and 工具调用 (one line per call), and
only while they are empty or still as kbsync last wrote them: what the model or a person wrote there is never
replaced. 我的判断, 结论 and 待办 are the model's: the turn's end asks for them once. Each tool call is logged
once in logs/tool-calls.md. Board entries that were injected and that a reply names are marked applied.

What kbsync remembers between hooks (the entries injected, the calls logged, whether it asked) is kept in
`.kbsync/assist/<digest of the session id>.json`, state of this machine, not content.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kbsync.core import protocol
from kbsync.core.transcript import Transcript, parse_transcript, withhold_secrets
from kbsync.errors import InputError, KbsyncError
from kbsync.store import fsio

if TYPE_CHECKING:
    from kbsync.app.recall import Block
    from kbsync.store.workspace import Workspace

STATE_FOLDER = "assist"
MAX_TRANSCRIPT = 64 * 1024 * 1024
TITLE_CHARS = 40
OWN_SECTIONS = ("用户输入", "工具调用")
ASKED_FOR = ("结论", "待办")


@dataclass
class State:
    session_id: str
    injected: list[str] = field(default_factory=list)  # entries named in a block, as `read` takes them
    applied: list[str] = field(default_factory=list)
    logged: list[str] = field(default_factory=list)  # tool-use ids logged
    asked: bool = False
    written: dict[str, str] = field(default_factory=dict)  # heading -> digest of what kbsync wrote there


@dataclass(frozen=True)
class Kept:
    session: str  # the session's id (YYYYMMDD-HHMM-<h7>)
    path: str
    created: bool
    logged: int  # tool calls logged now
    applied: list[str]  # entries marked applied now
    ask: str  # what the turn's end asks the model to do; "" for nothing


def _state_path(ws: Workspace, raw: str) -> Path:
    digest = hashlib.sha256(raw.encode("utf-8")).hexdigest()[:24]
    folder = ws.state_dir / STATE_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{digest}.json"


def _load(ws: Workspace, raw: str) -> State:
    try:
        data = json.loads(_state_path(ws, raw).read_text(encoding="utf-8"))
        state = State(**{k: v for k, v in data.items() if k in State.__dataclass_fields__})
    except (OSError, ValueError, TypeError):
        return State(raw)
    return state if state.session_id == raw else State(raw)


def _save(ws: Workspace, state: State) -> None:
    path = _state_path(ws, state.session_id)
    fsio.atomic_write(path, json.dumps(asdict(state), ensure_ascii=False).encode("utf-8"))


def _checked_id(raw: str) -> str:
    raw = raw.strip() if isinstance(raw, str) else ""
    if not raw or len(raw) > 200 or any(ord(c) < 32 for c in raw):
        raise InputError("session_id: give the assistant's id of the conversation (a short string)")
    return raw


def note_injected(ws: Workspace, session_id: str, keys: list[str]) -> None:
    """Remember the entries a block named in this conversation (for marking the ones cited applied)."""
    raw = _checked_id(session_id)
    with fsio.locked(_state_path(ws, raw)):
        state = _load(ws, raw)
        new = [k for k in keys if k not in state.injected]
        if new:
            state.injected += new
            _save(ws, state)


def block_for(ws: Workspace, query: str, budget: int | None = None, session: str = "") -> Block:
    """The memory block for a prompt of conversation `session` (kbsync.app.recall); the entries it names are
    remembered for the conversation's end."""
    from kbsync.app.recall import memory_block

    found = memory_block(ws, query, budget, session)
    if session and found.keys:
        note_injected(ws, session, found.keys)
    return found


def read_transcript(path: str) -> Transcript:
    """The transcript at `path` (a missing one is empty; an oversized one is refused)."""
    if not path:
        return Transcript()
    try:
        if os.lstat(path).st_size > MAX_TRANSCRIPT:  # the size first: an oversized file is never read
            raise InputError(f"over {MAX_TRANSCRIPT // 2**20} MB; not read", path=path)
        data, _ = fsio.read_regular(Path(path))
    except FileNotFoundError:
        return Transcript()
    if len(data) > MAX_TRANSCRIPT:  # it grew between the look and the read
        raise InputError(f"over {MAX_TRANSCRIPT // 2**20} MB; not read", path=path)
    return parse_transcript(data)


def _digest(text: str) -> str:
    return hashlib.sha256(text.strip().encode("utf-8")).hexdigest()[:16]


def _own_sections(tx: Transcript) -> dict[str, str]:
    prompts = "\n\n".join(withhold_secrets(p.strip()) for p in tx.prompts)
    calls = "\n".join(f"- {c.name}: {'failed' if c.failed else 'ok' if c.failed is False else 'no result'}"
                      for c in tx.calls)
    return {h: t for h, t in zip(OWN_SECTIONS, (prompts, calls)) if t}


def _current(ws: Workspace, raw: str) -> tuple[str | None, dict[str, str]]:
    from kbsync.core.session import parse_session
    from kbsync.store.sessions import find_session

    relpath = find_session(ws, protocol.h7(raw))
    if relpath is None:
        return None, {}
    try:
        return relpath, {h: c.strip() for h, c in parse_session(ws.read_text(relpath)).sections}
    except KbsyncError:
        return relpath, {}


def _title(tx: Transcript) -> str:
    first = " ".join(withhold_secrets(tx.prompts[0]).split()) if tx.prompts else ""
    return (first[:TITLE_CHARS - 1] + "…" if len(first) > TITLE_CHARS else first) or "conversation"


def keep(ws: Workspace, session_id: str, transcript: str, *, closing: bool = False,
         stop_hook_active: bool = False) -> Kept:
    """The end of a turn (`closing` False) or of the conversation: the session saved, the new tool calls
    logged, the cited entries marked applied; at a turn's end, once, what to ask the model."""
    from kbsync.app.sessions import save_session

    raw = _checked_id(session_id)
    tx = read_transcript(transcript)
    with fsio.locked(_state_path(ws, raw), wait_s=ws.config.daemon.lock_wait_s):
        state = _load(ws, raw)
        relpath, current = _current(ws, raw)
        payload: dict[str, Any] = {"session_id": raw, "sections": {}}
        for heading, text in _own_sections(tx).items():
            now = current.get(heading, "")
            if (not now or _digest(now) == state.written.get(heading)) and now != text.strip():
                payload["sections"][heading] = text
        if relpath is None:
            payload["title"] = _title(tx)
        if tx.prompts:
            payload["turns"] = len(tx.prompts)
        if tx.model:
            payload["model"] = tx.model
        if closing:
            payload["status"] = "closed"
        done = save_session(ws, payload, "the conversation's session")
        sid = str(done.record.get("id"))
        _, after = _current(ws, raw)
        state.written.update({h: _digest(after.get(h, "")) for h in payload["sections"]})
        logged = _log_calls(ws, sid, tx, state, closing)
        applied = _mark_applied(ws, tx, state)
        ask = ""
        if not closing and not stop_hook_active and not state.asked and not all(after.get(h) for h in ASKED_FOR):
            state.asked = True
            ask = ask_text(sid, raw)
        _save(ws, state)
    return Kept(sid, done.relpath, done.created, logged, applied, ask)


def ask_text(sid: str, raw: str) -> str:
    return (f"Before you finish: keep this conversation in kbsync's memory. Write the session's 结论 (what was "
            f"concluded) and 待办 (what is left to do, or 无) with the kbsync MCP tool `write_section` "
            f"(session_id \"{sid}\"), or `save_session` with session_id \"{raw}\" and those sections; add "
            f"我的判断 if you reasoned about a choice. kbsync closes the session when the conversation ends. "
            f"This is asked once.")


def _log_calls(ws: Workspace, sid: str, tx: Transcript, state: State, closing: bool) -> int:
    from kbsync.app.sessions import log_tool_call

    n = 0
    for call in tx.calls:
        if call.id in state.logged or (call.failed is None and not closing):
            continue  # logged already, or its result is still to come
        status = "no result" if call.failed is None else "error" if call.failed else "ok"
        log_tool_call(ws, sid, call.name, status, f"tool_use {call.id}")
        state.logged.append(call.id)
        n += 1
    return n


def cited(key: str, replies: str) -> bool:
    """Whether the replies name a board entry: by its key, or by its title when that is four characters or more."""
    title = key.rpartition("@")[0]
    return key in replies or (len(title) >= 4 and title in replies)


def _mark_applied(ws: Workspace, tx: Transcript, state: State) -> list[str]:
    from kbsync.app.board import applied, clock, entry_key
    from kbsync.app.reading import kind_of

    replies = "\n".join(tx.replies)
    due = [k for k in state.injected if k not in state.applied and kind_of(k) == "board" and cited(k, replies)]
    done = []
    for key in due:
        try:
            applied(ws, [entry_key(key)], clock(None))
        except KbsyncError:
            continue  # renamed or removed since it was injected
        done.append(key)
    state.applied += done
    return done


def reopen(ws: Workspace, session_id: str) -> str | None:
    """A resumed conversation: its session open again if it was closed; its path, or None when there is none."""
    from kbsync.app.sessions import save_session

    raw = _checked_id(session_id)
    from kbsync.core.session import parse_session
    from kbsync.store.sessions import find_session

    relpath = find_session(ws, protocol.h7(raw))
    if relpath is None:
        return None
    if parse_session(ws.read_text(relpath)).fields.get("status") == "closed":
        save_session(ws, {"session_id": raw, "status": "open"}, "the conversation's session")
    return relpath
