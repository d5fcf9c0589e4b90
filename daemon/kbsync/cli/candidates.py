"""`kbsync candidates list|accept|reject`: the person's decisions on scanned candidates."""

from __future__ import annotations

import argparse
from typing import Any

from kbsync.cli.common import workspace
from kbsync.errors import EXIT_OK


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("candidates", help="review candidate lists: list, accept into the board, reject",
                              description="Review the items of candidates/*.md written by `kbsync scan`.")
    sub = p.add_subparsers(dest="candidates_command", metavar="ACTION", required=True)
    ls = sub.add_parser("list", help="list items", description="List the items of every candidate list.")
    ls.add_argument("--status", choices=("pending", "accepted", "rejected"), help="only items with this status")
    ls.add_argument("--json", action="store_true", help="print as JSON")
    ls.set_defaults(func=_run_list)
    acc = sub.add_parser("accept", help="turn a reviewed item into a board entry",
                         description="Turn a reviewed item into a board entry. The item's fields (as the person "
                         "completed them in the list) are used; options override them. Refused without scenarios.")
    acc.add_argument("item", metavar="ITEM", help="the item's id (c-...)")
    acc.add_argument("--title", help="entry title (default: the item's heading)")
    acc.add_argument("--type", help="观点, 方法, 踩坑 or 工具")
    acc.add_argument("--topic")
    acc.add_argument("--summary")
    acc.add_argument("--scenario", action="append", default=[], help="a scenario (repeat for more)")
    acc.add_argument("--confidence", choices=("high", "medium", "low"))
    acc.add_argument("--allow-flagged", action="store_true", help="accept an item flagged for embedded "
                     "instructions or secrets, after reading its flagged lines")
    acc.add_argument("--json", action="store_true", help="print the result as JSON")
    acc.set_defaults(func=_run_accept)
    rej = sub.add_parser("reject", help="record that an item is not wanted; it is not proposed again",
                         description="Mark an item rejected in its list, so that it is not proposed again.")
    rej.add_argument("item", metavar="ITEM", help="the item's id (c-...)")
    rej.add_argument("--json", action="store_true", help="print the result as JSON")
    rej.set_defaults(func=_run_reject)


def _run_list(args: argparse.Namespace) -> int:
    from kbsync.app.candidates import list_items
    from kbsync.app.shapes import candidate
    from kbsync.cli.common import print_json

    rows = list_items(workspace(args), args.status)
    if args.json:
        print_json([candidate(r) for r in rows])
        return EXIT_OK
    for r in rows:
        flags = f"  [{', '.join(r.flags)}]" if r.flags else ""
        print(f"{r.id}  {r.status:<8}  {r.path}  {r.title}{flags}")
    return EXIT_OK


def _run_accept(args: argparse.Namespace) -> int:
    from kbsync.app.candidates import NOTHING_TO_DO, Overrides, accept
    from kbsync.app.shapes import accepted
    from kbsync.cli.common import print_json

    overrides = Overrides(title=args.title, type=args.type, topic=args.topic, summary=args.summary,
                          scenarios=tuple(args.scenario), confidence=args.confidence)
    done = accept(workspace(args), args.item, overrides, allow_flagged=args.allow_flagged)
    if args.json:
        print_json(accepted(done))
    elif done.action == NOTHING_TO_DO:
        print(f"{done.item} is accepted already; nothing to do")
    else:
        print(f"accepted {done.item}: {done.action} {done.key}")
    return EXIT_OK


def _run_reject(args: argparse.Namespace) -> int:
    from kbsync.app.candidates import reject
    from kbsync.app.shapes import rejected
    from kbsync.cli.common import print_json

    rel, changed = reject(workspace(args), args.item)
    if args.json:
        print_json(rejected(args.item, rel, changed))
    else:
        print(f"rejected {args.item}" if changed else f"{args.item} is rejected already; nothing to do")
    return EXIT_OK
