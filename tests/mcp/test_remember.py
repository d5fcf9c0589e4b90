"""`remember` and `forget` over stdio write the same facts as `kbsync memory set` and `forget`."""

from __future__ import annotations

from pathlib import Path

import anyio

from helpers.cli import Cli
from helpers.mcp import data, stdio


def test_remember_replaces_a_fact_in_place_and_forget_removes_it(ws_root: Path, cli: Cli) -> None:
    async def run() -> None:
        async with stdio(ws_root) as client:
            assert data(await client.call_tool("remember", {"key": "lang", "value": "中文"}))["action"] == "added"
            assert data(await client.call_tool("remember", {"key": "lang", "value": "English"}))["action"] == "replaced"
            made = data(await client.call_tool("remember", {"key": "owner", "value": "王五", "entity": "Project Alpha"}))
            assert made["path"] == "memory/entities/project-alpha.md"
            assert data(await client.call_tool("forget", {"key": "owner", "entity": "Project Alpha"}))["action"] == "removed"

    anyio.run(run)
    assert cli("memory", "get", "lang", ws=ws_root).stdout.strip() == "English"
    assert "- lang: English" in (ws_root / "memory" / "facts.md").read_text(encoding="utf-8")
    assert cli("memory", "get", "--entity", "Project Alpha", "owner", ws=ws_root).returncode == 1
    assert cli("validate", ws=ws_root).returncode == 0
