"""The guard: what a web page in the same browser, a DNS-rebinding page, or a client without the token
can do (nothing), and the one-time login link with its session cookie."""

from __future__ import annotations

import re
import socket
from pathlib import Path
from urllib.parse import quote

import pytest
import requests

from helpers.cli import main_call
from helpers.web import WebServer

WRITE = ("POST", "/logs/errors")


def errors_log(server: WebServer) -> str:
    return (server.root / "logs" / "errors.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer " + "0" * 64}, {"Authorization": "Basic eDp5"},
                                     {"Authorization": "Bearer"}, {"Cookie": "kbsync_session_1=forged"}])
def test_no_token_or_a_wrong_one_is_401(server: WebServer, headers: dict[str, str]) -> None:
    for path in ("/status", "/api/openapi.json", "/", "/sessions"):
        r = server.call("GET", path, auth=False, headers=headers)
        assert r.status_code == 401 and r.json()["error"]["code"] == "unauthorized"
        assert r.headers["www-authenticate"].startswith("Bearer")
    r = server.call(*WRITE, auth=False, headers=headers, body={"message": "nope"})
    assert r.status_code == 401 and "nope" not in errors_log(server)


@pytest.mark.parametrize("host", ["evil.example:80", "evil.example", "127.0.0.1", "127.0.0.1:1", "localhost.evil.example"])
def test_a_foreign_host_is_403_even_with_the_token(server: WebServer, host: str) -> None:
    r = server.call("GET", "/status", headers={"Host": host})
    assert r.status_code == 403 and "Host" in r.json()["error"]["message"]


def test_the_loopback_names_with_the_port_are_accepted(server: WebServer) -> None:
    for name in ("127.0.0.1", "localhost", "LOCALHOST"):
        assert server.call("GET", "/status", headers={"Host": f"{name}:{server.port}"}).status_code == 200


def test_no_host_header_at_all_is_403(server: WebServer) -> None:
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(f"GET /api/v1/status HTTP/1.0\r\nAuthorization: Bearer {server.token}\r\n\r\n".encode())
        answer = sock.recv(4096).decode("latin-1")
    assert answer.startswith("HTTP/1.1 403")


@pytest.mark.parametrize("origin", ["http://evil.example", "null", "http://127.0.0.1:1", "https://127.0.0.1"])
def test_a_foreign_origin_is_403_and_nothing_is_written(server: WebServer, origin: str) -> None:
    r = server.call(*WRITE, body={"message": f"from {origin}"}, headers={"Origin": origin})
    assert r.status_code == 403 and f"from {origin}" not in errors_log(server)
    assert server.call("GET", "/status", headers={"Origin": origin}).status_code == 403


def test_the_own_origin_is_accepted_and_no_cors_header_is_ever_sent(server: WebServer) -> None:
    r = server.call("GET", "/status", headers={"Origin": server.url})
    assert r.status_code == 200
    preflight = server.call("OPTIONS", "/logs/errors", auth=False, headers={
        "Origin": "http://evil.example", "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization,content-type"})
    for answer in (r, preflight):
        assert not [h for h in answer.headers if h.lower().startswith("access-control-")]
    assert preflight.status_code == 403


@pytest.mark.parametrize("content_type", ["application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
                                          "text/plain"])
def test_a_form_post_without_a_csrf_token_is_403(server: WebServer, content_type: str) -> None:
    r = server.call(*WRITE, data=b'{"message": "form"}', headers={"Content-Type": content_type})
    assert r.status_code == 403 and r.json()["error"]["code"] == "csrf"
    assert '"form"' not in errors_log(server) and "| form" not in errors_log(server)


def test_a_write_without_json_is_415(server: WebServer) -> None:
    for headers in ({"Content-Type": "application/xml"}, {}):
        r = server.call(*WRITE, data=b"<message/>", headers=headers)
        assert r.status_code == 415 and r.json()["error"]["code"] == "unsupported_media_type"


def test_an_oversize_body_is_413_whether_announced_or_streamed(server: WebServer) -> None:
    big = b'{"message": "' + b"x" * (8192 * 1024 + 10) + b'"}'
    try:  # the server answers before reading the body and closes: what the client reads may be cut short
        r = server.call(*WRITE, data=big, headers={"Content-Type": "application/json"}, stream=True)
        assert r.status_code == 413
        assert r.json()["error"]["code"] == "too_large"
    except (requests.exceptions.ConnectionError, requests.exceptions.ChunkedEncodingError):
        pass
    assert "x" * 100 not in errors_log(server)

    def chunks() -> object:
        for _ in range(9):
            yield b"x" * (1024 * 1024)

    try:  # the server answers 413 and closes while the client may still be sending: either end is a refusal
        r = requests.post(server.url + "/api/v1/logs/errors", data=chunks(), timeout=30,
                          headers={"Authorization": f"Bearer {server.token}", "Content-Type": "application/json"})
        assert r.status_code == 413
    except (requests.exceptions.ConnectionError, requests.exceptions.ChunkedEncodingError):
        pass  # the connection was cut before the 413 could be read whole
    assert "x" * 100 not in errors_log(server)


