"""Many clients on one workspace at once: several `kbsync mcp` processes (each its own SDK stdio client),
the real daemon and command-line writers, saving sessions, appending to sections of one shared session,
voting on one board entry, searching and building context packs, for a given time. What every writer
was told succeeded is then checked to be on disk; every error any of them saw is kept."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from anyio import to_thread
from mcp import Client

from helpers.board import payload
from helpers.cli import kbsync
from helpers.mcp import stdio

KEY = "发布前确认锁文件@2025-06-11"


@dataclass
class Tally:
    saved: dict[str, str] = field(default_factory=dict)  # session path -> the marker it holds
    appended: list[str] = field(default_factory=list)  # markers appended to the shared session
    votes: int = 0
    reads: int = 0
    errors: list[str] = field(default_factory=list)  # every error text any writer saw


def seed(root: Path) -> tuple[str, str]:
    """The shared session and the board entry; the shared session's id and path."""
    (root / ".kbsync" / "config.toml").write_text('[daemon]\ncommit_every = "1s"\n', encoding="utf-8")
    done = kbsync("session", "save", "--json", ws=root, stdin=json.dumps({"session_id": "shared", "title": "共享"}))
    assert kbsync("board", "add", ws=root, stdin=json.dumps(payload())).returncode == 0
    shared = json.loads(done.stdout)
    return shared["id"], shared["path"]


async def _call(client: Client, tally: Tally, tool: str, args: dict[str, Any]) -> Any:
    result = await client.call_tool(tool, args)
    text = "".join(getattr(c, "text", "") for c in result.content)
    if result.is_error:
        tally.errors.append(f"{tool}: {text}")
        return None
    return json.loads(text)


@dataclass
class Start:
    """The run's clock starts once every client is connected (starting them is not what is measured)."""
    clients: int
    ready: int = 0
    until: float = 0.0
    seconds: float = 0.0
    go: anyio.Event = field(default_factory=anyio.Event)

    async def wait(self) -> float:
        self.ready += 1
        if self.ready == self.clients:
            self.until = time.monotonic() + self.seconds
            self.go.set()
        await self.go.wait()
        return self.until


async def _mcp_worker(root: Path, sid: str, n: int, start: Start, tally: Tally) -> None:
    async with stdio(root) as client:
        until = await start.wait()
        i = 0
        while time.monotonic() < until:
            i += 1
            mark = f"mcp{n}-{i}"
            got = await _call(client, tally, "save_session", {"session": {
                "session_id": f"load-{mark}", "title": f"负载{mark}", "sections": {"结论": mark}}})
            if got:
                tally.saved[got["path"]] = mark
            if await _call(client, tally, "write_section", {"session_id": sid, "heading": "结论",
                                                             "text": f"- {mark}", "append": True}):
                tally.appended.append(mark)
            if await _call(client, tally, "board_feedback", {"key": KEY, "verdict": "helpful"}):
                tally.votes += 1
            tool, args = ("search", {"query": "负载"}) if i % 2 else ("get_context", {"query": "负载"})
            if await _call(client, tally, tool, args) is not None:  # awaited before the count is read
                tally.reads += 1


def _cli_round(root: Path, sid: str, mark: str, tally: Tally) -> None:
    def run(*args: str, stdin: str | None = None) -> bool:
        done = kbsync(*args, ws=root, stdin=stdin)
        if done.returncode not in (0, 1):  # search: 1 is "no hits"
            tally.errors.append(f"kbsync {' '.join(args)}: {done.stderr.strip()}")
        return done.returncode == 0

    saved = kbsync("session", "save", ws=root, stdin=json.dumps({"session_id": f"load-{mark}",
                                                                   "sections": {"结论": mark}}))
    if saved.returncode == 0:
        tally.saved[saved.stdout.strip()] = mark
    else:
        tally.errors.append(f"kbsync session save: {saved.stderr.strip()}")
    if run("session", "section", sid, "结论", "--append", stdin=f"- {mark}"):
        tally.appended.append(mark)
    if run("board", "feedback", KEY, "--helpful"):
        tally.votes += 1
    run("search", "负载")


async def _cli_worker(root: Path, sid: str, start: Start, tally: Tally) -> None:
    until = await start.wait()
    i = 0
    while time.monotonic() < until:
        i += 1
        await to_thread.run_sync(_cli_round, root, sid, f"cli-{i}", tally)


def run_load(root: Path, sid: str, *, clients: int = 5, seconds: float = 3.0) -> Tally:
    """`clients` MCP processes and one command-line writer working for `seconds` (the daemon runs apart)."""
    tally = Tally()

    async def main() -> None:
        start = Start(clients + 1, seconds=seconds)
        async with anyio.create_task_group() as tg:
            for n in range(clients):
                tg.start_soon(_mcp_worker, root, sid, n, start, tally)
            tg.start_soon(_cli_worker, root, sid, start, tally)

    anyio.run(main)
    return tally


def lost(root: Path, sid_path: str, tally: Tally, votes_before: int = 0) -> list[str]:
    """What a writer was told succeeded but is not on disk: one line each."""
    shared = (root / sid_path).read_text(encoding="utf-8")
    out = [f"{m} missing from {sid_path}" for m in tally.appended if shared.count(f"- {m}\n") != 1]
    for path, mark in tally.saved.items():
        if mark not in (root / path).read_text(encoding="utf-8"):
            out.append(f"{path} does not hold {mark}")
    shown = json.loads(kbsync("board", "show", KEY, "--json", ws=root).stdout)
    if shown["feedback"]["helpful"] != votes_before + tally.votes:
        out.append(f"{tally.votes} votes given, {shown['feedback']['helpful'] - votes_before} counted")
    return out
