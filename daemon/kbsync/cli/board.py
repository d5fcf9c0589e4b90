"""`kbsync board ...`: add, update, list, show and retire entries; feedback, decay and review."""

from __future__ import annotations

import argparse
import sys
from typing import Any, Callable, Mapping

from kbsync.cli.common import workspace
from kbsync.errors import EXIT_OK

Handler = Callable[[argparse.Namespace], int]


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("board", help="the knowledge board (LEARNING_BOARD.md)",
                              description="Add, update, list and retire knowledge board entries; record "
                              "per-machine feedback; list decay candidates; print the weekly review.")
    sub = p.add_subparsers(dest="board_command", metavar="ACTION", required=True)
    _now(_add(sub, "add", "add an entry, or update the entry with the same title@source_date", _run_add,
              payload=True))
    up = _add(sub, "update", "replace an entry with a full new version", _run_update, key=True, payload=True)
    up.add_argument("--fresh-counters", action="store_true", help="when the title or date changes (a new key), "
                    "start this machine's counters afresh instead of moving them to the new key")
    ls = _add(sub, "list", "list entries", _run_list)
    ls.add_argument("--type", help="only entries of this type")
    ls.add_argument("--topic", help="only entries of this topic")
    ls.add_argument("--status", help="only entries with this status")
    ls.add_argument("--confidence", choices=("high", "medium", "low"), help="only entries with this confidence")
    ls.add_argument("--query", metavar="WORDS", help="only the entries the search finds for these words (any of "
                    "them, quoted phrases as written; the board page's and the API's q), most relevant first")
    _add(sub, "show", "print one entry and its feedback counters", _run_show, key=True)
    _add(sub, "retire", "set an entry's status to retired", _run_retire, key=True)
    fb = _add(sub, "feedback", "count one use of an entry as helpful or harmful (this machine only)", _run_feedback,
              key=True)
    vote = fb.add_mutually_exclusive_group(required=True)
    vote.add_argument("--helpful", action="store_true", help="the entry helped")
    vote.add_argument("--harmful", action="store_true", help="the entry misled")
    ap = _add(sub, "applied", "record that entries were applied now (this machine only)", _run_applied)
    ap.add_argument("keys", nargs="+", metavar="KEY", help="entry keys, <title>@<YYYY-MM-DD>")
    _now(ap)
    dc = _add(sub, "decay", "list entries not applied for a while or more harmful than helpful", _run_decay)
    dc.add_argument("--days", type=float, default=90.0, help="days without being applied (default 90)")
    dc.add_argument("--mark", action="store_true", help="set the candidates' status to decaying in the board")
    _now(dc)
    rv = _add(sub, "review", "weekly review: changes since a date, counts, decay candidates, drift", _run_review)
    rv.add_argument("--since", help="date or time to compare with (default: 7 days before now)")
    rv.add_argument("--days", type=float, default=90.0, help="decay threshold in days (default 90)")
    _now(rv)


def _add(sub: Any, name: str, help_text: str, func: Handler, *, key: bool = False,
         payload: bool = False) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = sub.add_parser(name, help=help_text, description=help_text)
    if key:
        p.add_argument("key", metavar="KEY", help="the entry's key, <title>@<YYYY-MM-DD>")
    if payload:
        p.add_argument("--file", metavar="FILE", help="JSON entry (default: standard input)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=func)
    return p


def _now(p: argparse.ArgumentParser) -> None:
    p.add_argument("--now", metavar="TIME", help="the reference time, ISO 8601 (default: the clock)")


# ---- presenting ----------------------------------------------------------------

def _report(args: argparse.Namespace, data: Mapping[str, Any], line: str) -> int:
    from kbsync.cli.common import print_json

    if args.json:
        print_json(data)
    else:
        print(line)
    return EXIT_OK


def _key(text: str) -> str:
    from kbsync.app.board import entry_key

    return entry_key(text)


# ---- entries ----------------------------------------------------------------

def _run_add(args: argparse.Namespace) -> int:
    from kbsync.app import board, shapes
    from kbsync.cli.common import read_json_input

    done = board.add_entry(workspace(args), read_json_input(args.file), board.clock(args.now), args.file or "<stdin>")
    return _report(args, shapes.entry_written(done), f"{done.action} {done.key}")


def _run_update(args: argparse.Namespace) -> int:
    from kbsync.app import board, shapes
    from kbsync.cli.common import read_json_input

    key = _key(args.key)
    done = board.update_entry(workspace(args), key, read_json_input(args.file), args.file or "<stdin>",
                              keep_counters=not args.fresh_counters)
    return _report(args, shapes.entry_written(done), f"{done.action} {done.key}")


def _run_list(args: argparse.Namespace) -> int:
    from kbsync.app import board, shapes
    from kbsync.app.guard import learned
    from kbsync.cli.common import print_json

    ws = workspace(args)
    keep = board.list_entries(ws, type=args.type, topic=args.topic, status=args.status,
                              confidence=args.confidence, q=args.query)
    if args.json:
        verdicts = learned(ws)
        print_json([shapes.entry(e, verdicts) for e in keep])
        return EXIT_OK
    for e in keep:
        print(f"{e.key}\t{e.type}\t{e.topic}\t{e.status}\t{e.summary}")
    return EXIT_OK


def _run_show(args: argparse.Namespace) -> int:
    from kbsync.app import board, shapes
    from kbsync.app.guard import learned
    from kbsync.cli.common import print_json

    ws = workspace(args)
    shown = board.show_entry(ws, _key(args.key))
    stats = shown.feedback
    if args.json:
        print_json(shapes.shown_entry(shown, learned(ws)))
        return EXIT_OK
    sys.stdout.write(board.render_entry(shown.entry))
    print(f"\n(this machine: helpful {stats.helpful}, harmful {stats.harmful}, applied {stats.applied}, "
          f"last applied {stats.last_applied or 'never'})")
    return EXIT_OK


def _run_retire(args: argparse.Namespace) -> int:
    from kbsync.app import board

    key = _key(args.key)
    changed = board.retire(workspace(args), key)
    word = "retired" if changed else "already retired"
    return _report(args, {"key": key, "changed": changed}, f"{word} {key}")


# ---- feedback, decay, review ---------------------------------------------------

def _run_feedback(args: argparse.Namespace) -> int:
    from kbsync.app import board

    key = _key(args.key)
    stats = board.give_feedback(workspace(args), key, helpful=args.helpful)
    return _report(args, stats.as_dict(), f"{key}: helpful {stats.helpful}, harmful {stats.harmful}")


def _run_applied(args: argparse.Namespace) -> int:
    from kbsync.app import board, shapes

    keys = [_key(k) for k in args.keys]
    stats = board.applied(workspace(args), keys, board.clock(args.now))
    return _report(args, shapes.applied(stats), "\n".join(f"applied {k}" for k in keys))


def _run_decay(args: argparse.Namespace) -> int:
    from kbsync.app import board, shapes
    from kbsync.cli.common import print_json

    found = board.decay(workspace(args), board.clock(args.now), args.days, mark=args.mark)
    if args.json:
        print_json(shapes.decay(found.candidates, found.marked))
    else:
        for c in found.candidates:
            print(f"{c.key}\t{'; '.join(c.reasons)}")
        for key in found.marked:
            print(f"marked decaying: {key}")
    return EXIT_OK


def _run_review(args: argparse.Namespace) -> int:
    from kbsync.app import board
    from kbsync.cli.common import print_json

    report = board.review(workspace(args), board.clock(args.now), args.since, args.days)
    if args.json:
        print_json(report)
    else:
        sys.stdout.write(board.render_review(report))
    return EXIT_OK
