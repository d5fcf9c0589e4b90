"""Five `kbsync mcp` processes, the daemon and a command-line writer on one workspace at once (a short
run here; bench/bench_mcp.py --many runs it for a minute): nothing any of them was told was saved is lost,
and no one is ever told "database is locked"."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.daemon import DaemonProcess
from helpers.mcp_load import lost, run_load, seed


@pytest.mark.slow
def test_many_clients_lose_nothing_and_never_see_a_locked_database(ws_root: Path) -> None:
    sid, shared = seed(ws_root)
    daemon = DaemonProcess(ws_root)
    try:
        tally = run_load(ws_root, sid, clients=5, seconds=3.0)
    finally:
        daemon.stop()
    assert tally.saved and tally.appended and tally.votes and tally.reads
    assert not [e for e in tally.errors + [daemon.stderr()] if "database is locked" in e]
    assert not tally.errors, tally.errors
    assert not lost(ws_root, shared, tally)
