"""`kbsync stats`: counts over the sessions' frontmatter, from its one-way copy in SQLite."""

from __future__ import annotations

import argparse

from kbsync.cli.common import print_json, workspace
from kbsync.cliargs import Subparsers
from kbsync.errors import EXIT_OK

HELP = "session counts by tag, month, status or model (copied one way from the files; dirty files skipped)"


def register(subparsers: Subparsers) -> None:
    p = subparsers.add_parser("stats", help=HELP, description=HELP + ". With [stats] dsn set, the same "
                              "frontmatter is also upserted into PostgreSQL.")
    p.add_argument("--by", choices=("tag", "month", "status", "model"), default="tag",
                   help="what to group by (default: tag)")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kbsync.app.retrieval import render_stats
    from kbsync.app.retrieval import stats as compute

    result = compute(workspace(args), args.by)
    stats, pushed = result.stats, result.pushed
    if args.json:
        from kbsync.app.shapes import stats as shape

        print_json(shape(result))
    else:
        print(render_stats(stats))
        if pushed is not None:
            print(f"{pushed} sessions upserted into PostgreSQL (stats.dsn)")
    return EXIT_OK
