"""`kbsync mcp`: the MCP server on standard input and output, for an assistant's client to start."""

from __future__ import annotations

import argparse

from kbsync.app.workspace import open_workspace

HELP = "serve the workspace to an assistant over the Model Context Protocol (stdio); see docs/mcp.md"


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser("mcp", help=HELP, description=HELP + ". The workspace is found as for every command "
                              "(-w, $KBSYNC_WORKSPACE, the config, ~/kb). Logs go to standard error.")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    ws = open_workspace(args.workspace, args.config)
    from kbsync.mcp.server import run_stdio

    run_stdio(ws)
    return 0
