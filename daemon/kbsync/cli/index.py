"""`kbsync index rebuild`: regenerate index.md from the session files."""

from __future__ import annotations

import argparse

from kbsync.cli.common import workspace
from kbsync.cliargs import Subparsers
from kbsync.errors import UsageError


def register(sub: Subparsers) -> None:
    p = sub.add_parser("index", help="rebuild derived indexes (index.md)")
    s = p.add_subparsers(dest="index_command", metavar="ACTION", required=True)
    rb = s.add_parser("rebuild", help="regenerate index.md from the session files, atomically",
                      description="index.md is append-only in normal use; this administrative command rewrites it "
                                  "with one row per session, sorted by ts in UTC. The previous file is backed up.")
    rb.add_argument("--search", action="store_true",
                    help="rebuild the derived search database under .kbsync/ instead of index.md")
    rb.add_argument("--semantic", action="store_true",
                    help="bring the semantic index under .kbsync/ in step with the files (embeds what is missing, "
                         "with progress; stop it at any time, the next run goes on from there)")
    rb.set_defaults(func=run_rebuild)


def run_rebuild(args: argparse.Namespace) -> int:
    if args.search and args.semantic:
        raise UsageError("give --search or --semantic, not both")
    if args.semantic:
        from kbsync.cli.search import rebuild_semantic

        return rebuild_semantic(workspace(args))
    if args.search:
        from kbsync.cli.search import rebuild_search

        return rebuild_search(workspace(args))
    from kbsync.app.files import rebuild_index

    done = rebuild_index(workspace(args))
    print(f"index.md: {done.rows} sessions")
    for rel in done.dropped:
        print(f"  dropped the row for {rel}: no such session any more")
    return 0
