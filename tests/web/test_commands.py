"""`kbsync web serve|url|token`, the daemon serving the API, and an app mounted beside it."""

from __future__ import annotations

import json
import socket
import stat
import threading
from pathlib import Path

import requests

from helpers.cli import Cli
from helpers.daemon import wait_for
from helpers.web import WebServer, configure, server_info


def test_the_token_is_256_random_bits_private_and_rotates(root: Path, cli: Cli) -> None:
    first = cli("web", "token", ws=root)
    assert first.returncode == 0 and len(first.stdout.strip()) == 64 and int(first.stdout, 16) >= 0
    path = root / ".kbsync" / "web-token"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert cli("web", "token", ws=root).stdout == first.stdout
    rotated = cli("web", "token", "--rotate", ws=root)
    assert rotated.returncode == 0 and rotated.stdout != first.stdout
    assert path.read_text(encoding="ascii").strip() == rotated.stdout.strip() and stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_rotation_ends_the_old_token_at_once(root: Path, tmp_path: Path, cli: Cli) -> None:
    server = WebServer(root, tmp_path)
    try:
        old = server.token
        assert server.call("GET", "/status").status_code == 200
        new = cli("web", "token", "--rotate", ws=root).stdout.strip()
        assert server.call("GET", "/status").status_code == 401
        server.token = new
        assert server.call("GET", "/status").status_code == 200 and old != new
    finally:
        assert server.stop() == 0
    assert server_info(root) is None  # withdrawn on a clean stop


def test_url_without_a_server_says_how_to_start_one(root: Path, cli: Cli) -> None:
    r = cli("web", "url", ws=root)
    assert r.returncode == 3 and "kbsync web serve" in r.stderr and "Traceback" not in r.stderr


def test_a_non_loopback_host_is_refused_unless_allowed(root: Path, cli_process: Cli) -> None:
    configure(root, 'host = "0.0.0.0"\n')  # appended to the [web] table
    r = cli_process("web", "serve", ws=root, timeout=30)
    assert r.returncode == 2 and "web.host" in r.stderr and "allow_remote" in r.stderr
    r = cli_process("run", ws=root, timeout=30)
    assert r.returncode == 2 and "allow_remote" in r.stderr


def test_a_taken_port_is_a_clear_error(root: Path, cli_process: Cli) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        text = (root / ".kbsync" / "config.toml").read_text(encoding="utf-8").replace("port = 0", f"port = {port}")
        (root / ".kbsync" / "config.toml").write_text(text, encoding="utf-8")
        r = cli_process("web", "serve", ws=root, timeout=30)
    assert r.returncode == 3 and f"127.0.0.1:{port}" in r.stderr and "[web] port" in r.stderr


def test_the_daemon_serves_the_api_and_stops_it(root: Path, tmp_path: Path) -> None:
    server = WebServer(root, tmp_path, command=("run",))
    try:
        r = server.call("POST", "/sessions", body={"session_id": "via-daemon", "status": "closed"})
        assert r.status_code == 201
        assert server.call("GET", "/status").json()["running"] is True
        from helpers.daemon import subjects

        wait_for(lambda: any("session" in s for s in subjects(root)), timeout=30)  # the daemon committed it
    finally:
        assert server.stop() == 0
    assert server_info(root) is None
    assert "serving the HTTP API" in server.stderr()


def test_the_daemon_does_not_serve_when_web_is_disabled(root: Path, tmp_path: Path) -> None:
    from helpers.daemon import DaemonProcess

    configure(root, "enabled = false\n")
    daemon = DaemonProcess(root)
    try:
        assert server_info(root) is None and not (root / ".kbsync" / "web-token").exists()
    finally:
        assert daemon.stop() == 0


