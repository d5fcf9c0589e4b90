"""The semantic index as the other processes use it, without loading the model: starting the worker that
builds it (`kick`, `build_now`), asking a worker for the nearest records (`nearest`), and its progress.

A process that searches keeps one worker in `serve` mode as a child (started at its first search; it exits
on its own after kbsync.retrieval.semanticworker.IDLE_S without a question, or when this process ends),
so the model and the vectors stay out of the daemon's and the MCP server's own memory.
"""

from __future__ import annotations

import json
import select
import subprocess
import sys
import threading
from typing import Iterable, Sequence

from kbsync import proc
from kbsync.errors import EXIT_INTERRUPTED, KbsyncError
from kbsync.retrieval import semanticstore as store
from kbsync.retrieval.index import indexable
from kbsync.retrieval.semanticstore import Found
from kbsync.store import fsio
from kbsync.store.workspace import Workspace

WORKER = "kbsync.retrieval.semanticworker"
ANSWER_S = 20.0  # a search waits this long for the worker (its first answer loads the model and the vectors)
LOG_NAME = "semantic.log"  # the last background build's error output, under .kbsync/


def command(ws: Workspace, mode: str, *flags: str) -> list[str]:
    cfg = ["--config", ws.config.source] if ws.config.source else []
    return [sys.executable, "-m", WORKER, mode, str(ws.root), *cfg, *flags]


# ---- building --------------------------------------------------------------------

_builders: list[subprocess.Popen[bytes]] = []


def kick(ws: Workspace, relpaths: Iterable[str] = ()) -> str:
    """After writes (the daemon's post-write job): ask for a build when one of `relpaths` is indexed, or the
    index is not complete; start the worker unless one runs. Says what it did."""
    _builders[:] = [b for b in _builders if not proc.reaped(b)]  # finished builders leave no zombie behind
    if not ws.config.search.semantic:
        return "semantic index off"
    if not any(indexable(rp) for rp in relpaths) and _complete(ws):
        return "nothing to embed"
    store.ask(ws.state_dir)
    if building(ws):
        return "worker already running"
    _builders.append(proc.spawn(command(ws, "build", "--background"), stderr=ws.state_dir / LOG_NAME))
    return "worker started"


def scheduled(ws: Workspace) -> str:
    """The daemon's timed look: start a build when the index is not complete (a first build, an upgrade); and
    reap the search workers that left on their own (idle), so none stays a zombie until the next search."""
    for helper in list(_helpers.values()):
        helper.reap()
    return kick(ws)


def enabled(ws: Workspace) -> bool:
    return ws.config.search.semantic


def _complete(ws: Workspace) -> bool:
    got = progress(ws)
    return got is not None and got.complete


def build_now(ws: Workspace, *, shown: bool) -> int:
    """Run the worker in the foreground (`kbsync index rebuild --semantic`); its exit status."""
    store.ask(ws.state_dir)  # a background build running now goes round again and takes this one's place
    child = proc.spawn(command(ws, "build", *(["--progress"] if shown else [])), inherit=True)
    try:
        code = child.wait()
    except KeyboardInterrupt:
        proc.stop(child)  # what it embedded is kept; the next build goes on from there
        return EXIT_INTERRUPTED
    proc.reaped(child)
    return code


def building(ws: Workspace) -> bool:
    """Whether a worker is building the index now."""
    return fsio.lock_held(store.db_path(ws.state_dir))


def progress(ws: Workspace) -> store.Progress | None:
    """How far the index is; None when there is none yet (reading never creates it)."""
    path = store.db_path(ws.state_dir)
    if not path.is_file():
        return None
    conn = store.connect(path)
    try:
        return store.progress(conn)
    finally:
        conn.close()


# ---- searching -------------------------------------------------------------------

class _Helper:
    """One `serve` worker, asked one question at a time."""

    def __init__(self, argv: list[str]) -> None:
        self.argv = argv
        self.child: subprocess.Popen[bytes] | None = None
        self.lock = threading.Lock()

    def ask(self, request: dict[str, object]) -> dict[str, object]:
        line = json.dumps(request, ensure_ascii=False).encode("utf-8") + b"\n"
        with self.lock:
            for attempt in (1, 2):  # a worker that left (idle, killed) is started again, once
                try:
                    return self._ask(line)
                except (OSError, EOFError):
                    self._drop()
                    if attempt == 2:
                        raise KbsyncError("the semantic worker stopped before it answered; see "
                                          f".kbsync/{LOG_NAME}") from None
            raise AssertionError("unreachable")

    def _ask(self, line: bytes) -> dict[str, object]:
        child = self.child
        if child is None or proc.reaped(child):
            child = self.child = proc.spawn(self.argv, pipes=True)
        assert child.stdin is not None and child.stdout is not None
        child.stdin.write(line)
        child.stdin.flush()
        ready, _, _ = select.select([child.stdout], [], [], proc.remaining(ANSWER_S))  # a job's deadline too
        if not ready:
            self._drop()
            raise KbsyncError(f"the semantic worker did not answer within {ANSWER_S:.0f} s")
        got = child.stdout.readline()
        if not got:
            raise EOFError
        answer = json.loads(got)
        return answer if isinstance(answer, dict) else {"error": "a malformed answer"}

    def reap(self) -> None:
        """Forget a worker that has exited (it leaves after IDLE_S without a question), when no question is
        being asked of it."""
        if self.lock.acquire(blocking=False):
            try:
                if self.child is not None and proc.reaped(self.child):
                    self.child = None
            finally:
                self.lock.release()

    def _drop(self) -> None:
        if self.child is not None:
            proc.stop(self.child)
            self.child = None


_helpers: dict[tuple[str, ...], _Helper] = {}
_helpers_lock = threading.Lock()


def nearest(ws: Workspace, text: str, kinds: Sequence[str], k: int) -> list[Found]:
    """The `k` records of these kinds whose embedded units are nearest to `text`, best first ([] while the
    index has never been built: search answers by keyword meanwhile)."""
    got = progress(ws)
    if got is None or not got.built or k <= 0:
        return []
    argv = command(ws, "serve")
    with _helpers_lock:
        helper = _helpers.setdefault(tuple(argv), _Helper(argv))
    answer = helper.ask({"q": text, "kinds": list(kinds), "k": k})
    if "error" in answer:
        raise KbsyncError(f"semantic search: {answer['error']}")
    hits = answer.get("hits")
    if not isinstance(hits, list):
        raise KbsyncError("semantic search: a malformed answer")
    return [Found(str(h[0]), str(h[1]), str(h[2]), str(h[3]), str(h[4]), int(h[5]), float(h[6]), bool(h[7]))
            for h in hits]
