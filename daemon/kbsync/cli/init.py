"""`kbsync init`: create the workspace layout (idempotent)."""

from __future__ import annotations

import argparse
import sys

from kbsync.cli.common import context
from kbsync.cliargs import Subparsers


def register(sub: Subparsers) -> None:
    p = sub.add_parser("init", help="create the workspace layout (changes nothing that exists)",
                       description="Create index.md, LEARNING_BOARD.md, sessions/, memory/, artifacts/, logs/, "
                                   "candidates/, .kbsync/, .gitignore, .gitattributes and a git repository where missing.")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kbsync.app.workspace import init

    root, _cfg = context(args)
    result = init(root)
    for rel in result.created:
        print(f"created {rel}")
    if not result.created:
        print(f"{root}: already a workspace; nothing changed")
    for line in result.missing_ignores:
        sys.stderr.write(f"kbsync: .gitignore: warning: missing {line!r}; add it so local state is never committed\n")
    return 0
