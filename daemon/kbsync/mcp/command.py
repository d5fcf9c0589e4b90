"""`kbsync mcp`: the MCP server on standard input and output, for an assistant's client to start."""

from __future__ import annotations

import argparse
import sys

from kbsync.app.workspace import open_workspace
from kbsync.cliargs import Subparsers

HELP = "serve the workspace to an assistant over the Model Context Protocol (stdio); see docs/mcp.md"
# Optional imports of the SDK's that a stdio server never uses, each taken as "not installed" when it fails:
# the SDK's log set-up imports rich for a log handler (kbsync's own handler is already in place, so none is
# added), and sse_starlette imports uvicorn to hook its shutdown (nothing here runs uvicorn). Together with
# click, which uvicorn imports, some 4.5 MB of the stdio server's memory (docs/mcp.md).
UNUSED_OVER_STDIO = ("uvicorn", "rich")


def register(subparsers: Subparsers) -> None:
    p = subparsers.add_parser("mcp", help=HELP, description=HELP + ". The workspace is found as for every command "
                              "(-w, $KBSYNC_WORKSPACE, the config, ~/kb). Logs go to standard error.")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kbsync import allocator

    ws = open_workspace(args.workspace, args.config)
    allocator.tune()
    leave_out(UNUSED_OVER_STDIO)
    from kbsync.mcp.server import run_stdio

    run_stdio(ws)
    return 0


def leave_out(modules: tuple[str, ...]) -> None:
    """Make importing these modules fail as if they were not installed (unless one is loaded already)."""
    for name in modules:
        sys.modules.setdefault(name, None)  # type: ignore[arg-type]
