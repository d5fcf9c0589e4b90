"""Shared helpers for the daemon's tests: workspaces, session files, git, the kbsync CLI."""

from __future__ import annotations

import os
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
    return f"sessions/2025-06-11/{1000 + n % 1400:04d}-{n:07x}-{title}.md"


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
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                          text=True).stdout


def new_repo(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    write(root, ".gitignore", ".kbsync/\n*.tmp\n*.lock\n", age_s=60)
    return root


def kbsync(root: Path, *args: str, timeout: float = 60, env: dict[str, str] | None = None
           ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kbsync", "-w", str(root), *args], capture_output=True,
                          text=True, timeout=timeout, env=env)


def wait_for(cond: Callable[[], object], timeout: float = 20.0, step: float = 0.05) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        time.sleep(step)
