"""An update based on an older read never overwrites a newer change: the board entry, a session's section and
a fact each have a version (an ETag over HTTP); an update that sends the version it read (If-Match) is refused
with 409 `stale`, naming what changed and carrying the current version, when another writer (here the command
line) changed the thing since. Real server, real sockets, the real command line as the other writer."""

from __future__ import annotations

import json
import uuid
from urllib.parse import quote

from helpers.board import payload as entry_payload
from helpers.cli import main_call
from helpers.web import WebServer


def _key_url(key: str) -> str:
    return f"/board/entries/{quote(key, safe='')}"


def test_a_stale_board_update_is_refused_and_names_what_changed(server: WebServer) -> None:
    body = entry_payload(title="版本条目", summary="第一版")
    key = server.call("POST", "/board/entries", body=body).json()["key"]
    read = server.call("GET", _key_url(key))
    etag = read.headers["ETag"]
    assert etag == f'"{read.json()["version"]}"'
    newer = {**body, "summary": "命令行改过的摘要"}
    done = main_call("board", "update", key, ws=server.root, stdin=json.dumps(newer, ensure_ascii=False))
    assert done.returncode == 0, done.stderr
    r = server.call("PUT", _key_url(key), body={**body, "core_content": "基于旧版的改动"}, headers={"If-Match": etag})
    assert r.status_code == 409, r.text
    err = r.json()["error"]
    assert err["code"] == "stale" and key in err["message"] and "summary" in err["message"]
    assert err["current"]["summary"] == "命令行改过的摘要" and "summary" in err["changed"]
    assert r.headers["ETag"] == f'"{err["version"]}"' != etag
    board = (server.root / "LEARNING_BOARD.md").read_text(encoding="utf-8")
    assert "命令行改过的摘要" in board and "基于旧版的改动" not in board  # nothing written
    again = server.call("PUT", _key_url(key), body={**newer, "core_content": "基于新版的改动"},
                        headers={"If-Match": r.headers["ETag"]})
    assert again.status_code == 200 and again.json()["action"] == "updated"
    assert again.headers["ETag"] == f'"{again.json()["version"]}"' == f'"{server.call("GET", _key_url(key)).json()["version"]}"'


def test_an_update_without_if_match_or_with_a_star_is_not_checked(server: WebServer) -> None:
    body = entry_payload(title="无条件条目")
    key = server.call("POST", "/board/entries", body=body).json()["key"]
    assert server.call("PUT", _key_url(key), body={**body, "summary": "一"}).status_code == 200
    assert server.call("PUT", _key_url(key), body={**body, "summary": "二"}, headers={"If-Match": "*"}).status_code == 200
    weak = server.call("GET", _key_url(key)).headers["ETag"]
    assert server.call("PUT", _key_url(key), body={**body, "summary": "三"},
                       headers={"If-Match": f"W/{weak}"}).status_code == 200


def test_a_stale_section_update_is_refused(server: WebServer) -> None:
    sid = uuid.uuid4().hex
    record = server.call("POST", "/sessions", body={"session_id": sid, "sections": {"结论": "初稿"}}).json()
    session = server.call("GET", f"/sessions/{record['id']}").json()
    version = next(s["version"] for s in session["sections"] if s["heading"] == "结论")
    other = next(s["version"] for s in session["sections"] if s["heading"] == "待办")
    done = main_call("session", "section", record["id"], "结论", ws=server.root, stdin="命令行写的结论")
    assert done.returncode == 0, done.stderr
    url = f"/sessions/{record['id']}/sections/{quote('结论')}"
    r = server.call("PUT", url, body={"text": "基于旧版"}, headers={"If-Match": f'"{version}"'})
    assert r.status_code == 409 and r.json()["error"]["code"] == "stale"
    assert "命令行写的结论" in r.json()["error"]["current"]
    text = (server.root / record["path"]).read_text(encoding="utf-8")
    assert "命令行写的结论" in text and "基于旧版" not in text
    # another section's version still holds: a change elsewhere in the file does not make it stale
    r = server.call("PUT", f"/sessions/{record['id']}/sections/{quote('待办')}", body={"text": "- 跟进"},
                    headers={"If-Match": f'"{other}"'})
    assert r.status_code == 200 and r.headers["ETag"] == f'"{r.json()["version"]}"'


def test_a_stale_fact_update_is_refused_and_a_forgotten_one_too(server: WebServer) -> None:
    key = f"editor-{uuid.uuid4().hex[:6]}"
    server.call("PUT", f"/memory/{key}", body={"value": "vim"})
    got = server.call("GET", f"/memory/{key}")
    assert got.headers["ETag"] == f'"{got.json()["version"]}"'
    assert main_call("memory", "set", key, "emacs", ws=server.root).returncode == 0
    r = server.call("PUT", f"/memory/{key}", body={"value": "nano"}, headers={"If-Match": got.headers["ETag"]})
    assert r.status_code == 409 and r.json()["error"]["current"] == "emacs"
    assert "emacs" in (server.root / "memory/facts.md").read_text(encoding="utf-8")
    fresh = server.call("GET", f"/memory/{key}").headers["ETag"]
    assert main_call("memory", "forget", key, ws=server.root).returncode == 0
    r = server.call("PUT", f"/memory/{key}", body={"value": "nano"}, headers={"If-Match": fresh})
    assert r.status_code == 409 and "forgotten" in r.json()["error"]["message"]
