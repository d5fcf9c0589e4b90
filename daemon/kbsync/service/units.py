"""systemd unit text for one workspace (pure), as `kbsync service install` writes it.

The hardening matches the shipped units in systemd/: the whole file system is
read-only to the service except the workspace.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from kbsync.store.fsio import atomic_write

OPEN_FILES = 65536  # the local server's connections beside the daemon's own files (kbsync.web.admission)
HARDENING = """\
UMask=0077
NoNewPrivileges=yes
ProtectSystem=strict
ReadWritePaths={workspace}
LockPersonality=yes
RestrictRealtime=yes
RestrictSUIDSGID=yes
SystemCallArchitectures=native
"""


def _arg(text: str) -> str:
    """One ExecStart argument: `%` escaped for systemd, quoted when it holds spaces or quotes."""
    text = text.replace("%", "%%")
    return f'"{text.replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34))}"' if any(
        c in text for c in " \t\"'\\") else text


def render_unit(python: str, workspace: Path, *, user: bool, account: str | None = None) -> str:
    """The unit for `kbsync -w WORKSPACE run` started with `python -m kbsync`."""
    ws = str(workspace)
    exec_start = " ".join(_arg(a) for a in (python, "-m", "kbsync", "-w", ws, "run"))
    lines = [
        "[Unit]",
        f"Description=kbsync: validate, repair and commit the Markdown memory workspace {ws.replace('%', '%%')}",
        *([] if user else ["After=network-online.target", "Wants=network-online.target"]),
        "",
        "[Service]",
        "Type=notify",
        "NotifyAccess=main",
        f"ExecStart={exec_start}",
        "ExecReload=/bin/kill -HUP $MAINPID",
        "Restart=on-failure",
        "RestartSec=5",
        "TimeoutStopSec=15",
        f"LimitNOFILE={OPEN_FILES}",
        *([] if user or not account else [f"User={account}"]),
        HARDENING.format(workspace=_arg(ws)).rstrip("\n"),
        "",
        "[Install]",
        f"WantedBy={'default.target' if user else 'multi-user.target'}",
    ]
    return "\n".join(lines) + "\n"


def systemctl_hint(name: str, *, user: bool) -> list[str]:
    """The commands a person runs after the unit is written."""
    ctl = "systemctl --user" if user else "sudo systemctl"
    hint = [f"{ctl} daemon-reload", f"{ctl} enable --now {shlex.quote(name)}",
            f"journalctl {'--user ' if user else ''}-u {shlex.quote(name)} -f"]
    if user:
        hint.append("loginctl enable-linger \"$USER\"   # keep it running while you are logged out")
    return hint


def write_unit(dest: Path, python: str, workspace: Path, *, user: bool, account: str | None = None) -> None:
    """The rendered unit, written atomically to `dest`."""
    atomic_write(dest, render_unit(python, workspace, user=user, account=account).encode("utf-8"))
