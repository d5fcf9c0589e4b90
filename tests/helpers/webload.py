"""Many clients writing at once through the HTTP API, and the check that nothing was lost: each client
in turn saves a session of its own, appends a marker to one shared session's section, and votes an
entry helpful, until the time is up. Used by the test suite (a few seconds) and bench/bench_http.py
(a minute)."""

from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import requests

from helpers.web import WebServer

SHARED_SESSION = "shared-by-every-client"
ENTRY = {"title": "并发反馈", "type": "方法", "topic": "并发", "summary": "每票都要计上", "core_content": "计数。",
         "source": "load", "source_date": "2025-06-11", "scenarios": ["并发"], "confidence": "high"}


@dataclass
class Outcome:
    saved: list[tuple[str, str]] = field(default_factory=list)  # (path, marker) of saves answered 2xx
    appended: list[str] = field(default_factory=list)  # markers answered 2xx
    votes: int = 0  # helpful votes answered 2xx
    statuses: Counter[tuple[str, int]] = field(default_factory=Counter)
    bad: list[str] = field(default_factory=list)  # answers neither 2xx nor 409, or naming a locked database
    shared_path: str = ""
    shared_id: str = ""
    entry_key: str = ""


def prepare(server: WebServer) -> Outcome:
    out = Outcome()
    shared = server.call("POST", "/sessions", body={"session_id": SHARED_SESSION, "sections": {"结论": "开始"}}).json()
    out.shared_path = shared["path"]
    out.entry_key = server.call("POST", "/board/entries", body=ENTRY).json()["key"]
    out.shared_id = shared["id"]
    return out


def _client(server: WebServer, n: int, until: float, out: Outcome, lock: threading.Lock) -> None:
    http = requests.Session()
    head = {"Authorization": f"Bearer {server.token}"}
    key = quote(out.entry_key, safe="")
    i = 0
    while time.monotonic() < until:
        i += 1
        marker = f"m{n}x{i}"
        calls: list[tuple[str, str, str, dict[str, Any]]] = [
            ("save", "POST", "/sessions", {"session_id": f"load-{n}-{i}", "sections": {"结论": marker}}),
            ("append", "PUT", f"/sessions/{out.shared_id}/sections/%E7%BB%93%E8%AE%BA?append=true", {"text": marker}),
            ("vote", "POST", f"/board/entries/{key}/feedback", {"vote": "helpful"})]
        for kind, method, path, body in calls:
            r = http.request(method, server.url + "/api/v1" + path, json=body, headers=head, timeout=60)
            with lock:
                out.statuses[(kind, r.status_code)] += 1
                if r.status_code >= 300 and r.status_code != 409 or "database is locked" in r.text:
                    out.bad.append(f"{kind} {r.status_code}: {r.text[:200]}")
                elif r.status_code < 300:
                    if kind == "save":
                        out.saved.append((r.json()["path"], marker))
                    elif kind == "append":
                        out.appended.append(marker)
                    else:
                        out.votes += 1
    http.close()


def run(server: WebServer, clients: int, seconds: float) -> Outcome:
    out = prepare(server)
    lock = threading.Lock()
    until = time.monotonic() + seconds
    threads = [threading.Thread(target=_client, args=(server, n, until, out, lock)) for n in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(seconds + 120)
    return out


def lost(server: WebServer, out: Outcome) -> list[str]:
    """Every write answered 2xx that is not on disk (or is there twice), read back through the API and the files."""
    problems = list(out.bad)
    shared = (server.root / out.shared_path).read_text(encoding="utf-8")
    problems += [f"marker {m} appended {shared.count(m + chr(10))} times" for m in out.appended
                 if shared.count(m + "\n") != 1]
    for path, marker in out.saved:
        file = server.root / path
        if not file.is_file() or marker not in file.read_text(encoding="utf-8"):
            problems.append(f"session {path} ({marker}) is not on disk")
    helpful = server.call("GET", f"/board/entries/{quote(out.entry_key, safe='')}").json()["feedback"]["helpful"]
    if helpful != out.votes:
        problems.append(f"{out.votes} votes answered 2xx, the counter says {helpful}")
    return problems
