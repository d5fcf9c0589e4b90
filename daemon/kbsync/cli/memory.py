"""`kbsync memory set|get|list|forget`: the keyed facts of memory/facts.md, preferences.md and entities/."""

from __future__ import annotations

import argparse
from typing import Any, Mapping

from kbsync.cli.common import print_json, workspace
from kbsync.errors import EXIT_OK


def register(sub: Any) -> None:
    p = sub.add_parser("memory", help="set, get, list and forget facts (memory/facts.md, preferences, entities)",
                       description="Facts are one bullet each, `- KEY: VALUE`, in memory/facts.md (default), "
                                   "memory/preferences.md (--preferences) or memory/entities/<slug>.md "
                                   "(--entity NAME). Setting a key that is there replaces its fact in place.")
    acts = p.add_subparsers(dest="memory_command", metavar="ACTION", required=True)
    st = _action(acts, "set", "set a fact (a fact with the same key is replaced in place)", _run_set)
    st.add_argument("key", metavar="KEY", help="the fact's name, e.g. language")
    st.add_argument("value", metavar="VALUE", help="its value, one line")
    gt = _action(acts, "get", "print one fact's value (exit 1 when there is none)", _run_get)
    gt.add_argument("key", metavar="KEY")
    fg = _action(acts, "forget", "remove a fact (exit 1 when there is none)", _run_forget)
    fg.add_argument("key", metavar="KEY")
    ls = acts.add_parser("list", help="list every fact of every memory file", description="List every fact of "
                         "memory/facts.md, memory/preferences.md and memory/entities/*.md with its file and line "
                         "(with --preferences or --entity NAME: of that file only).")
    _where(ls)
    ls.add_argument("--json", action="store_true", help="print the facts as JSON")
    ls.set_defaults(func=_run_list)


def _action(acts: Any, name: str, help_text: str, func: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = acts.add_parser(name, help=help_text, description=help_text)
    _where(p)
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=func)
    return p


def _where(p: argparse.ArgumentParser) -> None:
    where = p.add_mutually_exclusive_group()
    where.add_argument("--preferences", action="store_true", help="in memory/preferences.md")
    where.add_argument("--entity", metavar="NAME", help="in memory/entities/<slug of NAME>.md (made on first use)")


def _show(args: argparse.Namespace, data: Mapping[str, Any], line: str) -> int:
    if args.json:
        print_json(data)
    else:
        print(line)
    return EXIT_OK


def _run_set(args: argparse.Namespace) -> int:
    from kbsync.app.memory import set_fact

    done = set_fact(workspace(args), args.key, args.value, preferences=args.preferences, entity=args.entity)
    return _show(args, done.as_dict(), f"{done.action}: {done.key}: {done.value} ({done.path})")


def _run_get(args: argparse.Namespace) -> int:
    from kbsync.app.memory import get_fact

    found = get_fact(workspace(args), args.key, preferences=args.preferences, entity=args.entity)
    return _show(args, found.as_dict(), found.value)


def _run_forget(args: argparse.Namespace) -> int:
    from kbsync.app.memory import forget_fact

    done = forget_fact(workspace(args), args.key, preferences=args.preferences, entity=args.entity)
    return _show(args, done.as_dict(), f"removed: {done.key} ({done.path})")


def _run_list(args: argparse.Namespace) -> int:
    from kbsync.app.memory import list_facts

    items = list_facts(workspace(args), preferences=args.preferences, entity=args.entity)
    if args.json:
        print_json([i.as_dict() for i in items])
    else:
        for i in items:
            print(f"{i.path}:{i.line}: {i.key}: {i.value}" if i.value else f"{i.path}:{i.line}: {i.key}")
    return EXIT_OK
