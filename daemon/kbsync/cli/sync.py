"""`kbsync sync`: bring the remote's changes in, then send this machine's; never forced."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from kbsync.cli.common import print_json, workspace


def register(sub: Any) -> None:
    p = sub.add_parser(
        "sync", help="commit, pull, integrate and push (git or GitHub API)",
        description="Commit what is committable, read the remote branch, integrate its changes "
                    "(conflict copies instead of merges), scan what would be sent for secrets, and push "
                    "without force ([sync] mode: git or github-api). Exit 1 when a conflict copy was "
                    "saved for a person or while git is in the middle of an "
                    "operation (nothing is synced then), 3 when the remote failed after retries or did not answer "
                    "within [sync] timeout_s (nothing lost).")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kbsync.app.repo import sync

    result = sync(workspace(args))
    if args.json:
        print_json(result.as_dict())
    else:
        if result.committed:
            print(f"committed {result.committed[:7]} first")
        print(result)
        for copy in result.conflicts:
            sys.stderr.write(f"kbsync: conflict: {copy} holds this machine's version; a person decides\n")
    return result.exit_code
