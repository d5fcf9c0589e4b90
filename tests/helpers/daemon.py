"""Shared helpers for the daemon's tests: workspaces, session files, git, the kbsync CLI."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

SESSION = """---
id: {sid}
ts: {date}T{hh}:{mm}:07+08:00
role: assistant
parent: null
tags: [合同, 风险]
status: {status}
summary: "梳理"
---

## 用户输入

{body}

## 我的判断

## 工具调用

## 结论

## 待办
"""


def session_relpath(n: int, title: str = "合同风险梳理") -> str:
    return f"sessions/2025-06-11/{n // 60 % 24:02d}{n % 60:02d}-{n:07x}-{title}.md"


def session_text(relpath: str, *, status: str = "open", body: str = "x") -> str:
    name = relpath.rsplit("/", 1)[1]
    hhmm, short = name[:4], name[5:12]
    date = relpath.split("/")[1]
    sid = f"{date.replace('-', '')}-{hhmm}-{short}"
    return SESSION.format(sid=sid, date=date, hh=hhmm[:2], mm=hhmm[2:], status=status, body=body)


def dirty(text: str) -> str:
    """A defect the repair fixes: a full-width colon after a key."""
    return text.replace("status: ", "status： ", 1)


def write(root: Path, relpath: str, text: str, *, age_s: float = 0.0) -> Path:
    p = root / relpath
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
    if age_s:
        t = time.time() - age_s
        os.utime(p, (t, t))
    return p


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), "-c", "core.quotePath=false", *args], check=True, capture_output=True,
                          text=True).stdout


def new_repo(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    write(root, ".gitignore", ".kbsync/\n*.tmp\n*.lock\n", age_s=60)
    return root


def wait_for(cond: Callable[[], object], timeout: float = 20.0, step: float = 0.05) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        time.sleep(step)


class DaemonProcess:
    """A real `kbsync run` subprocess on a workspace, its stderr kept in a file."""

    def __init__(self, root: Path, *args: str, env: dict[str, str] | None = None) -> None:
        self.root = root
        self.log = root.parent / f"daemon-{time.monotonic_ns()}.log"
        self._err = open(self.log, "w")
        cmd = [sys.executable, "-m", "kbsync", "-v", "-w", str(root), *args, "run"]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=self._err, env=env)
        wait_for(self._ready, timeout=30)

    def _ready(self) -> bool:
        if self.proc.poll() is not None:
            raise AssertionError(f"kbsync run exited {self.proc.returncode}:\n{self.stderr()}")
        status = self.root / ".kbsync" / "status.json"
        return status.exists() and f'"pid": {self.proc.pid}' in status.read_text(encoding="utf-8")

    def stderr(self) -> str:
        return self.log.read_text(encoding="utf-8")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 10.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        finally:
            self._err.close()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self._err.close()


def head_files(root: Path) -> set[str]:
    """Paths committed at HEAD; empty before the first commit."""
    proc = subprocess.run(["git", "-C", str(root), "-c", "core.quotePath=false", "ls-tree", "-r", "--name-only", "HEAD"], capture_output=True,
                          text=True)
    return set(proc.stdout.splitlines()) if proc.returncode == 0 else set()


def subjects(root: Path) -> list[str]:
    proc = subprocess.run(["git", "-C", str(root), "log", "--format=%s"], capture_output=True, text=True)
    return proc.stdout.splitlines() if proc.returncode == 0 else []
