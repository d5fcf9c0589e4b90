"""`kbsync commit [-m MSG]`: commit what is committable now, by the daemon's rules."""

from __future__ import annotations

import argparse
from typing import Any

from kbsync.cli.common import print_json, workspace
from kbsync.errors import EXIT_ENVIRONMENT, EXIT_OK, EXIT_PROBLEMS


def register(sub: Any) -> None:
    p = sub.add_parser("commit", help="commit valid, unlocked, quiet files now",
                       description="Commit every changed file that is valid, not locked and quiet; "
                                   "the message lists what was left out and why. Exit 0 also when "
                                   "there is nothing to commit; 1 while git is in the middle of a merge, "
                                   "rebase, cherry-pick, revert or bisect, or HEAD is detached (nothing is "
                                   "committed then); 3 if git's index.lock stays held.")
    p.add_argument("-m", "--message", help="commit subject (default: what the commit holds)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kbsync.app.repo import commit

    result = commit(workspace(args), args.message)
    if args.json:
        print_json(result.as_dict())
    else:
        print(result)  # each file left out was logged with why, on standard error
    return EXIT_ENVIRONMENT if result.blocked else EXIT_PROBLEMS if result.waiting else EXIT_OK
