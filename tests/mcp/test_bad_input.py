"""Every tool's bad-input path over stdio: a clear MCP tool error (is_error, one line naming the field or
file and what to do), never a crash: the same server process answers every call that follows."""

from __future__ import annotations

import json
from pathlib import Path

import anyio

from helpers.board import payload
from helpers.cli import Cli
from helpers.mcp import data, error, stdio

SID = "20250611-0930-abcdef0"  # well formed, not in the workspace
KEY = "发布前确认锁文件@2025-06-11"
CASES: list[tuple[str, dict[str, object], str]] = [
    ("search", {"query": ""}, "nothing to search for"),
    ("search", {"query": "x", "top": 0}, "greater than or equal to 1"),
    ("search", {"query": "x", "sources": ["nowhere"]}, "no search source named nowhere"),
    ("search", {}, "query"),
    ("get_context", {"budget_tokens": 0}, "greater than or equal to 1"),
    ("get_context", {"query": "since:someday"}, "since"),
    ("read", {"ref": "../etc/passwd"}, ".. part"),
    ("read", {"ref": "/etc/passwd"}, "relative to the workspace"),
    ("read", {"ref": ".kbsync/config.toml"}, "kbsync's and git's own state"),
    ("read", {"ref": ".git/config"}, "kbsync's and git's own state"),
    ("read", {"ref": "memory/missing.md"}, "memory/missing.md: no such file"),
    ("read", {"ref": "memory/link.md"}, "a symlink"),
    ("read", {"ref": SID}, f"no session {SID}"),
    ("read", {"ref": "没有的条目@2025-01-01"}, "no entry 没有的条目@2025-01-01"),
    ("read", {"ref": 7}, "ref"),
    ("status", {"unexpected": 1}, ""),
    ("save_session", {"session": {}}, "session_id"),
    ("save_session", {"session": {"session_id": "x", "tags": "a"}}, "tags"),
    ("save_session", {"session": "not an object"}, "session"),
    ("save_session", {"session": {"session_id": "x", "status": "done"}}, "argument `session.status`"),
    ("save_session", {"session": {"session_id": "x", "colour": "red"}}, "argument `session.colour`"),
    ("write_section", {"session_id": SID, "heading": "结论", "text": "x"}, f"no session {SID}"),
    ("write_section", {"session_id": "nope", "heading": "结论", "text": "x"}, "no session 'nope'"),
    ("write_section", {"session_id": "{sid}", "heading": "## 结论", "text": "x"}, "plain heading name"),
    ("write_section", {"session_id": "{sid}", "heading": "没有", "text": "x"}, "no section '## 没有'"),
    ("log_tool_call", {"session_id": "{sid}"}, "tool"),
    ("log_tool_call", {"session_id": SID, "tool": "grep"}, f"no session {SID}"),
    ("log_tool_call", {"session_id": "nope", "tool": "grep"}, "no session 'nope'"),
    ("board_add", {"entry": {"title": "半个条目"}}, "argument `entry.type`: Field required"),
    ("board_add", {"entry": {**payload(), "type": "opinion"}}, "argument `entry.type`: Input should be '观点'"),
    ("board_add", {"entry": {**payload(), "confidence": "sure"}}, "argument `entry.confidence`"),
    ("board_update", {"key": KEY, "entry": {"title": "x", "summary": "y"}}, "argument `entry.topic`: Field required"),
    ("board_update", {"key": "没有@2025-01-01", "entry": payload()}, "no entry"),
    ("board_update", {"key": "no date", "entry": payload()}, "no date"),
    ("board_feedback", {"key": KEY, "verdict": "meh"}, "'helpful' or 'harmful'"),
    ("board_feedback", {"key": "没有@2025-01-01", "verdict": "helpful"}, "no entry 没有@2025-01-01"),
    ("board_applied", {"keys": []}, "at least 1 item"),
    ("board_applied", {"keys": [KEY, "没有@2025-01-01"]}, "no entry 没有@2025-01-01"),
    ("remember", {"key": "lang"}, "value"),
    ("forget", {"key": "nope"}, "no fact 'nope'"),
    ("no_such_tool", {}, "no_such_tool"),
]


def test_every_bad_call_gets_a_clear_error_and_the_server_carries_on(ws_root: Path, cli: Cli) -> None:
    done = cli("session", "save", "--json", ws=ws_root, stdin=json.dumps({"session_id": "s1", "title": "t"}))
    sid = json.loads(done.stdout)["id"]
    assert cli("board", "add", ws=ws_root, stdin=json.dumps(payload())).returncode == 0
    (ws_root / "memory" / "link.md").symlink_to("/etc/hostname")
    seen: list[tuple[str, str]] = []

    async def run() -> None:
        async with stdio(ws_root) as client:
            for tool, args, says in CASES:
                args = {k: (v.replace("{sid}", sid) if isinstance(v, str) else v) for k, v in args.items()}
                result = await client.call_tool(tool, args)
                if tool == "status":  # no input: an unknown argument is ignored, the answer still comes
                    assert "running" in data(result)
                    continue
                seen.append((tool, error(result)))
                assert says in seen[-1][1], (tool, args, seen[-1][1])
            assert data(await client.call_tool("read", {"ref": sid}))["path"].startswith("sessions/")

    anyio.run(run)
    assert {t for t, _ in seen} >= {"search", "get_context", "read", "save_session", "write_section",
                                    "log_tool_call", "board_add", "board_update", "board_feedback", "board_applied",
                                    "remember", "forget"}
    assert all("Traceback" not in text and len(text.splitlines()) == 1 for _, text in seen), seen
    assert not [text for _, text in seen if "pydantic" in text or "validation error" in text]


def test_a_prompt_called_wrongly_is_invalid_params_in_one_line(ws_root: Path) -> None:
    from mcp import MCPError
    from mcp.types import INVALID_PARAMS

    async def run() -> list[MCPError]:
        got = []
        async with stdio(ws_root) as client:
            for name, args in (("start_task", {}), ("start_task", {"task": "x", "colour": "red"}),
                               ("no_such_prompt", {}), ("start_task", {"task": "since:someday"})):
                try:
                    await client.get_prompt(name, args)
                except MCPError as exc:
                    got.append(exc)
            ending = await client.get_prompt("end_task", {})  # the server carries on
            assert 'status "closed"' in ending.messages[0].content.text  # type: ignore[union-attr]
        return got

    errors = anyio.run(run)
    assert [e.error.code for e in errors] == [INVALID_PARAMS] * 4
    assert all(len(e.error.message.splitlines()) == 1 for e in errors)
    assert "missing argument(s) task" in errors[0].error.message
    assert "unknown argument(s) colour" in errors[1].error.message
