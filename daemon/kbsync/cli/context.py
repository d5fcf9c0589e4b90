"""`kbsync context`: the prompt pack for a task, within a token budget."""

from __future__ import annotations

import argparse
import sys

from kbsync.cli.common import print_json, workspace
from kbsync.cliargs import Subparsers
from kbsync.errors import EXIT_OK

HELP = "build the prompt pack (facts, recent sessions, full texts, references, board entries) within a token budget"


def register(subparsers: Subparsers) -> None:
    p = subparsers.add_parser("context", help=HELP, description=HELP + "; see docs/retrieval.md for the token estimate.")
    p.add_argument("--query", "-q", default="", metavar="Q", help="what the task is about (search words and filters)")
    p.add_argument("--tags", default="", metavar="A,B", help="comma-separated tags of the task")
    p.add_argument("--budget", type=int, metavar="TOKENS", help="token budget (default: [context] budget)")
    p.add_argument("--json", action="store_true", help="print the pack and its parts as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kbsync.app.retrieval import build_context, split_tags

    pack = build_context(workspace(args), args.query, split_tags(args.tags), args.budget)
    if args.json:
        from kbsync.app.shapes import pack as shape

        print_json(shape(pack))
        return EXIT_OK
    sys.stdout.write(pack.text())
    for note in pack.notes:
        sys.stderr.write(f"kbsync: {note}\n")
    return EXIT_OK
