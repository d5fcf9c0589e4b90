"""The local server under a flood of connections that need no token (real sockets on 127.0.0.1, bounded in
count and time): requests with the token are still served, the daemon still repairs and commits, the daemon
never runs out of file descriptors, idle and dripping connections are closed, and the log says so once."""

from __future__ import annotations

import contextlib
import resource
import socket
import time
from pathlib import Path
from typing import Iterator

import pytest

from helpers.daemon import dirty, head_files, session_relpath, session_text, wait_for, write
from helpers.web import WebServer

FLOOD = 1_100  # more than systemd's default soft limit of 1,024 open files
SERVICE_LIMITS = (512, 1_024)  # the daemon starts with these (soft, hard); it raises the soft one


@pytest.fixture
def sockets_enough() -> Iterator[None]:
    """This test process may hold the flood's sockets (its soft limit raised for the test, then restored)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = FLOOD + 512
    if hard != resource.RLIM_INFINITY and hard < needed:
        pytest.skip(f"this machine allows {hard} open files; the flood needs {needed}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, needed), hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=10)


def flood_of(port: int, count: int) -> list[socket.socket]:
    """`count` connections started at once (non-blocking), each sending nothing."""
    flood = []
    for _ in range(count):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", port))
        flood.append(s)
    return flood


def closed_by_server(sock: socket.socket) -> bool:
    """Whether the server closed `sock` (EOF or reset, after whatever it sent), without blocking."""
    try:
        while sock.recv(65536, socket.MSG_DONTWAIT):
            pass
        return True
    except BlockingIOError:
        return False
    except OSError:
        return True


def open_fds(pid: int) -> int:
    return len(list(Path(f"/proc/{pid}/fd").iterdir()))


def soft_open_files(pid: int) -> int:
    for line in Path(f"/proc/{pid}/limits").read_text(encoding="ascii").splitlines():
        if line.startswith("Max open files"):
            return int(line.split()[3])
    raise AssertionError("no open-files line")


@pytest.mark.slow
@pytest.mark.usefixtures("sockets_enough")
def test_a_flood_of_idle_connections_starves_neither_the_api_nor_the_daemon(root: Path, tmp_path: Path) -> None:
    srv = WebServer(root, tmp_path / "home", command=("run",), open_files=SERVICE_LIMITS)
    flood: list[socket.socket] = []
    try:
        assert soft_open_files(srv.proc.pid) == SERVICE_LIMITS[1]  # the daemon raised its soft limit
        flood = flood_of(srv.port, FLOOD)
        most = open_fds(srv.proc.pid)
        assert srv.call("GET", "/status").status_code == 200  # the token's request is served meanwhile

        closed = session_relpath(7)  # the daemon's own work goes on: a defect repaired, a session committed
        write(root, closed, dirty(session_text(closed, status="closed")))
        wait_for(lambda: closed in head_files(root), timeout=60)
        assert "status： " not in (root / closed).read_text(encoding="utf-8")
        most = max(most, open_fds(srv.proc.pid))
        assert most < SERVICE_LIMITS[1] - 128  # room left for files, pipes and git, flood or not

        wait_for(lambda: all(closed_by_server(s) for s in flood), timeout=60)  # none sent a request head
        assert srv.call("GET", "/status").status_code == 200
    finally:
        for s in flood:
            s.close()
        srv.stop()
    log = srv.stderr()
    assert "Too many open files" not in log and "Traceback" not in log
    made_room = [line for line in log.splitlines() if "connection closed to make room" in line]
    assert len(made_room) == 1 and "times since the last such line" not in made_room[0]  # once per interval


def test_a_request_head_sent_a_byte_at_a_time_is_cut_off(root: Path, tmp_path: Path) -> None:
    srv = WebServer(root, tmp_path / "home")
    try:
        served = connect(srv.port)  # a kept-alive connection with a request answered, then idle
        served.sendall(f"GET /api/v1/status HTTP/1.1\r\nHost: {srv.host}\r\n"
                       f"Authorization: Bearer {srv.token}\r\n\r\n".encode())
        assert served.recv(64).startswith(b"HTTP/1.1 200")
        dripping = connect(srv.port)
        head = f"GET /api/v1/status HTTP/1.1\r\nHost: {srv.host}\r\nX-Pad: {'a' * 200}\r\n\r\n".encode()
        started, sent = time.monotonic(), 0
        while sent < len(head) and not closed_by_server(dripping):  # some 100 s if nothing cut it off
            try:
                dripping.send(head[sent:sent + 1])
            except OSError:
                break
            sent += 1
            time.sleep(0.5)
        assert sent < len(head) and time.monotonic() - started < 60
        wait_for(lambda: closed_by_server(served), timeout=30)  # its next head never came either
        assert srv.call("GET", "/status").status_code == 200
    finally:
        srv.stop()


def test_a_stream_of_malformed_requests_reaches_the_log_once(root: Path, tmp_path: Path) -> None:
    srv = WebServer(root, tmp_path / "home")
    try:
        for n in range(200):
            with connect(srv.port) as sock:
                sock.sendall(b"\x16\x03\x01 not http %d\r\n\r\n" % n)
                sock.settimeout(10)
                with contextlib.suppress(OSError):
                    sock.recv(1024)  # the server's 400, or its close
        assert srv.call("GET", "/status").status_code == 200
    finally:
        srv.stop()
    invalid = [line for line in srv.stderr().splitlines() if "Invalid HTTP request" in line]
    assert len(invalid) == 1, invalid[:3]
