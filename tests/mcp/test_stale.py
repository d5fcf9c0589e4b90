"""Over MCP, an update can carry the version it was based on (`base_version`, which `read` and every write
give): a board entry, a section or a fact changed since by another writer is not overwritten."""

from __future__ import annotations

import json
from pathlib import Path

import anyio

from helpers.board import payload
from helpers.cli import Cli
from helpers.mcp import data, error, stdio

KEY = "发布前确认锁文件@2025-06-11"


def test_stale_updates_are_refused_over_mcp(ws_root: Path, cli: Cli) -> None:
    assert cli("board", "add", ws=ws_root, stdin=json.dumps(payload(), ensure_ascii=False)).returncode == 0

    async def run() -> None:
        async with stdio(ws_root) as client:
            version = data(await client.call_tool("read", {"ref": KEY}))["versions"]["entry"]
            assert cli("board", "update", KEY, ws=ws_root,
                       stdin=json.dumps(payload(summary="另一处改的"), ensure_ascii=False)).returncode == 0
            why = error(await client.call_tool("board_update", {"key": KEY, "entry": payload(summary="模型改的"),
                                                                "base_version": version}))
            assert "changed since" in why and "summary" in why
            fresh = data(await client.call_tool("read", {"ref": KEY}))["versions"]["entry"]
            done = data(await client.call_tool("board_update", {"key": KEY, "entry": payload(summary="模型改的"),
                                                                 "base_version": fresh}))
            assert done["action"] == "updated" and done["version"] != fresh

            made = data(await client.call_tool("save_session", {"session": {"session_id": "mcp-stale-1",
                                                                            "sections": {"结论": "初稿"}}}))
            sid = made["id"]
            read = data(await client.call_tool("read", {"ref": sid}))
            assert cli("session", "section", sid, "结论", ws=ws_root, stdin="另一处写的").returncode == 0
            why = error(await client.call_tool("write_section", {"session_id": sid, "heading": "结论", "text": "模型写的",
                                                                 "base_version": read["versions"]["结论"]}))
            assert "changed since" in why

            first = data(await client.call_tool("remember", {"key": "lang", "value": "中文"}))["version"]
            assert cli("memory", "set", "lang", "English", ws=ws_root).returncode == 0
            why = error(await client.call_tool("remember", {"key": "lang", "value": "日本語", "base_version": first}))
            assert "changed" in why

    anyio.run(run)
    board = (ws_root / "LEARNING_BOARD.md").read_text(encoding="utf-8")
    assert "模型改的" in board
    assert cli("memory", "get", "lang", ws=ws_root).stdout.strip() == "English"
