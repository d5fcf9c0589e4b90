"""`kbsync validate [PATH...] [--json]`: every protocol rule, one line per finding."""

from __future__ import annotations

import argparse

from kbsync.cli.common import print_json, workspace


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("validate", help="check files against the protocol (exit 1 on errors)",
                       description="Prints `path:line: level: message` per finding. Without PATH, walks the "
                                   "whole workspace (skipping .git/ and .kbsync/).")
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or folders to check (default: the whole workspace)")
    p.add_argument("--json", action="store_true", help="print the findings as a JSON array")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kbsync.app.files import validate

    findings = validate(workspace(args), args.paths or None)
    if args.json:
        print_json([f.as_dict() for f in findings])
    else:
        for f in findings:
            print(f)
    return 1 if any(f.level == "error" for f in findings) else 0
