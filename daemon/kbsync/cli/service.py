"""`kbsync service install [--user]`: write the systemd unit for this workspace, print the systemctl commands."""

from __future__ import annotations

import argparse
import getpass
import os
import sys
from pathlib import Path
from typing import Any

from kbsync.cli.common import context
from kbsync.errors import EXIT_OK, UsageError


def register(sub: Any) -> None:
    p = sub.add_parser("service", help="the systemd service for `kbsync run`",
                       description="Manage the systemd unit that runs `kbsync run` for this workspace.")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    inst = actions.add_parser("install", help="write the unit file and print the systemctl commands",
                              description="Write a unit that runs `kbsync run` on this workspace (Type=notify, "
                                          "Restart=on-failure, read-only system except the workspace). It does "
                                          "not start anything: it prints the systemctl commands to run.")
    inst.add_argument("--user", action="store_true", help="a user unit (~/.config/systemd/user) instead of a system one")
    inst.add_argument("--name", default="kbsync", help="unit name without .service (default: kbsync)")
    inst.add_argument("--dir", metavar="DIR", help="write the unit into DIR instead of systemd's folder")
    inst.set_defaults(func=run)


def unit_dir(user: bool) -> Path:
    if user:
        base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
        return Path(base) / "systemd" / "user"
    return Path("/etc/systemd/system")


def run(args: argparse.Namespace) -> int:
    from kbsync.app.workspace import init_workspace
    from kbsync.service.units import systemctl_hint, write_unit

    if not args.name or "/" in args.name:
        raise UsageError(f"--name {args.name!r}: give a plain unit name such as kbsync")
    root, _ = context(args)
    if init_workspace(root):  # the service may write only inside it, so it must exist before it starts
        print(f"initialised the workspace {root}")
    dest = (Path(args.dir) if args.dir else unit_dir(args.user)) / f"{args.name}.service"
    write_unit(dest, sys.executable, root, user=args.user, account=None if args.user else getpass.getuser())
    print(f"wrote {dest}")
    print("now run:")
    for line in systemctl_hint(f"{args.name}.service", user=args.user):
        print(f"  {line}")
    return EXIT_OK
