"""Finding, opening and laying out a workspace."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kbsync.config import Config, resolve
from kbsync.errors import UsageError
from kbsync.store.workspace import Workspace as Workspace  # the doors name it through the app layer


@dataclass(frozen=True)
class InitResult:
    root: Path
    created: list[str]  # folders and files made, ".git/" for the repository
    missing_ignores: list[str]  # lines an existing .gitignore lacks


def locate(workspace_arg: str | None, config_arg: str | None) -> tuple[Path, Config]:
    """The workspace folder and its configuration, by the command-line contract."""
    return resolve(workspace_arg, config_arg)


def open_workspace(workspace_arg: str | None, config_arg: str | None) -> Workspace:
    """The Workspace the options name; UsageError if that folder does not exist."""
    root, cfg = locate(workspace_arg, config_arg)
    if not root.is_dir():
        raise UsageError(f"no workspace folder here; create one with `kbsync -w {root} init`", path=str(root))
    return Workspace(root, cfg)


def parse_json_input(raw: bytes, where: str) -> dict[str, Any]:
    """One JSON object from untrusted input (stdin, a file, a request body): UTF-8, no control characters
    or lone surrogates in any key or string, nested at most 64 deep; InputError naming the field otherwise."""
    from kbsync.core.textguard import loads_object

    return loads_object(raw, where)


def workspace_at(root: Path, cfg: Config) -> Workspace:
    """The workspace in folder `root` with configuration `cfg` (the daemon reloads it on SIGHUP)."""
    return Workspace(root, cfg)


def init_workspace(root: Path) -> list[str]:
    """Create what is missing (folders, skeleton files, the git repository); what was created.
    Nothing that exists is changed."""
    from kbsync.git import repo
    from kbsync.store import initws

    created = initws.lay_out(root)
    if not (root / ".git").exists():
        repo.init_repository(root)
        created.append(".git/")
    return created


def init(root: Path) -> InitResult:
    """`kbsync init`: the layout and repository, and what an existing .gitignore lacks."""
    from kbsync.store import initws

    created = init_workspace(root)
    return InitResult(root, created, initws.missing_ignores(root))
