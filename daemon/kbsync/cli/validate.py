"""`kbsync validate [PATH...] [--json]`: every protocol rule, one line per finding."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Iterator

from kbsync.cli.common import print_json_items, workspace
from kbsync.cliargs import Subparsers

if TYPE_CHECKING:
    from kbsync.app.files import Finding


def register(sub: Subparsers) -> None:
    p = sub.add_parser("validate", help="check files against the protocol (exit 1 on errors)",
                       description="Prints `path:line: level: message` per finding. Without PATH, walks the "
                                   "whole workspace (skipping .git/ and .kbsync/).")
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or folders to check (default: the whole workspace)")
    p.add_argument("--json", action="store_true", help="print the findings as a JSON array")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kbsync.app.files import validate

    errors = False

    def found() -> Iterator[Finding]:  # printed as they come, in the order of the files
        nonlocal errors
        for f in validate(workspace(args), args.paths or None):
            errors = errors or f.level == "error"
            yield f

    if args.json:
        print_json_items(f.as_dict() for f in found())
    else:
        for f in found():
            print(f)
    return 1 if errors else 0
