"""`kbsync assist install|uninstall|status|inject|hook`: an assistant's lifecycle hooks (docs/assist.md)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from kbsync.app.workspace import open_workspace
from kbsync.assist.hookrun import ASSISTANTS, HOOK_EVENTS
from kbsync.cliargs import Subparsers

if TYPE_CHECKING:
    from kbsync.app.hooksettings import SettingsState



def register(subparsers: Subparsers) -> None:
    p = subparsers.add_parser("assist", help="an assistant's lifecycle hooks: memory before each prompt, the "
                              "session kept at the end (docs/assist.md)",
                              description="Install kbsync's hooks in an assistant's settings, or answer them.")
    sub = p.add_subparsers(dest="assist_command", metavar="COMMAND", required=True)
    for name, what in (("install", "merge kbsync's hooks into the assistant's settings file (idempotent)"),
                       ("uninstall", "remove exactly kbsync's hooks from the settings file"),
                       ("status", "show kbsync's hooks in the project's and the user's settings files")):
        q = sub.add_parser(name, help=what, description=what + "; everything else in the file stays as it is.")
        q.add_argument("assistant", choices=ASSISTANTS)
        where = q.add_mutually_exclusive_group()
        where.add_argument("--project", metavar="DIR", help="the project whose settings to use (default: here)")
        if name != "status":
            where.add_argument("--user", action="store_true", help="the user's settings in the home folder")
        q.add_argument("--json", action="store_true", help="print JSON")
        q.set_defaults(func={"install": _run_install, "uninstall": _run_uninstall, "status": _run_status}[name])
    inject = sub.add_parser("inject", help="print the memory block for a prompt, for any tool to call",
                            description="Print the memory block a hook injects: the facts and preferences that "
                            "apply and the best entries for --query, within [assist] budget_tokens.")
    inject.add_argument("--query", default="", help="the prompt (none: the block of a session's start)")
    inject.add_argument("--budget", type=int, help="token budget (default: [assist] budget_tokens)")
    inject.add_argument("--json", action="store_true", help="print the block with its keys and token count")
    inject.set_defaults(func=_run_inject)
    hook = sub.add_parser("hook", help="answer one hook event (the assistant runs this; JSON on stdin)",
                          description="Read the assistant's event as JSON on standard input and answer on "
                          "standard output. Fail-open: on any error, no answer, exit 0, one line in the log.")
    hook.add_argument("assistant", choices=ASSISTANTS)
    hook.add_argument("event", choices=HOOK_EVENTS)
    hook.set_defaults(func=_run_hook)


def _print_states(states: list[SettingsState], as_json: bool) -> None:
    if as_json:
        print(json.dumps([s.as_dict() for s in states], ensure_ascii=False))
        return
    for s in states:
        what = "changed" if s.changed else "unchanged" if s.exists else "no such file"
        print(f"{s.path}: {what}; kbsync hooks: {', '.join(h.event for h in s.hooks) or 'none'}")
        if s.backup:
            print(f"  previous version kept as {s.backup}")


def _run_install(args: argparse.Namespace) -> int:
    from kbsync.app.hooksettings import install, settings_path

    ws = open_workspace(args.workspace, args.config)
    _print_states([install(ws, args.assistant, settings_path(args.assistant, project=args.project, user=args.user))],
                  args.json)
    return 0


def _run_uninstall(args: argparse.Namespace) -> int:
    from kbsync.app.hooksettings import settings_path, uninstall

    ws = open_workspace(args.workspace, args.config)
    path = settings_path(args.assistant, project=args.project, user=args.user)
    _print_states([uninstall(ws, args.assistant, path)], args.json)
    return 0


def _run_status(args: argparse.Namespace) -> int:
    from kbsync.app.hooksettings import settings_path, status

    paths = [settings_path(args.assistant, project=args.project), settings_path(args.assistant, user=True)]
    states = status(args.assistant, list(dict.fromkeys(paths)))
    _print_states(states, args.json)
    return 0 if any(s.hooks for s in states) else 1


def _run_inject(args: argparse.Namespace) -> int:
    from kbsync.assist.events import block

    found = block(open_workspace(args.workspace, args.config), args.query, args.budget)
    if args.json:
        print(json.dumps(found.as_dict(), ensure_ascii=False))
    elif found.text:
        sys.stdout.write(found.text)
    return 0


def _run_hook(args: argparse.Namespace) -> int:
    from kbsync.assist.hookrun import run

    return run(args.workspace, args.config, args.assistant, args.event)
