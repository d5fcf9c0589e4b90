"""A request's wall-clock bound (kbsync.sync.transports.wallclock) over TLS as over plain HTTP: an answer
sent a byte at a time, which no per-read time-out ever ends, is cut off at the bound; a prompt answer on the
same session is not."""

from __future__ import annotations

import shutil
import socket
import ssl
import subprocess
import threading
import time
from pathlib import Path
from typing import Iterator

import pytest
import requests

from kbsync.sync.transports import wallclock

ANSWER = b"HTTP/1.1 200 OK\r\nContent-Length: 200\r\nContent-Type: text/plain\r\n\r\n" + b"x" * 200


class DripServer:
    """127.0.0.1, TLS when given a certificate: each request's answer is sent whole, or (`drip`) a byte every
    0.2 s until the client goes away."""

    def __init__(self, cert: tuple[Path, Path] | None) -> None:
        self.context: ssl.SSLContext | None = None
        if cert is not None:
            self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            self.context.load_cert_chain(str(cert[0]), str(cert[1]))
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.drip = True
        self.abandoned = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        try:
            sock = self.context.wrap_socket(conn, server_side=True) if self.context else conn
            while sock.recv(65536).find(b"\r\n\r\n") < 0:
                pass
            if not self.drip:
                sock.sendall(ANSWER)
                return
            for byte in ANSWER:
                sock.sendall(bytes([byte]))
                time.sleep(0.2)
        except OSError:
            self.abandoned += 1

    def close(self) -> None:
        self.listener.close()


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl is not installed (Debian package openssl)")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    return cert, key


@pytest.fixture(params=["http", "https"])
def server(request: pytest.FixtureRequest) -> Iterator[tuple[str, DripServer, str | bool]]:
    cert: tuple[Path, Path] | None = request.getfixturevalue("certificate") if request.param == "https" else None
    srv = DripServer(cert)
    yield f"{request.param}://127.0.0.1:{srv.port}/", srv, str(cert[0]) if cert else True
    srv.close()


def test_an_answer_sent_a_byte_at_a_time_is_cut_off_at_the_bound(server: tuple[str, DripServer, str | bool]) -> None:
    url, srv, verify = server
    session = wallclock.mount(requests.Session())
    started = time.monotonic()
    with pytest.raises(requests.Timeout, match="no complete answer within 1 s"):
        wallclock.send(1.0, lambda: session.get(url, verify=verify, timeout=1.0))
    assert time.monotonic() - started < 10  # the whole answer takes some 50 s
    deadline = time.monotonic() + 10
    while srv.abandoned < 1 and time.monotonic() < deadline:  # the server sees the connection go
        time.sleep(0.05)
    assert srv.abandoned == 1
    srv.drip = False
    answer = wallclock.send(5.0, lambda: session.get(url, verify=verify, timeout=5.0))
    assert answer.status_code == 200 and answer.content == b"x" * 200
