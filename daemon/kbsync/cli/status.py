"""`kbsync status [--json]`: the truth about the workspace, with or without a running daemon."""

from __future__ import annotations

import argparse
from typing import Any

from kbsync.cli.common import print_json, workspace


def register(sub: Any) -> None:
    p = sub.add_parser("status", help="is the daemon running; last commit (git's HEAD), event, repair, sync; what waits",
                       description="Show whether `kbsync run` is running on this workspace (pid), the last "
                                   "commit (git's HEAD, whoever made it), the daemon's last event, repair and "
                                   "sync, and everything that waits, with why: files the next commit would "
                                   "leave out (invalid, holding a secret, locked, still changing), sessions "
                                   "marked `status: conflict`, conflict copies, temp files interrupted "
                                   "writes left behind, files that cannot be read (a FIFO, socket, device, "
                                   "dangling symlink, no read permission), and git in the middle of a merge, "
                                   "rebase, cherry-pick, revert or bisect or on a detached HEAD (`waiting: git "
                                   "rebase in progress`: nothing is committed or synced until it ends). Exit 1 whenever anything waits, 0 otherwise; the same "
                                   "with or without a daemon.")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kbsync.app.status import render, report

    rep = report(workspace(args))
    if args.json:
        print_json(rep.as_dict())
    else:
        print(render(rep))
    return rep.exit_code
