"""`kbsync run`: the always-on service (watch, repair, commit, timed jobs) for one workspace."""

from __future__ import annotations

import argparse
import logging
from typing import Any

from kbsync.cli.common import context

log = logging.getLogger(__name__)


def register(sub: Any) -> None:
    p = sub.add_parser("run", help="watch the workspace: repair after each write, commit hourly and per session",
                       description="Run the daemon in the foreground (systemd starts it as a service). "
                                   "A folder that is not yet a workspace is initialised first; with no "
                                   "workspace named anywhere, ~/kb is used. SIGTERM/SIGINT stop it after "
                                   "a final commit; SIGHUP reloads the configuration. With [web] enabled "
                                   "(the default) it also serves the local HTTP API (docs/http-api.md).")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kbsync.app.workspace import init_workspace, workspace_at
    from kbsync.service.daemon import Daemon

    root, _ = context(args)
    created = init_workspace(root)
    if created:
        log.info("initialised the workspace %s: %s", root, ", ".join(created))

    servers = args.door_servers(workspace_at(root, context(args)[1]))  # composed by kbsync.main
    return Daemon(lambda: workspace_at(root, context(args)[1]), servers).run()
