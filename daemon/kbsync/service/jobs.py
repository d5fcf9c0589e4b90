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

Every job runs on the daemon's one worker thread, so it never races a repair.
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

    def interval(self, cfg: Config) -> float:
        section, key = self.every.split(".")
        return parse_duration(getattr(getattr(cfg, section), key), key=self.every, source=cfg.source)


POST_WRITE: tuple[PostWriteJob, ...] = (
    PostWriteJob("search index", "kbsync.retrieval.index:update"),
)

TIMED: tuple[TimedJob, ...] = (
    TimedJob("commit", "daemon.commit_every", "kbsync.git.commit:scheduled_commit"),
    TimedJob("sync", "sync.every", "kbsync.sync.syncer:sync", when="kbsync.sync.syncer:remote_configured"),
    TimedJob("scan", "scan.every", "kbsync.board.scan:scheduled_scan", when="kbsync.board.scan:sources_configured"),
)


def resolve(target: str) -> Callable[..., Any]:
    """The function a "module:function" target names."""
    module, _, name = target.partition(":")
    fn: Callable[..., Any] = getattr(importlib.import_module(module), name)
    return fn
