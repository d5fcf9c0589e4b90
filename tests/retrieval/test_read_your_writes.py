"""A save through kbsync's own write path (CLI, HTTP, MCP) is found by search when the call returns, with no daemon
to re-index it: the write path re-indexes what it wrote."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import anyio

from helpers.cli import Cli
from helpers.mcp import data, stdio
from helpers.retrieval import session_text, sid_for, write
from helpers.web import WebServer, configure


def _marker() -> str:
    return f"zq{uuid.uuid4().hex[:10]}"


def _built(ws_root: Path, cli: Cli) -> None:
    assert cli("index", "rebuild", "--search", ws=ws_root).returncode == 0  # an index exists, no daemon runs


def _found(cli: Cli, ws_root: Path, query: str) -> list[str]:
    out = cli("search", query, "--json", ws=ws_root)
    return [h.get("path", "") for h in json.loads(out.stdout)] if out.returncode == 0 else []


def test_cli_writes_are_found_when_the_command_returns(ws_root: Path, cli: Cli) -> None:
    _built(ws_root, cli)
    mark = _marker()
    saved = cli("session", "save", "--json", ws=ws_root,
                stdin=json.dumps({"session_id": mark, "title": "t", "sections": {"结论": f"{mark} 已确认"}}))
    assert saved.returncode == 0, saved.stderr
    record = json.loads(saved.stdout)
    path = record["path"]
    assert _found(cli, ws_root, f"when did we confirm {mark}?") == [path]
    second = _marker()
    assert cli("session", "section", record["id"], "待办", ws=ws_root, stdin=f"{second} 下周").returncode == 0
    assert _found(cli, ws_root, second) == [path]
    fact = _marker()
    assert cli("memory", "set", "owner", fact, ws=ws_root).returncode == 0
    assert _found(cli, ws_root, fact) == ["memory/facts.md"]
    entry = _marker()
    board = {"title": "发布前确认锁文件", "type": "踩坑", "topic": "部署", "summary": f"{entry} 锁文件未释放",
             "core_content": "发布前检查锁文件", "source": "sessions/x.md", "source_date": "2025-06-11",
             "scenarios": ["发布"], "confidence": "high"}
    assert cli("board", "add", ws=ws_root, stdin=json.dumps(board, ensure_ascii=False)).returncode == 0
    assert _found(cli, ws_root, entry) == ["LEARNING_BOARD.md"]


def test_a_file_written_by_hand_with_no_daemon_is_found_by_the_next_search(ws_root: Path, cli: Cli) -> None:
    _built(ws_root, cli)
    mark = _marker()
    ts = "2025-06-11T10:00:00+08:00"
    sid, prefix = sid_for(ts, "hand")
    write(ws_root, f"{prefix}-hand.md", session_text(sid, ts, ("t",), "closed", "written by hand", f"{mark} 已确认"))
    assert _found(cli, ws_root, mark) == [f"{prefix}-hand.md"]  # the command's first read catches up


def test_mcp_saves_are_found_by_the_next_call(ws_root: Path, cli: Cli) -> None:
    _built(ws_root, cli)
    mark = _marker()

    async def run() -> None:
        async with stdio(ws_root) as client:
            done = data(await client.call_tool("save_session", {"session": {
                "session_id": mark, "title": "发布检查", "sections": {"结论": f"锁文件 {mark}"}}}))
            hits = data(await client.call_tool("search", {"query": f"what about {mark}"}))["results"]
            assert [h["path"] for h in hits] == [done["path"]]
            pack = data(await client.call_tool("get_context", {"query": f"what about {mark}"}))  # no catch-up waited for
            assert any(mark in p["content"]["text"] for p in pack["parts"])
            data(await client.call_tool("remember", {"key": "lang", "value": f"{mark}x"}))
            hits = data(await client.call_tool("search", {"query": f"{mark}x"}))["results"]
            assert [h["path"] for h in hits] == ["memory/facts.md"]

    anyio.run(run)


def test_http_saves_are_found_by_the_next_request(ws_root: Path, tmp_path: Path, cli: Cli) -> None:
    _built(ws_root, cli)
    configure(ws_root)
    srv = WebServer(ws_root, tmp_path / "home")
    try:
        mark = _marker()
        r = srv.call("POST", "/sessions", body={"session_id": mark, "title": "t", "summary": f"{mark} 合同"})
        assert r.status_code == 201, r.text
        hits = srv.call("GET", "/search", params={"q": f"{mark} please"}).json()["results"]
        assert [h["path"] for h in hits] == [r.json()["path"]]
    finally:
        srv.kill()