@pytest.mark.parametrize("method,path", [
    ("GET", "/sessions/..%2F..%2F..%2Fetc%2Fpasswd"), ("GET", "/sessions/%2E%2E"),
    ("GET", "/sessions/20250101-0000-0000000%2F..%2F.."), ("PUT", "/sessions/..%2Findex.md/sections/x"),
    ("PUT", "/sessions/20250611-1432-abcdef0/sections/..%2F..%2Fetc"), ("GET", "/board/entries/..%2F..%2Fetc%2Fpasswd"),
    ("PUT", "/board/entries/..%2F..%2FLEARNING_BOARD.md"), ("POST", "/candidates/..%2F..%2Fx/reject")])
def test_path_traversal_in_ids_keys_and_items_reaches_no_file(server: WebServer, method: str, path: str) -> None:
    body = {"text": "x"} if "sections" in path else {}
    r = server.call(method, path, body=body)
    assert r.status_code in (400, 404, 422), (path, r.status_code, r.text)
    assert "root:" not in r.text


COPY = "x.conflict-20250101T000000Z-abcdef.md"


@pytest.mark.parametrize("method,path", [
    ("GET", "/conflicts/..%2F..%2F..%2Fetc%2Fpasswd"), ("GET", "/conflicts/%2E%2E%2Fweb%2Fws%2Findex.md"),
    ("GET", "/conflicts//etc/passwd"), ("GET", "/conflicts/%2Fetc%2Fpasswd"), ("GET", "/conflicts/.git/config"),
    ("GET", "/conflicts/memory/.GIT/HEAD"), ("GET", "/conflicts/.kbsync/web-token"), ("GET", "/conflicts/.KBSYNC./config.toml"),
    ("GET", "/conflicts/memory/..%2F..%2Findex.md"), ("GET", "/conflicts/memory/.%2Ffacts.md"), ("GET", "/conflicts/"),
    ("POST", "/conflicts/..%2F..%2Fx.md/resolve"), ("POST", "/conflicts/.git/config/resolve"),
    ("POST", "/conflicts/.kbsync/web-token/resolve"), ("POST", "/conflicts//etc/passwd/resolve")])
def test_path_traversal_in_a_conflict_path_is_refused_before_any_file_is_read(server: WebServer, method: str,
                                                                               path: str) -> None:
    token = (server.root / ".kbsync" / "web-token").read_text(encoding="ascii")
    r = server.call(method, path, body={"keep": "theirs"} if method == "POST" else None)
    assert r.status_code == 400 and r.json()["error"]["code"] == "bad_request", (path, r.status_code, r.text)
    assert "root:" not in r.text and token.strip() not in r.text and "[core]" not in r.text
    assert (server.root / ".kbsync" / "web-token").read_text(encoding="ascii") == token


