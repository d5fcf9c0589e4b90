"""`kbsync conflicts [list] [--json]`, `conflicts diff PATH`, `conflicts resolve PATH --keep mine|theirs|both`."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from kbsync.cli.common import print_json, workspace
from kbsync.errors import EXIT_OK, EXIT_PROBLEMS


def register(sub: Any) -> None:
    p = sub.add_parser("conflicts", help="list, compare and settle conflict copies and status: conflict files",
                       description="Without an action: list every conflict copy and every file marked `status: "
                                   "conflict`, with both versions' times and machines (exit 1 when there is any). "
                                   "`diff PATH` shows the difference; `resolve PATH --keep mine|theirs|both` "
                                   "writes the result, removes the copy and commits.")
    p.add_argument("--json", action="store_true", help="print the list as JSON")
    p.set_defaults(func=_run_list)
    acts = p.add_subparsers(dest="conflicts_command", metavar="ACTION")
    ls = acts.add_parser("list", help="list the conflicts (the default)", description="List the conflicts.")
    ls.add_argument("--json", action="store_true", help="print the list as JSON")
    ls.set_defaults(func=_run_list)
    df = acts.add_parser("diff", help="the difference between the file (theirs) and its copy (mine)",
                         description="A unified diff from the file as it stands (theirs) to the copy (mine).")
    df.add_argument("path", metavar="PATH", help="the copy, or the file when it has one copy")
    df.set_defaults(func=_run_diff)
    rs = acts.add_parser("resolve", help="settle a conflict: keep mine (the copy), theirs (the file) or both",
                         description="Write the kept version into the file (lock, fingerprint, atomic, backup), "
                                     "remove the copy (a backup stays in .kbsync/backup/) and commit both paths. "
                                     "--keep both keeps both versions of each fact (memory files).")
    rs.add_argument("path", metavar="PATH", help="the copy, or the file when it has one copy")
    rs.add_argument("--keep", required=True, choices=("mine", "theirs", "both"), help="what the file keeps")
    rs.add_argument("--json", action="store_true", help="print the result as JSON")
    rs.set_defaults(func=_run_resolve)


def _side(v: Any) -> str:
    return f"{v.time or 'time unknown'}, machine {v.machine or 'unknown'}" if v else "no other version"


def _run_list(args: argparse.Namespace) -> int:
    from kbsync.app.conflicts import list_conflicts

    items = list_conflicts(workspace(args))
    if args.json:
        print_json([i.as_dict() for i in items])
    for i in items if not args.json else []:
        if i.kind == "copy":
            print(f"{i.path}\n  mine:   {_side(i.mine)}\n  theirs: {i.original} ({_side(i.theirs)})")
        else:
            print(f"{i.path}\n  marked status: conflict ({_side(i.mine)})")
    return EXIT_PROBLEMS if items else EXIT_OK


def _run_diff(args: argparse.Namespace) -> int:
    from kbsync.app.conflicts import conflict_diff

    sys.stdout.write(conflict_diff(workspace(args), args.path))
    return EXIT_OK


def _run_resolve(args: argparse.Namespace) -> int:
    from kbsync.app.conflicts import resolve

    done = resolve(workspace(args), args.path, args.keep)
    if args.json:
        print_json(done.as_dict())
    else:
        removed = f", {done.removed} removed" if done.removed else ""
        print(f"kept {done.keep} in {done.path}{removed}" + (f"; committed {done.commit[:7]}" if done.commit else ""))
    return EXIT_OK
