"""A whole assistant turn through `kbsync mcp`, driven by the MCP SDK's own client: start_task ->
get_context -> save_session -> log_tool_call -> board_feedback, then the real daemon commits it. Once
over stdio (the command a client's config runs) and once over streamable HTTP (the app the daemon's
web server mounts, served by uvicorn on 127.0.0.1)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from helpers.board import payload
from helpers.cli import Cli
from helpers.daemon import DaemonProcess, git, head_files, wait_for
from helpers.mcp import data, http, stdio
from kbsync.retrieval.context import estimate_tokens

KEY = "发布前确认锁文件@2025-06-11"


@pytest.fixture()
def seeded(ws_root: Path, cli: Cli) -> Path:
    """A workspace with one earlier session and one board entry about the task."""
    (ws_root / ".kbsync" / "config.toml").write_text('[daemon]\ncommit_every = "1s"\n', encoding="utf-8")
    earlier = {"session_id": "earlier", "title": "发布失败", "tags": ["部署"], "summary": "锁文件未释放",
               "sections": {"结论": "发布前删除陈旧的锁文件。"}}
    assert cli("session", "save", ws=ws_root, stdin=json.dumps(earlier)).returncode == 0
    assert cli("board", "add", ws=ws_root, stdin=json.dumps(payload())).returncode == 0
    return ws_root


async def turn(client: Client) -> dict[str, Any]:
    """What an assistant does around one task; the ids and answers it got."""
    prompt = await client.get_prompt("start_task", {"task": "发布 锁文件", "tags": "部署"})
    opening = prompt.messages[0].content.text  # type: ignore[union-attr]
    ctx = data(await client.call_tool("get_context", {"query": "锁文件", "tags": ["部署"]}))
    saved = data(await client.call_tool("save_session", {"session": {
        "session_id": "turn-1", "title": "发布检查", "tags": ["部署"], "summary": "按看板检查锁文件",
        "sections": {"结论": "发布前已清理锁文件。"}}}))
    logged = data(await client.call_tool("log_tool_call", {"session_id": saved["id"], "tool": "get_context",
                                                             "detail": "锁文件"}))
    voted = data(await client.call_tool("board_feedback", {"key": KEY, "verdict": "helpful"}))
    return {"opening": opening, "context": ctx, "saved": saved, "logged": logged, "voted": voted}


def check_answers(got: dict[str, Any]) -> None:
    assert "发布前确认锁文件" in got["opening"] and "<memory>" in got["opening"]
    parts = {p["name"]: p for p in got["context"]["parts"]}
    assert {"summaries", "board"} <= set(parts)
    assert "锁文件未释放" in parts["summaries"]["content"]["text"]
    whole = "".join(p["content"]["text"] for p in got["context"]["parts"])  # the pack's text, part by part
    assert got["context"]["tokens"] == estimate_tokens(whole) <= got["context"]["limit"]
    assert got["saved"]["created"] is True and got["saved"]["path"].startswith("sessions/")
    assert got["saved"]["id"] in got["logged"]["line"]
    assert got["voted"]["helpful"] == 1


def check_committed(root: Path, got: dict[str, Any], cli: Cli) -> None:
    """The daemon's commit holds the session and the log line; the vote is in this machine's counters."""
    path = got["saved"]["path"]
    wait_for(lambda: path in head_files(root) and got["saved"]["id"] in _at_head(root, "logs/tool-calls.md"),
             timeout=30)
    assert "发布前已清理锁文件。" in _at_head(root, path)
    shown = json.loads(cli("board", "show", KEY, "--json", ws=root).stdout)
    assert shown["feedback"]["helpful"] == 1


def _at_head(root: Path, path: str) -> str:
    try:
        return git(root, "show", f"HEAD:{path}")
    except Exception:  # noqa: BLE001 - not committed yet
        return ""


@pytest.mark.slow
@pytest.mark.parametrize("transport", ["stdio", "streamable-http"])
def test_a_turn_is_committed_by_the_daemon(seeded: Path, cli: Cli, transport: str) -> None:
    connect = stdio if transport == "stdio" else http
    daemon = DaemonProcess(seeded)
    try:
        async def run() -> dict[str, Any]:
            async with connect(seeded) as client:
                return await turn(client)

        got = anyio.run(run)
        check_answers(got)
        check_committed(seeded, got, cli)
    finally:
        daemon.stop()
