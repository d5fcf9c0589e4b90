"""`kbsync board ...`: add, update, list, show and retire entries; feedback, decay and review."""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from typing import TYPE_CHECKING, Any, Callable

from kbsync.commands.common import workspace
from kbsync.errors import EXIT_OK, InputError, UsageError

if TYPE_CHECKING:
    from kbsync.board import Board, Entry
    from kbsync.feedback import DecayCandidate
    from kbsync.workspace import Workspace

Handler = Callable[[argparse.Namespace], int]


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("board", help="the knowledge board (LEARNING_BOARD.md)",
                              description="Add, update, list and retire knowledge board entries; record "
                              "per-machine feedback; list decay candidates; print the weekly review.")
    sub = p.add_subparsers(dest="board_command", metavar="ACTION", required=True)
    _now(_add(sub, "add", "add an entry, or update the entry with the same title@source_date", _run_add,
              payload=True))
    _add(sub, "update", "replace an entry with a full new version", _run_update, key=True, payload=True)
    ls = _add(sub, "list", "list entries", _run_list)
    ls.add_argument("--type", help="only entries of this type")
    ls.add_argument("--topic", help="only entries of this topic")
    ls.add_argument("--status", help="only entries with this status")
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


# ---- shared -----------------------------------------------------------------

def _clock(args: argparse.Namespace) -> dt.datetime:
    from kbsync.feedback import parse_when

    if not args.now:
        return dt.datetime.now(dt.timezone.utc)
    try:
        return parse_when(args.now)
    except ValueError as exc:
        raise UsageError(f"--now: {exc}") from exc


def _key(text: str) -> str:
    from kbsync.board import entry_key, split_key, normalize_date

    try:
        title, date = split_key(text)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    return entry_key(title, normalize_date(date) or date)


def _find(board: "Board", key: str) -> "Entry":
    found = board.find(key)
    if found is None:
        raise InputError(f"no entry {key}; see `kbsync board list`", path="LEARNING_BOARD.md")
    return found.entry


def _valid_entry(data: dict[str, Any], where: str) -> "Entry":
    """The entry a JSON object describes, or InputError listing every problem, one a line."""
    from kbsync.board import entry_from_dict

    entry, problems = entry_from_dict(data)
    if entry is None:
        raise InputError("the entry is not valid:\n" + "\n".join(f"  - {p}" for p in problems), path=where)
    return entry


def _report(args: argparse.Namespace, data: dict[str, Any], line: str) -> int:
    from kbsync.commands.common import print_json

    if args.json:
        print_json(data)
    else:
        print(line)
    return EXIT_OK


# ---- entries ----------------------------------------------------------------

def _run_add(args: argparse.Namespace) -> int:
    from kbsync import boardfile, feedback

    from kbsync.commands.common import read_json_input

    ws = workspace(args)
    entry = _valid_entry(read_json_input(args.file), args.file or "<stdin>")
    action = boardfile.upsert_entry(ws, entry)
    with feedback.FeedbackStore(ws.state_dir) as store:
        store.seen(entry.key, _clock(args))
    return _report(args, {"key": entry.key, "action": action}, f"{action} {entry.key}")


def _run_update(args: argparse.Namespace) -> int:
    from kbsync import board, boardfile
    from kbsync.commands.common import read_json_input

    ws = workspace(args)
    key = _key(args.key)
    data = read_json_input(args.file)
    missing = [k for k in ("title", *board.REQUIRED) if k not in data]
    if missing:
        raise InputError(f"a partial update is refused; the full entry is needed, missing: {', '.join(missing)}",
                         path=args.file or "<stdin>")
    entry = _valid_entry(data, args.file or "<stdin>")
    action = ""

    def edit(text: str) -> str:
        nonlocal action
        _find(board.parse_board(text), key)
        try:
            new, action = board.replace_entry(text, key, entry)
        except ValueError as exc:
            raise InputError(f"{exc}; update that entry instead", path="LEARNING_BOARD.md") from exc
        return new

    boardfile.edit_board(ws, edit)
    return _report(args, {"key": entry.key, "action": action, "was": key}, f"{action} {entry.key}")


def _run_list(args: argparse.Namespace) -> int:
    from kbsync import boardfile
    from kbsync.commands.common import print_json

    entries = [b.entry for b in boardfile.load_board(workspace(args)).entries()]
    keep = [e for e in entries if (not args.type or e.type == args.type) and (not args.topic or e.topic == args.topic)
            and (not args.status or e.status == args.status)]
    if args.json:
        print_json([e.as_dict() | {"key": e.key} for e in keep])
        return EXIT_OK
    for e in keep:
        print(f"{e.key}\t{e.type}\t{e.topic}\t{e.status}\t{e.summary}")
    return EXIT_OK


