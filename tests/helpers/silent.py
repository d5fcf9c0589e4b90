"""A remote that never answers: a loopback socket that accepts every connection and sends nothing."""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path
from types import TracebackType


class SilentServer:
    """`with SilentServer() as s:` listens on 127.0.0.1:`s.port`; connections are held open, never read."""

    def __init__(self) -> None:
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self.port: int = self._sock.getsockname()[1]
        self._held: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            self._held.append(conn)

    @property
    def connections(self) -> int:
        return len(self._held)

    def __enter__(self) -> SilentServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self._sock.close()
        for conn in self._held:
            conn.close()


def processes_in(folder: Path) -> list[str]:
    """Command lines of the running processes whose current folder is `folder` (kbsync runs git there)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and os.readlink(f"/proc/{entry}/cwd") == str(folder):
                with open(f"/proc/{entry}/cmdline", "rb") as fh:
                    found.append(fh.read().replace(b"\0", b" ").decode("utf-8", "replace"))
        except OSError:
            continue
    return found
