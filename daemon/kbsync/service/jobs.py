"""The daemon's registered jobs: what runs after files are processed, and what runs on a timer.

Adding a job is one line in POST_WRITE or TIMED below. A target is a
"module:function" string, imported when the job first runs, so that this module
(and every command that imports it) stays light.

- PostWriteJob target: `fn(ws: Workspace, relpaths: list[str]) -> object`, called
  by the worker after a batch of files was validated and repaired, with the
  paths that changed (deleted paths included).
- TimedJob target: `fn(ws: Workspace) -> object`, called every `every` (a dotted
  config key holding a duration such as "sync.every"); `str()` of what it returns
  is shown by `kbsync status`. `when`, if given, is `fn(ws) -> bool`; the job is
  skipped while it returns False (e.g. no remote configured).

Jobs run on the daemon's job thread (kbsync.service.jobrunner), one at a time, each with a deadline
(`[daemon] job_deadline_s`), so a slow or stuck job never holds the worker that repairs and commits;
a TimedJob with `worker=True` (the commit, which is the worker's own work) runs on the worker instead.
An exception in a job is logged with its name and does not stop the daemon.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable

from kbsync.config import Config, parse_duration


@dataclass(frozen=True)
class PostWriteJob:
    name: str
    target: str


@dataclass(frozen=True)
class TimedJob:
    name: str
    every: str
    target: str
    when: str | None = None
    worker: bool = False  # run on the worker thread (the commit), not on the job thread

    def interval(self, cfg: Config) -> float:
        section, key = self.every.split(".")
        return parse_duration(getattr(getattr(cfg, section), key), key=self.every, source=cfg.source)


POST_WRITE: tuple[PostWriteJob, ...] = (
    PostWriteJob("search index", "kbsync.retrieval.index:update"),
    PostWriteJob("semantic index", "kbsync.retrieval.semanticclient:kick"),  # starts the worker, returns at once
)

TIMED: tuple[TimedJob, ...] = (
    TimedJob("commit", "daemon.commit_every", "kbsync.git.commit:scheduled_commit", worker=True),
    TimedJob("sync", "sync.every", "kbsync.sync.syncer:sync", when="kbsync.sync.syncer:remote_configured"),
    TimedJob("scan", "scan.every", "kbsync.board.scan:scheduled_scan", when="kbsync.board.scan:sources_configured"),
    TimedJob("semantic check", "search.semantic_every", "kbsync.retrieval.semanticclient:scheduled",
             when="kbsync.retrieval.semanticclient:enabled"),
)


def resolve(target: str) -> Callable[..., Any]:
    """The function a "module:function" target names."""
    module, _, name = target.partition(":")
    fn: Callable[..., Any] = getattr(importlib.import_module(module), name)
    return fn
