"""Fifty clients at once, for a few seconds (bench/bench_http.py runs the full minute): saving sessions,
appending to one session's section, voting on one entry. Every write answered 2xx is on disk exactly
once, every other answer is a 409, and none speaks of a locked database."""

from __future__ import annotations

import os

from helpers import webload
from helpers.web import WebServer

SECONDS = float(os.environ.get("KBSYNC_LOAD_SECONDS", "3"))


def test_fifty_clients_lose_nothing(server: WebServer) -> None:
    out = webload.run(server, clients=50, seconds=SECONDS)
    assert not webload.lost(server, out), webload.lost(server, out)[:10]
    assert out.saved and out.appended and out.votes, out.statuses
    assert {status for (_kind, status) in out.statuses} <= {200, 201, 409}, out.statuses
