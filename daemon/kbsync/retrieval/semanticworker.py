"""The semantic worker process: `python -m kbsync.retrieval.semanticworker build|serve ROOT [--config FILE]`.

`build` brings the semantic index in step with the files (kbsync.retrieval.semanticbuild) and exits when
nothing is left to embed; one builder at a time (the lock `.kbsync/semantic.sqlite.lock`; a second one
leaves at once). Before it exits it looks for the mark `.kbsync/semantic.wanted` that a writer leaves (see
kbsync.retrieval.semanticclient.kick) and goes round again if there is one. `--progress` shows how far it
got (`kbsync index rebuild --semantic`); `--background` lowers its priority (the daemon's builds).

`serve` answers searches, one JSON object a line on standard input (`{"q": text, "kinds": [...], "k": n}`)
and one on standard output (`{"hits": [[key, relpath, kind, title, summary, ordinal, score, partial], ...]}` or
`{"error": why}`); it exits at the end of its input or after IDLE_S without a question.

Both load the model (numpy and ~40 MB): this process is the only one that does, so the daemon's own
memory stays as it is.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import select
import sys
import time
from typing import TYPE_CHECKING, BinaryIO

from kbsync import config, parallel, progress
from kbsync.errors import EXIT_OK, KbsyncError
from kbsync.retrieval import semanticbuild
from kbsync.retrieval import semanticstore as store
from kbsync.store import fsio
from kbsync.store.workspace import Workspace

if TYPE_CHECKING:
    from kbsync.retrieval.semanticsearch import Searcher

IDLE_S = 300.0
LOCK_TTL_S = 10 * 365 * 86400  # the lock lives as long as its pid
BACKGROUND_NICE = 10
LOCK_POLL_S = 0.5  # how often a build in the foreground looks whether the running one has ended


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    try:
        root, cfg = config.resolve(args.root, args.config)
        ws = Workspace(root, cfg)
        if args.mode == "build":
            return build(ws, shown=args.progress, background=args.background, threads=args.threads)
        return serve(ws, sys.stdin.buffer, sys.stdout.buffer)
    except KbsyncError as exc:
        print(f"kbsync semantic worker: {exc}", file=sys.stderr)
        return exc.exit_code


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="kbsync-semantic-worker")
    p.add_argument("mode", choices=("build", "serve"))
    p.add_argument("root")
    p.add_argument("--config")
    p.add_argument("--progress", action="store_true")
    p.add_argument("--background", action="store_true")
    p.add_argument("--threads", type=int, default=0)
    return p


def build(ws: Workspace, *, shown: bool = False, background: bool = False, threads: int = 0) -> int:
    """Build until nothing is left. In the background, EXIT_OK at once when another builder holds the lock (it
    sees the mark and does the work); in the foreground, wait for it to finish, then make sure."""
    if background:
        os.nice(BACKGROUND_NICE)
    target = store.db_path(ws.state_dir)
    from kbsync.retrieval.semanticmodel import Model

    model: Model | None = None
    while True:
        if not fsio.try_lock(target, LOCK_TTL_S):
            if background:
                return EXIT_OK
            time.sleep(LOCK_POLL_S)
            continue
        try:
            store.take_wanted(ws.state_dir)
            model = model or Model(threads or parallel.workers())
            _build_once(ws, model, shown)
        finally:
            fsio.unlock(target)
        if not store.is_wanted(ws.state_dir):  # a writer asked while the lock was being let go: round again
            return EXIT_OK


def _build_once(ws: Workspace, model: semanticbuild.Embedder, shown: bool) -> None:
    conn = store.connect(store.db_path(ws.state_dir))
    try:
        semanticbuild.plan(ws, conn)
        left = store.progress(conn)
        progress.configure(enabled=shown)
        with progress.Progress("semantic index", left.units - left.embedded, unit="texts") as bar:
            semanticbuild.build(ws, conn, model, again=lambda: store.take_wanted(ws.state_dir), on_batch=bar.advance)
    finally:
        conn.close()


def serve(ws: Workspace, inp: BinaryIO, out: BinaryIO, idle_s: float = IDLE_S) -> int:
    """Answer searches until the input ends or stays silent for `idle_s`."""
    from kbsync.retrieval.semanticmodel import Model
    from kbsync.retrieval.semanticsearch import Searcher

    conn = store.connect(store.db_path(ws.state_dir))
    searcher = Searcher(conn, Model(1))
    while True:
        ready, _, _ = select.select([inp], [], [], idle_s)
        line = inp.readline() if ready else b""
        if not line:
            return EXIT_OK
        out.write(json.dumps(_answer(searcher, line), ensure_ascii=False).encode("utf-8") + b"\n")
        out.flush()


def _answer(searcher: Searcher, line: bytes) -> dict[str, object]:
    try:
        req = json.loads(line)
        hits = searcher.search(str(req["q"]), [str(k) for k in req["kinds"]], int(req["k"]))
    except (ValueError, KeyError, TypeError) as exc:
        return {"error": f"bad request ({exc})"}
    except KbsyncError as exc:
        return {"error": str(exc)}
    return {"hits": [[h.key, h.relpath, h.kind, h.title, h.summary, h.ordinal, h.score, h.partial] for h in hits]}


if __name__ == "__main__":
    sys.exit(main())
