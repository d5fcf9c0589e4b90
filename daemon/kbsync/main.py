"""Command-line entry: argparse, logging setup, error handling, dispatch; and the one place where the
front doors are composed.

Each subcommand lives in its own module and exposes `register(subparsers)`, which adds its parser
and sets `func` to a function `(args) -> int`: the modules of kbsync/cli, one per command, and the
`command.py` of each other front door, whose command is named after it (kbsync/web/command.py is
`kbsync web`). Command modules import heavy libraries only inside `func`, so start-up (and the
pre-commit hook) stays fast.

Front doors never import one another, so what joins them happens here: every command is given
`args.door_servers`, the function that lists the servers the doors run inside the daemon (the local
web server, with the MCP server's streamable-HTTP app mounted at /mcp); `kbsync run` hands them to the
daemon, and `kbsync web serve` serves the same composition (`args.door_mounts`).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Collection, Sequence

from kbsync import __version__, progress
from kbsync.errors import EXIT_ENVIRONMENT, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_USAGE, KbsyncError

if TYPE_CHECKING:
    from starlette.types import ASGIApp

    from kbsync.service.daemon import Server
    from kbsync.store.workspace import Workspace
    from kbsync.web.server import Lifespan, Mounted

DOORS = ("web", "mcp", "assist")  # the front doors beside cli; each one's command is <door>/command.py


def command_modules() -> dict[str, str]:
    """Every subcommand and the module that registers it: each module of kbsync/cli but the helpers
    (`_*.py`, common.py), and the `command` module of each other front door that has one."""
    here = Path(__file__).parent
    found = {name[:-3]: f"kbsync.cli.{name[:-3]}" for name in os.listdir(here / "cli")
             if name.endswith(".py") and not name.startswith("_") and name != "common.py"}
    found.update({door: f"kbsync.{door}.command" for door in DOORS if (here / door / "command.py").is_file()})
    return dict(sorted(found.items()))


def door_mounts(current: Callable[[], Workspace]) -> list[Mounted]:
    """What the other doors serve on the local web server: the MCP server's streamable-HTTP app, at the one
    path /mcp, made (and the MCP SDK imported) at the first request there."""
    from kbsync.web.server import Mounted

    def mcp_door() -> tuple[ASGIApp, Lifespan]:
        from kbsync.mcp.server import http_app

        door = http_app(current)
        return door.app, door.lifespan

    return [Mounted.lazily("/mcp", mcp_door)]


def door_servers(ws: Workspace) -> list[tuple[str, Server]]:
    """The servers the front doors run inside the daemon: the local web server, when [web] enabled
    (ConfigError for a [web] section that cannot be served)."""
    from kbsync.web.server import daemon_server

    web = daemon_server(ws, door_mounts)
    return [("web server", web)] if web else []


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        sys.stderr.write(f"kbsync: error: {message}\n")
        raise SystemExit(EXIT_USAGE)


_VALUED = {"-w", "--workspace", "--config"}  # global options that take the next word as their value


def command_named(argv: Sequence[str], known: Collection[str]) -> str | None:
    """The subcommand `argv` runs, when it is plainly one of `known` and no global help or version comes
    first; None otherwise (then every command's parser is built, for help and for usage errors)."""
    words = iter(argv)
    for word in words:
        if word in ("-h", "--help", "--version"):
            return None
        if word in _VALUED:
            next(words, None)
        elif not word.startswith("-"):
            return word if word in known else None
    return None


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line; with `only`, just that subcommand's module is imported and registered
    (each one costs start-up time, and a command needs no other's parser)."""
    parser = _Parser(prog="kbsync", description="Keep a Markdown memory workspace dependable across machines.")
    parser.add_argument("--version", action="version", version=f"kbsync {__version__}")
    parser.add_argument("-w", "--workspace", metavar="DIR", help="workspace folder (default: $KBSYNC_WORKSPACE, else the workspace around the current "
                        "folder, else the config's workspace, else ~/kb)")
    parser.add_argument("--config", metavar="FILE", help="config file (default: <workspace>/.kbsync/config.toml)")
    verbosity = parser.add_mutually_exclusive_group()
    verbosity.add_argument("-v", "--verbose", action="count", default=0, help="more detail (repeatable)")
    verbosity.add_argument("-q", "--quiet", action="store_true", help="only errors")
    parser.set_defaults(door_servers=door_servers, door_mounts=door_mounts)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    modules = command_modules()
    for name in [only] if only else modules:
        importlib.import_module(modules[name]).register(sub)
    return parser


CHATTY = ("markdown_it",)  # libraries whose DEBUG lines drown the program's own


def _setup_logging(verbose: int, quiet: bool) -> None:
    level = logging.ERROR if quiet else logging.DEBUG if verbose else logging.INFO
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("kbsync: %(message)s" if verbose == 0 else "%(asctime)s %(name)s %(levelname)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for chatty in CHATTY:  # a debug line per parsing rule tried: only with -vv
        logging.getLogger(chatty).setLevel(logging.DEBUG if verbose > 1 else max(level, logging.INFO))


def main(argv: Sequence[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(command_named(words, command_modules()))
    args = parser.parse_args(words)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    _setup_logging(args.verbose, args.quiet)
    progress.configure(enabled=not args.quiet and not getattr(args, "json", False))
    from kbsync.app import catchup

    catchup.begin_command()
    try:
        code: int = args.func(args)
        return code
    except KbsyncError as exc:
        sys.stderr.write(f"kbsync: {exc}\n")
        if args.verbose:
            logging.getLogger(__name__).debug("details", exc_info=True)
        return exc.exit_code
    except BrokenPipeError:
        return 0
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        sys.stderr.write(f"kbsync: {where}{exc.strerror or exc}; check the path and permissions\n")
        return EXIT_ENVIRONMENT
    except KeyboardInterrupt:
        sys.stderr.write("kbsync: interrupted\n")
        return EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - a bug: one line here, the traceback in the crash log
        where = crash_log(words)
        sys.stderr.write(f"kbsync: internal error ({type(exc).__name__}: {exc}); this is a bug in kbsync, nothing "
                         f"was lost; the traceback is in {where}\n")
        return EXIT_INTERNAL


def crash_log(words: Sequence[str]) -> str:
    """Append the exception being handled, with the command's words and the time, to the crash log
    ($XDG_STATE_HOME/kbsync/crash.log, else ~/.local/state/kbsync/crash.log); where it is (or, when it cannot be
    written, why, and that -v shows the traceback)."""
    import datetime as dt
    import traceback

    base = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    path = base / "kbsync" / "crash.log"
    entry = (f"---- {dt.datetime.now(dt.timezone.utc).isoformat(timespec='seconds')} kbsync {__version__}: "
             f"{' '.join(words)}\n{traceback.format_exc()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as fh:
            fh.write(entry)
    except OSError as exc:
        logging.getLogger(__name__).debug("the traceback:\n%s", entry)
        return f"nowhere: {path} cannot be written ({exc.strerror or exc}); run again with -v to see it"
    return str(path)


def entry() -> None:
    sys.exit(main())
