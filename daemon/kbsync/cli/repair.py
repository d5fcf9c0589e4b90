"""`kbsync repair [PATH...] [--dry-run]`: apply the protocol's lossless repairs."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from kbsync.cli.common import print_json, workspace
from kbsync.cliargs import Subparsers

if TYPE_CHECKING:
    from kbsync.app.files import RepairOutcome


def register(sub: Subparsers) -> None:
    p = sub.add_parser("repair", help="repair files losslessly (exit 1 if some stay invalid)",
                       description="Applies every repair of the protocol's table. A valid file is never rewritten; "
                                   "previous bytes are kept under .kbsync/backup/.")
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or folders to repair (default: the whole workspace)")
    p.add_argument("--dry-run", action="store_true", help="print a unified diff per file and write nothing")
    p.add_argument("--json", action="store_true", help="print one record per file as a JSON array")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kbsync.app.files import repair

    outcomes = repair(workspace(args), args.paths or None, dry_run=args.dry_run)
    if args.json:
        done = list(outcomes)
        print_json([{"path": o.relpath, "status": o.status, "fixes": o.fixes,
                     "findings": [f.as_dict() for f in o.findings]} for o in done])
        return 0 if all(o.ok for o in done) else 1
    ok = True
    for o in outcomes:
        say(o)
        ok = ok and o.ok
    return 0 if ok else 1


def say(o: RepairOutcome) -> None:
    """One file's outcome, at once: its diff (dry run) or its fixes, then what stays wrong."""
    if o.diff:
        sys.stdout.write(o.diff)
    elif o.status == "repaired":
        print(f"{o.relpath}: repaired: {'; '.join(o.fixes)}")
    for f in o.findings:
        if f.level == "error" or o.status in ("locked", "changed"):
            print(f)
    sys.stdout.flush()
