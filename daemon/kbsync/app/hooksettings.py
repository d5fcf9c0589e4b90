"""Installing kbsync's hooks in an assistant's settings file, removing them, and saying where they are.

The file belongs to the assistant and the person: kbsync changes only its own hooks (kbsync.core.assistants),
keeps every other key, hook and the order of keys, writes atomically only if the file is still as read, and
keeps the previous bytes under `.kbsync/backup/<UTC>/assist/...` first.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kbsync.core.assistants import ASSISTANTS, Assistant, Installed, installed, merged, without
from kbsync.errors import InputError, UsageError
from kbsync.store import fsio
from kbsync.store.workspace import Workspace


@dataclass(frozen=True)
class SettingsState:
    assistant: str
    path: str
    exists: bool
    hooks: list[Installed] = field(default_factory=list)
    changed: bool = False  # by this call
    backup: str | None = None  # where the previous bytes were kept

    def as_dict(self) -> dict[str, Any]:
        return {"assistant": self.assistant, "path": self.path, "exists": self.exists, "changed": self.changed,
                "backup": self.backup, "hooks": [{"event": h.event, "command": h.command} for h in self.hooks]}


def assistant(name: str) -> Assistant:
    try:
        return ASSISTANTS[name]
    except KeyError:
        raise UsageError(f"assistant {name!r}: give one of {', '.join(ASSISTANTS)}") from None


def settings_path(name: str, *, project: str | None = None, user: bool = False) -> Path:
    """The settings file of assistant `name`: in the home folder (`user`), else in `project` (default: the
    current folder)."""
    a = assistant(name)
    base = Path.home() if user else Path(project or ".").expanduser().absolute()
    if not user and not base.is_dir():
        raise UsageError(f"--project {project}: no such folder", path=str(base))
    return base / a.folder / a.file


def hook_prefix(ws: Workspace) -> str:
    """How a hook starts kbsync for this workspace: this interpreter, and the workspace and config pinned (an
    assistant starts hooks in its own project folder, with its own environment)."""
    words = [sys.executable, "-m", "kbsync", "-w", str(ws.root)]
    if ws.config.source:
        words += ["--config", os.path.abspath(ws.config.source)]
    return " ".join(shlex.quote(w) for w in words)


def _read(path: Path) -> tuple[dict[str, Any], fsio.Fingerprint | None]:
    if not path.exists() and not path.is_symlink():
        return {}, None
    data, fp = fsio.read_with_fingerprint(path)
    try:
        settings = json.loads(data.decode("utf-8-sig")) if data.strip() else {}
    except UnicodeDecodeError as exc:
        raise InputError("not UTF-8 text; fix the file by hand, then run this again", path=str(path)) from exc
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON ({exc.msg}); fix it by hand, then run this again", path=str(path),
                         line=exc.lineno) from exc
    if not isinstance(settings, dict):
        raise InputError("not a JSON object; fix it by hand, then run this again", path=str(path))
    return settings, fp


def _write(ws: Workspace, path: Path, settings: dict[str, Any], expected: fsio.Fingerprint | None) -> str | None:
    """Write `settings` if the file is still as read; the backup of the previous bytes, if there were any."""
    data = (json.dumps(settings, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
    if expected is None:
        if path.exists() or path.is_symlink():
            raise InputError("appeared while kbsync read it; run this again", path=str(path))
        path.parent.mkdir(parents=True, exist_ok=True)
        fsio.atomic_write(path, data)
        return None
    kept: list[Path] = []
    relpath = "assist/" + str(path).lstrip("/")
    fsio.guarded_replace(path, data, expected, backup_to=lambda old: kept.append(fsio.backup(ws.backup_dir, relpath, old)),
                         check=lambda b: json.loads(b) == settings)
    return str(kept[0]) if kept else None


def install(ws: Workspace, name: str, path: Path) -> SettingsState:
    """Merge kbsync's hooks for assistant `name` into the settings file `path` (made if missing); idempotent."""
    a = assistant(name)
    settings, fp = _read(path)
    new = merged(settings, a, hook_prefix(ws), str(path))
    changed = new != settings or fp is None
    backup = _write(ws, path, new, fp) if changed else None
    return SettingsState(name, str(path), True, installed(new, name, str(path)), changed, backup)


def uninstall(ws: Workspace, name: str, path: Path) -> SettingsState:
    """Remove exactly kbsync's hooks for assistant `name` from `path`; everything else stays."""
    assistant(name)
    settings, fp = _read(path)
    if fp is None:
        return SettingsState(name, str(path), False)
    new = without(settings, name, str(path))
    changed = new != settings
    backup = _write(ws, path, new, fp) if changed else None
    return SettingsState(name, str(path), True, installed(new, name, str(path)), changed, backup)


def status(name: str, paths: list[Path]) -> list[SettingsState]:
    """kbsync's hooks in each of these settings files of assistant `name`."""
    assistant(name)
    out = []
    for path in paths:
        settings, fp = _read(path)
        out.append(SettingsState(name, str(path), fp is not None, installed(settings, name, str(path))))
    return out
