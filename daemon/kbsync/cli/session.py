"""`kbsync session ...`: the write path for assistants and orchestrators."""

from __future__ import annotations

import argparse
import sys

from kbsync.cli import _session_edit
from kbsync.cli.common import print_json, read_json_input, workspace
from kbsync.cliargs import Subparsers


def register(sub: Subparsers) -> None:
    p = sub.add_parser("session", help="write sessions (save, section, split)")
    ss = p.add_subparsers(dest="session_command", metavar="ACTION", required=True)
    save = ss.add_parser("save", help="save a session from JSON (stdin or --file); prints its path",
                         description="Keys: session_id (required), title, ts, role, tags, model, turns, tokens_in, "
                                     "tokens_out, status, summary, parent, sections (heading -> text). Saving the "
                                     "same session_id again updates that file in place.")
    save.add_argument("--file", metavar="PATH", help="read the JSON from PATH instead of standard input")
    save.add_argument("--json", action="store_true", help="print the saved record as JSON")
    save.set_defaults(func=run_save)
    _session_edit.register(ss)


def run_save(args: argparse.Namespace) -> int:
    from kbsync.app.sessions import save_session

    payload = read_json_input(args.file)
    result = save_session(workspace(args), payload, args.file or "<stdin>")
    for note in result.kept:
        sys.stderr.write(f"kbsync: {result.relpath}: {note}\n")
    if args.json:
        print_json(result.record)
    else:
        print(result.relpath)
    return 0
