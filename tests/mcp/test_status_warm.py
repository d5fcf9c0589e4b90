"""`kbsync mcp` makes what `status` keeps between calls (every folder's listing) in the background as it starts,
with no call asking (kbsync.app.catchup): a `status` answered at once, while that may still be going on, says
what a report made afresh says, and so does one after a folder changed; the server stops at the end of its
input as before, the warm-up done or not.

The server is the real command line in a fresh interpreter, driven by the SDK's client over stdio; the probe
around it records what `main` returned and which threads were left once it had."""

from __future__ import annotations

import os
import time
from pathlib import Path

import anyio
from mcp import Client

from helpers.mcp import data, stdio_params
from kbsync.app.status import report
from kbsync.app.workspace import open_workspace

# what main returned, and the threads of kbsync's own left that would hold the process's exit (the SDK's idle
# AnyIO workers, which ran the tool calls, end by themselves)
PROBE = ("import sys, threading\nfrom kbsync.main import main\nrc = main(['-w', sys.argv[1], 'mcp'])\n"
         "left = sorted(t.name for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon\n"
         "              and not t.name.startswith('AnyIO worker'))\n"
         "open(sys.argv[2], 'w').write(f'{rc} {left}')\n")
DAYS = 300


def _written(path: Path, text: str) -> None:
    """`path` written, last modified a minute ago (no longer changing, as a commit sees it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    os.utime(path, (time.time() - 60, time.time() - 60))


def _waiting(status: dict[str, object]) -> set[str]:
    return {w["path"] for w in status["waiting"]}  # type: ignore[attr-defined]


def _fresh(root: Path) -> dict[str, object]:
    """What this process's own report says (no listing of the server's reused)."""
    return dict(report(open_workspace(str(root), None)).as_dict())


def test_status_while_the_server_warms_its_listings_equals_a_fresh_report(ws_root: Path, tmp_path: Path) -> None:
    for n in range(DAYS):
        _written(ws_root / "sessions" / f"2024-{n // 28 + 1:02d}-{n % 28 + 1:02d}" / f"0900-{n:07x}-day.md", f"# {n}\n")
    time.sleep(2.1)  # older than listings.RACY_NS: the server keeps the listings it makes
    ended = tmp_path / "ended"
    params = stdio_params(ws_root).model_copy(update={"args": ["-c", PROBE, str(ws_root), str(ended)]})
    copy = "sessions/2024-01-01/0900-0000000-day.conflict-20250601T090000Z-m1.md"

    async def run() -> tuple[dict[str, object], ...]:
        async with Client(params) as client:
            first = data(await client.call_tool("status", {}))
            _written(ws_root / copy, "# a conflict copy\n")
            second = data(await client.call_tool("status", {}))
            return first, second

    first, second = anyio.run(run)
    assert copy not in _waiting(first) and copy in _waiting(second)
    assert second == _fresh(ws_root)
    (ws_root / copy).unlink()
    assert first == _fresh(ws_root)
    assert ended.read_text(encoding="utf-8") == "0 []"  # main returned 0, and left no thread that holds the exit
