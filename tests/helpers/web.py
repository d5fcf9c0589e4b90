"""The local HTTP API under test: a real `kbsync web serve` (or `kbsync run`) process on a workspace,
reached over real HTTP on 127.0.0.1, its token read from the workspace as a client would."""

from __future__ import annotations

import json
import os
import resource
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import requests

from helpers.daemon import wait_for

CONFIG = "[daemon]\nquiet_ms = 50\n{daemon}\n[web]\nport = {port}\n"


def free_port() -> int:
    """A port of 127.0.0.1 free now (a server that must keep its address across a restart is given one)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def server_env(home: Path) -> dict[str, str]:
    """A server process's environment: its own HOME, a git identity, no KBSYNC_* of the test run."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KBSYNC_")}
    env.update(HOME=str(home), GIT_CONFIG_NOSYSTEM="1")
    for who in ("AUTHOR", "COMMITTER"):
        env.update({f"GIT_{who}_NAME": "kbsync test", f"GIT_{who}_EMAIL": "test@kbsync.invalid"})
    return env


def configure(root: Path, extra: str = "", *, daemon: str = "", port: int = 0) -> None:
    """Serve on `port` (0: any free port, a new one at each start), commit files quiet for 50 ms, plus `daemon`
    lines in [daemon] and `extra` TOML."""
    (root / ".kbsync").mkdir(parents=True, exist_ok=True)
    (root / ".kbsync" / "config.toml").write_text(CONFIG.format(daemon=daemon, port=port) + extra, encoding="utf-8")


def server_info(root: Path) -> dict[str, Any] | None:
    try:
        data: dict[str, Any] = json.loads((root / ".kbsync" / "web.json").read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return None
    return data


class WebServer:
    """A real server process on `root` (`kbsync web serve`, or `kbsync run` with `command="run"`)."""

    def __init__(self, root: Path, home: Path, *, command: tuple[str, ...] = ("web", "serve"),
                 python: tuple[str, ...] = (), open_files: tuple[int, int] | None = None) -> None:
        """`python`: what the interpreter is given before `-m kbsync` (a bench's wrapper script);
        `open_files`: the (soft, hard) RLIMIT_NOFILE the process starts with, as a service manager sets it."""
        self.root = root
        self._home = home
        self._argv = [sys.executable, *python, "-m", "kbsync", "-v", "-w", str(root), *command]
        self._limits = None if open_files is None else lambda: resource.setrlimit(resource.RLIMIT_NOFILE, open_files)
        self._start()

    def _start(self) -> None:
        self.log = self.root.parent / f"server-{time.monotonic_ns()}.log"
        self._err = open(self.log, "w")
        self.proc = subprocess.Popen(self._argv, stdout=subprocess.DEVNULL, stderr=self._err,
                                     env=server_env(self._home), preexec_fn=self._limits)
        wait_for(self._listening, timeout=30)
        info = server_info(self.root)
        assert info is not None
        self.url: str = info["url"]
        self.port: int = info["port"]
        self.host = f"127.0.0.1:{self.port}"
        self.token = (self.root / ".kbsync" / "web-token").read_text(encoding="ascii").strip()
        self.http = requests.Session()

    def restart(self) -> None:
        """Stop the process and start the same command again (on the same port when the config names one)."""
        self.stop()
        self._start()

    def _listening(self) -> bool:
        if self.proc.poll() is not None:
            raise AssertionError(f"the server exited {self.proc.returncode}:\n{self.stderr()}")
        info = server_info(self.root)
        return info is not None and info.get("pid") == self.proc.pid

    def stderr(self) -> str:
        return self.log.read_text(encoding="utf-8")

    def call(self, method: str, path: str, *, body: Any = None, auth: bool = True, timeout: float = 30,
             **kwargs: Any) -> requests.Response:
        """`method` on `/api/v1` + `path` with the token (and `body` as JSON)."""
        headers = {"Authorization": f"Bearer {self.token}"} if auth else {}
        headers.update(kwargs.pop("headers", {}))
        url = self.url + (path if path.startswith("/api/") or path.startswith("/login") or path == "/"
                          else "/api/v1" + path)
        return self.http.request(method, url, json=body, headers=headers, timeout=timeout, **kwargs)

    def stop(self, timeout: float = 15) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        finally:
            self.http.close()
            self._err.close()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self.http.close()
        self._err.close()
