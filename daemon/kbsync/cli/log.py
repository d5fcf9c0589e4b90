"""`kbsync log tool-call|error`: one O_APPEND line, UTC time first."""

from __future__ import annotations

import argparse

from kbsync.cli.common import workspace
from kbsync.cliargs import Subparsers


def register(sub: Subparsers) -> None:
    p = sub.add_parser("log", help="append a line to logs/tool-calls.md or logs/errors.md")
    ls = p.add_subparsers(dest="log_command", metavar="LOG", required=True)
    tc = ls.add_parser("tool-call", help="record a tool call in logs/tool-calls.md")
    tc.add_argument("--session", required=True, metavar="ID", help="session id")
    tc.add_argument("--tool", required=True, metavar="NAME", help="tool name")
    tc.add_argument("--status", default="ok", help="ok, error, timeout, ... (default ok)")
    tc.add_argument("--detail", default="", metavar="TEXT", help="one line of detail")
    tc.set_defaults(func=run_tool_call)
    er = ls.add_parser("error", help="record an error in logs/errors.md")
    er.add_argument("message", help="what happened, one line")
    er.set_defaults(func=run_error)


def run_tool_call(args: argparse.Namespace) -> int:
    from kbsync.app.sessions import log_tool_call

    print(log_tool_call(workspace(args), args.session, args.tool, args.status, args.detail))
    return 0


def run_error(args: argparse.Namespace) -> int:
    from kbsync.app.sessions import log_error

    print(log_error(workspace(args), args.message))
    return 0