def test_a_conflict_path_through_or_onto_a_symlink_is_refused_and_nothing_outside_changes(server: WebServer,
                                                                                          tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.md").write_text("outside original\n", encoding="utf-8")
    (outside / COPY).write_text("outside copy\n", encoding="utf-8")
    through, onto = server.root / "artifacts" / "linked", server.root / "artifacts" / COPY
    through.symlink_to(outside, target_is_directory=True)
    onto.symlink_to(outside / COPY)
    try:
        for rel, why in ((f"artifacts/linked/{COPY}", "passes through artifacts/linked"), (f"artifacts/{COPY}", "symlink")):
            for method in ("GET", "POST"):
                r = server.call(method, f"/conflicts/{rel}" + ("/resolve" if method == "POST" else ""),
                                body={"keep": "mine"} if method == "POST" else None)
                assert r.status_code == 400 and why in r.json()["error"]["message"], (rel, r.text)
                assert "outside" not in r.text
    finally:
        through.unlink()
        onto.unlink()
    assert sorted(p.name for p in outside.iterdir()) == sorted(["x.md", COPY])
    assert (outside / "x.md").read_text(encoding="utf-8") == "outside original\n"
    assert (outside / COPY).read_text(encoding="utf-8") == "outside copy\n"


def test_a_memory_key_or_entity_reaches_no_file_outside_memory(server: WebServer) -> None:
    for path, params in (("/memory/..%2F..%2F..%2Fetc%2Fpasswd", {}), ("/memory/x", {"entity": "../../../etc/passwd"}),
                         ("/memory/x", {"entity": "..%2F.git%2Fconfig"})):
        r = server.call("GET", path, params=params)
        assert r.status_code == 404 and r.json()["error"]["path"].startswith("memory/"), r.text
        assert "root:" not in r.text
    r = server.call("PUT", "/memory/x", body={"value": "v", "entity": "../.git/config"})
    assert r.status_code == 201 and r.json()["path"] == "memory/entities/gitconfig.md", r.text  # the slug's file
    assert "- x: v" in (server.root / "memory" / "entities" / "gitconfig.md").read_text(encoding="utf-8")
    assert "- x: v" not in (server.root / ".git" / "config").read_text(encoding="utf-8")


def test_a_cookie_session_deletes_only_with_json_or_its_csrf_token(server: WebServer) -> None:
    server.call("PUT", "/memory/cookie-fact", body={"value": "kept"})
    browser, _ = _login(server)
    csrf = re.search(r'name="csrf-token" content="([0-9a-f]{64})"', browser.get(server.url + "/", timeout=10).text)
    assert csrf
    url = server.url + "/api/v1/memory/cookie-fact"
    assert browser.delete(url, timeout=10).status_code == 415
    assert browser.delete(url, headers={"Content-Type": "application/x-www-form-urlencoded"}, timeout=10).status_code == 403
    assert "cookie-fact: kept" in (server.root / "memory" / "facts.md").read_text(encoding="utf-8")
    assert browser.delete(url, headers={"X-CSRF-Token": csrf.group(1)}, timeout=10).status_code == 200
    assert "cookie-fact" not in (server.root / "memory" / "facts.md").read_text(encoding="utf-8")


def test_security_headers_on_every_answer(server: WebServer) -> None:
    for r in (server.call("GET", "/status"), server.call("GET", "/status", auth=False),
              server.call("GET", "/status", headers={"Host": "evil.example"}), server.call("GET", "/nothing")):
        assert r.headers["x-content-type-options"] == "nosniff"
        assert r.headers["x-frame-options"] == "DENY"
        csp = r.headers["content-security-policy"]
        assert "default-src 'none'" in csp and "frame-ancestors 'none'" in csp
        assert "server" not in {h.lower() for h in r.headers}


def _login(server: WebServer) -> tuple[requests.Session, requests.Response]:
    got = main_call("web", "url", ws=server.root)
    assert got.returncode == 0, got.stderr
    url = got.stdout.strip()
    assert url.startswith(f"{server.url}/login?token=") and re.fullmatch(r"[0-9a-f]{64}", url.rsplit("=", 1)[1])
    browser = requests.Session()
    return browser, browser.get(url, allow_redirects=False, timeout=10)


def test_the_login_link_works_once_and_sets_a_strict_httponly_cookie(server: WebServer) -> None:
    browser, r = _login(server)
    assert r.status_code == 303 and r.headers["location"] == "/"
    cookie = r.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict")
    assert "token" not in r.headers["location"]
    page = browser.get(server.url + "/", timeout=10)
    assert page.status_code == 200 and "/api/openapi.json" in page.text
    assert browser.get(server.url + "/api/v1/status", timeout=10).status_code == 200
    again = requests.get(r.url, allow_redirects=False, timeout=10)
    assert again.status_code == 401 and "kbsync web url" in again.text and "used already" in again.text
    assert again.headers["content-type"].startswith("text/html")  # a page for the person, never raw JSON
    assert not list((server.root / ".kbsync" / "web-login").iterdir())  # used: its file is gone


def test_a_cookie_session_needs_json_or_its_csrf_token_to_write(server: WebServer) -> None:
    browser, _ = _login(server)
    page = browser.get(server.url + "/", timeout=10).text
    csrf = re.search(r'name="csrf-token" content="([0-9a-f]{64})"', page)
    assert csrf
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    assert browser.post(server.url + "/api/v1/logs/errors", data="message=x", headers=form, timeout=10).status_code == 403
    r = browser.post(server.url + "/api/v1/logs/errors", json={"message": "cookie write"}, timeout=10)
    assert r.status_code == 201 and "cookie write" in errors_log(server)
    r = browser.post(server.url + "/api/v1/logs/errors", data='{"message": "with csrf"}', timeout=10,
                     headers={**form, "X-CSRF-Token": csrf.group(1)})
    assert r.status_code == 422  # past the guard; the endpoint itself takes JSON only
    r = browser.post(server.url + "/api/v1/logs/errors", json={"message": "evil"}, timeout=10,
                     headers={"Origin": "http://evil.example"})
    assert r.status_code == 403 and "evil" not in errors_log(server)


def test_a_forged_or_expired_login_token_is_401(server: WebServer) -> None:
    for token in ("0" * 64, "../../web-token", quote("x" * 64)):
        r = requests.get(f"{server.url}/login?token={token}", allow_redirects=False, timeout=10)
        assert r.status_code == 401 and "set-cookie" not in r.headers
