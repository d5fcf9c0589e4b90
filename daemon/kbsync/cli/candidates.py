"""`kbsync candidates list|accept|reject`: the person's decisions on scanned candidates."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from kbsync.commands.common import workspace
from kbsync.errors import EXIT_OK, InputError

if TYPE_CHECKING:
    from kbsync.candidates import Item
    from kbsync.workspace import Workspace


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


def _lists(ws: "Workspace") -> list[tuple[str, list["Item"]]]:
    from kbsync import candidates, protocol
    from kbsync.workspace import decode

    folder = ws.root / protocol.CANDIDATES_DIR
    out: list[tuple[str, list["Item"]]] = []
    for p in sorted(folder.glob("*.md")) if folder.is_dir() else []:
        rel = f"{protocol.CANDIDATES_DIR}/{p.name}"
        out.append((rel, candidates.parse_items(decode(p.read_bytes(), rel))))
    return out


def _find(ws: "Workspace", item_id: str) -> tuple[str, "Item"]:
    for rel, items in _lists(ws):
        for it in items:
            if it.id == item_id:
                return rel, it
    raise InputError(f"no candidate {item_id}; see `kbsync candidates list`", path="candidates/")


def _pending(rel: str, item: "Item") -> None:
    from kbsync import candidates

    status = candidates.value(item, "status")
    if status != "pending":
        raise InputError(f"item {item.id} is {status} already; nothing to do", path=rel, line=item.start + 1)


def _decide(ws: "Workspace", rel: str, item_id: str, status: str) -> None:
    from kbsync import candidates
    from kbsync.guardededit import edit_file

    edit_file(ws, rel, lambda text: candidates.set_status(text, item_id, status))


def _run_list(args: argparse.Namespace) -> int:
    from kbsync import candidates
    from kbsync.commands.common import print_json

    rows = [{"id": it.id, "list": rel, "title": it.title, "status": candidates.value(it, "status"),
             "path": candidates.value(it, "path"), "flags": candidates.flags(it)}
            for rel, items in _lists(workspace(args)) for it in items]
    rows = [r for r in rows if not args.status or r["status"] == args.status]
    if args.json:
        print_json(rows)
        return EXIT_OK
    for r in rows:
        flags = f"  [{', '.join(r['flags'])}]" if r["flags"] else ""
        print(f"{r['id']}  {r['status']:<8}  {r['path']}  {r['title']}{flags}")
    return EXIT_OK


def _run_accept(args: argparse.Namespace) -> int:
    from kbsync import boardfile, candidates
    from kbsync.commands.common import print_json

    ws = workspace(args)
    rel, item = _find(ws, args.item)
    _pending(rel, item)
    flagged = candidates.flags(item)
    if flagged and not args.allow_flagged:
        raise InputError(f"item {item.id} is flagged ({', '.join(flagged)}); read its flagged lines, then "
                         "accept with --allow-flagged", path=rel, line=item.start + 1)
    overrides: dict[str, object] = {"title": args.title, "type": args.type, "topic": args.topic,
                                    "summary": args.summary, "scenarios": args.scenario, "confidence": args.confidence}
    entry, problems = candidates.to_entry(item, overrides)
    if entry is None:
        raise InputError(f"item {item.id} cannot become an entry yet; complete it in the list or pass options:\n"
                         + "\n".join(f"  - {p}" for p in problems), path=rel, line=item.start + 1)
    action = boardfile.upsert_entry(ws, entry)
    _decide(ws, rel, item.id, "accepted")
    if args.json:
        print_json({"item": item.id, "key": entry.key, "action": action})
    else:
        print(f"accepted {item.id}: {action} {entry.key}")
    return EXIT_OK


def _run_reject(args: argparse.Namespace) -> int:
    from kbsync.commands.common import print_json

    ws = workspace(args)
    rel, item = _find(ws, args.item)
    _pending(rel, item)
    _decide(ws, rel, item.id, "rejected")
    if args.json:
        print_json({"item": item.id, "status": "rejected", "list": rel})
    else:
        print(f"rejected {item.id}")
    return EXIT_OK