def _run_show(args: argparse.Namespace) -> int:
    from kbsync import boardfile, feedback
    from kbsync.board import render_entry
    from kbsync.commands.common import print_json

    ws = workspace(args)
    key = _key(args.key)
    entry = _find(boardfile.load_board(ws), key)
    with feedback.FeedbackStore(ws.state_dir) as store:
        stats = store.get(key)
    if args.json:
        print_json(entry.as_dict() | {"key": key, "feedback": stats.as_dict()})
        return EXIT_OK
    sys.stdout.write(render_entry(entry))
    print(f"\n(this machine: helpful {stats.helpful}, harmful {stats.harmful}, applied {stats.applied}, "
          f"last applied {stats.last_applied or 'never'})")
    return EXIT_OK


def _set_status(ws: "Workspace", keys: list[str], status: str) -> list[str]:
    """Set `status` on each entry; the keys whose status changed."""
    from kbsync import board, boardfile

    changed: list[str] = []

    def edit(text: str) -> str:
        changed.clear()
        for key in keys:
            _find(board.parse_board(text), key)
            text, did = board.set_status(text, key, status)
            changed.extend([key] if did else [])
        return text

    boardfile.edit_board(ws, edit)
    return changed


def _run_retire(args: argparse.Namespace) -> int:
    key = _key(args.key)
    changed = _set_status(workspace(args), [key], "retired")
    word = "retired" if changed else "already retired"
    return _report(args, {"key": key, "changed": bool(changed)}, f"{word} {key}")


# ---- feedback, decay, review ---------------------------------------------------

def _run_feedback(args: argparse.Namespace) -> int:
    from kbsync import boardfile, feedback

    ws = workspace(args)
    key = _key(args.key)
    _find(boardfile.load_board(ws), key)
    with feedback.FeedbackStore(ws.state_dir) as store:
        store.vote(key, helpful=args.helpful)
        stats = store.get(key)
    return _report(args, stats.as_dict(), f"{key}: helpful {stats.helpful}, harmful {stats.harmful}")


def _run_applied(args: argparse.Namespace) -> int:
    from kbsync import boardfile, feedback

    ws = workspace(args)
    keys = [_key(k) for k in args.keys]
    board = boardfile.load_board(ws)
    for key in keys:
        _find(board, key)
    now = _clock(args)
    with feedback.FeedbackStore(ws.state_dir) as store:
        for key in keys:
            store.applied(key, now)
        stats = [store.get(k).as_dict() for k in keys]
    return _report(args, {"applied": stats}, "\n".join(f"applied {k}" for k in keys))


def _decay(ws: "Workspace", now: dt.datetime, days: float) -> list["DecayCandidate"]:
    from kbsync import boardfile, feedback

    entries = [b.entry for b in boardfile.load_board(ws).entries()]
    with feedback.FeedbackStore(ws.state_dir) as store:
        return feedback.decay_candidates(entries, store.all(), now, days)


def _run_decay(args: argparse.Namespace) -> int:
    from kbsync.commands.common import print_json

    ws = workspace(args)
    found = _decay(ws, _clock(args), args.days)
    marked = _set_status(ws, [c.key for c in found], "decaying") if args.mark and found else []
    if args.json:
        print_json({"candidates": [{"key": c.key, "reasons": list(c.reasons)} for c in found], "marked": marked})
    else:
        for c in found:
            print(f"{c.key}\t{'; '.join(c.reasons)}")
        for key in marked:
            print(f"marked decaying: {key}")
    return EXIT_OK


def _run_review(args: argparse.Namespace) -> int:
    from kbsync import boardfile, feedback, review
    from kbsync.commands.common import print_json

    ws = workspace(args)
    now = _clock(args)
    since = args.since or (now - dt.timedelta(days=7)).isoformat(timespec="seconds")
    text = boardfile.read_board(ws)
    report = review.review(ws.root, text, since)
    report["decay"] = [{"key": c.key, "reasons": list(c.reasons)} for c in _decay(ws, now, args.days)]
    with feedback.FeedbackStore(ws.state_dir) as store:
        report["drift"] = review.drift(set(store.all()), text) + review.search_drift(ws.state_dir, text)
    if args.json:
        print_json(report)
    else:
        sys.stdout.write(review.render_report(report))
    return EXIT_OK

