"""`kbsync web serve|url|token`: the local HTTP API in the foreground, the login link, the API token."""

from __future__ import annotations

import argparse
from typing import Any

from kbsync.errors import EXIT_OK


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("web", help="the local HTTP API: serve it, print its login link or token",
                              description="The local HTTP API (docs/http-api.md). `kbsync run` serves it when "
                              "[web] enabled; `kbsync web serve` serves it without the daemon.")
    sub = p.add_subparsers(dest="web_command", metavar="ACTION", required=True)
    serve = sub.add_parser("serve", help="serve the API in the foreground until SIGINT/SIGTERM",
                           description="Serve the API on [web] host and port (default 127.0.0.1:8420; port 0 = any "
                           "free port) without the daemon; .kbsync/web.json says where, once it listens.")
    serve.set_defaults(func=_run_serve)
    url = sub.add_parser("url", help="print the URL that logs a browser in (it works once, for 5 minutes)",
                         description="Print the running server's URL with a one-time login token; opening it sets "
                         "a session cookie and redirects to a URL without the token.")
    url.set_defaults(func=_run_url)
    token = sub.add_parser("token", help="print the API token (made on first use)",
                           description="Print the API token for `Authorization: Bearer <token>` (256 random bits "
                           "in .kbsync/web-token, mode 0600). --rotate replaces it: the old one and every "
                           "browser session stop working at once.")
    token.add_argument("--rotate", action="store_true", help="make a new token in place of the old one")
    token.set_defaults(func=_run_token)


def _run_serve(args: argparse.Namespace) -> int:
    from kbsync import allocator
    from kbsync.app.workspace import open_workspace
    from kbsync.web.server import serve_foreground

    allocator.tune()
    return serve_foreground(open_workspace(args.workspace, args.config), args.door_mounts)  # composed by kbsync.main


def _run_url(args: argparse.Namespace) -> int:
    from kbsync.app.web import login_url
    from kbsync.app.workspace import open_workspace

    print(login_url(open_workspace(args.workspace, args.config)))
    return EXIT_OK


def _run_token(args: argparse.Namespace) -> int:
    from kbsync.app.web import api_token, rotate_token
    from kbsync.app.workspace import open_workspace

    ws = open_workspace(args.workspace, args.config)
    print(rotate_token(ws) if args.rotate else api_token(ws))
    return EXIT_OK
