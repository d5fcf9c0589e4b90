"""`kbsync status [--json]`: the daemon's state, read from .kbsync/ so any process can ask."""

from __future__ import annotations

import argparse
from typing import Any

from kbsync.cli.common import print_json, workspace
from kbsync.errors import EXIT_OK, EXIT_PROBLEMS


def register(sub: Any) -> None:
    p = sub.add_parser("status", help="is the daemon running; last event, repair, commit, sync; what waits",
                       description="Show whether `kbsync run` is running on this workspace (pid), its last "
                                   "event, repair and commit, pending and skipped files with why, conflict "
                                   "copies waiting for a person and the last sync result. Exit 1 when "
                                   "something waits for a person: a conflict copy, a file left out of "
                                   "commits as invalid or holding a secret, a file that cannot be read "
                                   "(a FIFO, socket, device, dangling symlink, no read permission), a temp "
                                   "file an interrupted write left behind, or git in the middle of a merge, "
                                   "rebase, cherry-pick, revert or bisect or on a detached HEAD (`waiting: "
                                   "git rebase in progress`: nothing is committed or synced until it ends).")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kbsync.app.status import render, report, waiting_for_a_person

    rep = report(workspace(args))
    if args.json:
        print_json(rep)
    else:
        print(render(rep))
    return EXIT_PROBLEMS if waiting_for_a_person(rep) else EXIT_OK
