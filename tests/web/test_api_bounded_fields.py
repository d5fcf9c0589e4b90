"""The HTTP API takes the same app functions as MCP and the command line, so the same maxima hold: a field over
its maximum is 422 with one line naming it (never the value), and nothing is written; a board entry's core
content cannot plant a second entry. Real server, real HTTP on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

from helpers.board import payload
from helpers.cli import Cli
from helpers.web import WebServer
from kbsync.core import protocol
from kbsync.core.board import parse_board

BIG = "长" * (1024 * 1024)  # 1 M characters, 3 MB of UTF-8: under the body cap, over every field's maximum


def files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*.md"))
            if ".git" not in p.parts and ".kbsync" not in p.parts}


def test_oversized_fields_are_422_and_nothing_is_written(server: WebServer) -> None:
    before = files(server.root)
    calls = [
        ("POST", "/logs/tool-calls", {"session": "s1", "tool": "grep", "detail": BIG}, "detail"),
        ("POST", "/logs/errors", {"message": BIG}, "message"),
        ("PUT", "/memory/lang", {"value": BIG}, "value"),
        ("POST", "/board/entries", payload(title="大条目", core_content=BIG), "core_content"),
        ("POST", "/sessions", {"session_id": "big", "title": BIG}, "title"),
    ]
    for method, path, body, field in calls:
        r = server.call(method, path, body=body)
        assert r.status_code == 422, (path, r.status_code)
        assert len(r.content) < 1000 and "长长" not in r.text and field in r.text, r.text[:300]
    assert files(server.root) == before


def test_core_content_cannot_plant_an_entry_over_http(server: WebServer) -> None:
    core = "正文\n### 伪造的条目\n\n- 类型: 方法\n```\n### 藏起来"
    r = server.call("POST", "/board/entries", body=payload(title="HTTP 条目", core_content=core))
    assert r.status_code == 201, r.text
    after = server.call("POST", "/board/entries", body=payload(title="HTTP 后来的条目"))
    assert after.status_code == 201, after.text
    titles = [b.entry.title for b in parse_board((server.root / protocol.BOARD_MD).read_text("utf-8")).entries()]
    assert "伪造的条目" not in titles and "藏起来" not in titles and "HTTP 后来的条目" in titles
    got = server.call("GET", f"/board/entries/{quote(r.json()['key'], safe='')}")
    assert got.status_code == 200 and "\\### 伪造的条目" in got.text


def test_the_command_line_refuses_the_same(ws_root: Path, cli: Cli) -> None:
    import json

    before = files(ws_root)
    long = "x" * 100_000  # an argument a command line can still carry (one may hold 128 KB)
    done = cli("log", "tool-call", "--session", "s1", "--tool", "grep", "--detail", long, ws=ws_root)
    assert done.returncode == 2 and "detail is 100,000 characters" in done.stderr and len(done.stderr) < 400
    assert "xxxxxxxxxx" not in done.stderr
    done = cli("memory", "set", "lang", long, ws=ws_root)
    assert done.returncode == 2 and "characters, over the" in done.stderr and len(done.stderr) < 400
    done = cli("board", "add", ws=ws_root, stdin=json.dumps(payload(core_content="长" * 2_000_000)))
    assert done.returncode == 2 and "core_content is 2,000,000 characters" in done.stderr
    assert len(done.stderr) < 600 and "Traceback" not in done.stderr
    assert files(ws_root) == before


def test_an_oversized_unknown_key_is_not_echoed(server: WebServer) -> None:
    r = server.call("POST", "/logs/tool-calls", body={"session": "s1", "tool": "grep", "长" * 100_000: "x"})
    assert r.status_code == 422 and len(r.content) < 1000 and "长" * 50 not in r.text, r.text[:300]