def test_an_app_mounted_beside_the_api_is_behind_the_same_guard(root: Path) -> None:
    from kbsync.app.workspace import open_workspace
    from kbsync.web.server import Mounted, open_server

    async def mounted(scope: dict[str, object], receive: object, send: object) -> None:
        await send({"type": "http.response.start", "status": 200,  # type: ignore[operator]
                    "headers": [(b"content-type", b"text/plain"), (b"access-control-allow-origin", b"*")]})
        await send({"type": "http.response.body", "body": b"mounted"})  # type: ignore[operator]

    ws = open_workspace(str(root), None)
    running = open_server(lambda: ws, mounts=lambda _current: [Mounted("/mcp/", mounted)])
    stop = threading.Event()
    thread = threading.Thread(target=running.serve, args=(stop,))
    thread.start()
    try:
        wait_for(lambda: server_info(root) is not None)
        url, token = running.info.url, (root / ".kbsync" / "web-token").read_text(encoding="ascii").strip()
        assert requests.get(f"{url}/mcp/", timeout=10).status_code == 401
        assert requests.get(f"{url}/mcp/", timeout=10, headers={"Authorization": f"Bearer {token}",
                                                                "Host": "evil.example"}).status_code == 403
        ok = requests.get(f"{url}/mcp/", timeout=10, headers={"Authorization": f"Bearer {token}"})
        assert ok.status_code == 200 and ok.text == "mounted"
        assert "access-control-allow-origin" not in ok.headers and ok.headers["x-frame-options"] == "DENY"
        assert json.loads((root / ".kbsync" / "web.json").read_text(encoding="utf-8"))["url"] == url
    finally:
        stop.set()
        thread.join(10)
    assert not thread.is_alive() and server_info(root) is None


def test_a_lazily_mounted_app_is_made_at_its_first_request_once_and_its_lifespan_left_at_stop(root: Path) -> None:
    import contextlib
    from typing import AsyncIterator

    from kbsync.app.workspace import open_workspace
    from kbsync.web.server import Mounted, open_server

    events: list[str] = []

    async def mounted(scope: dict[str, object], receive: object, send: object) -> None:
        await send({"type": "http.response.start", "status": 200,  # type: ignore[operator]
                    "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": b"made"})  # type: ignore[operator]

    @contextlib.asynccontextmanager
    async def lifespan() -> AsyncIterator[None]:
        events.append("entered")
        yield
        events.append("left")

    def make() -> tuple[object, object]:
        events.append("made")
        return mounted, lifespan

    def broken() -> tuple[object, object]:
        raise RuntimeError("no such library")

    ws = open_workspace(str(root), None)
    running = open_server(lambda: ws, mounts=lambda _current: [Mounted.lazily("/lazy", make),  # type: ignore[arg-type]
                                                                Mounted.lazily("/broken", broken)])  # type: ignore[arg-type]
    stop = threading.Event()
    thread = threading.Thread(target=running.serve, args=(stop,))
    thread.start()
    try:
        wait_for(lambda: server_info(root) is not None)
        url, token = running.info.url, (root / ".kbsync" / "web-token").read_text(encoding="ascii").strip()
        auth = {"Authorization": f"Bearer {token}"}
        assert requests.get(f"{url}/api/v1/status", timeout=10, headers=auth).status_code == 200
        assert events == []  # nothing made while nobody asked for it
        assert requests.get(f"{url}/lazy", timeout=10).status_code == 401 and events == []
        answers = []
        threads = [threading.Thread(target=lambda: answers.append(requests.get(f"{url}/lazy", timeout=10, headers=auth)))
                   for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(15)
        assert [(a.status_code, a.text) for a in answers] == [(200, "made")] * 4 and events == ["made", "entered"]
        failed = requests.get(f"{url}/broken", timeout=10, headers=auth)
        assert failed.status_code == 503 and "no such library" in failed.json()["error"]["message"]
        assert requests.get(f"{url}/api/v1/status", timeout=10, headers=auth).status_code == 200
    finally:
        stop.set()
        thread.join(10)
    assert not thread.is_alive() and events == ["made", "entered", "left"]
