"""The workspace's repository: commit what is pending, sync with the remote, and the git hooks."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from kbsync.errors import ConfigError

if TYPE_CHECKING:
    from kbsync.core.detect.secrets import SecretFinding as SecretFinding  # the doors name it through the app layer
    from kbsync.git.commit import CommitResult
    from kbsync.git.hook import HookReport as HookReport  # the doors name it through the app layer
    from kbsync.store.workspace import Workspace
    from kbsync.sync.syncer import SyncResult


def commit(ws: Workspace, message: str | None = None) -> CommitResult:
    """Commit every valid, quiet, unlocked file that changed; what was left out says why."""
    from kbsync.git import quiet
    from kbsync.git.commit import commit_pending

    return commit_pending(ws, reason="manual", message=message, settle_s=quiet.bound(ws))


def sync(ws: Workspace) -> SyncResult:
    """Commit, pull, integrate and push; never forced, conflicts kept as copies for a person."""
    from kbsync.git.inprogress import in_progress
    from kbsync.sync.syncer import SyncResult as Result
    from kbsync.sync.syncer import remote_configured
    from kbsync.sync.syncer import sync as run_sync

    doing = in_progress(ws.root)
    if doing:  # said first: it is why nothing can happen now, whatever else is missing
        return Result(ws.config.sync.mode, waiting=doing)
    if not remote_configured(ws):
        raise ConfigError(_no_remote(ws) + "; nothing was committed or sent", path=str(ws.root))
    return run_sync(ws)


def _no_remote(ws: Workspace) -> str:
    if ws.config.sync.mode == "github-api":
        return "no repository to sync with; set [github] repository (owner/name) in the config"
    remote = ws.config.sync.remote
    return (f"no git remote {remote!r} to sync with; add one with `git remote add {remote} URL` "
            "(or set [sync] remote)")


def hook_top(folder: str | None) -> tuple[Path, str]:
    """The repository's top folder and the workspace's path inside it, for the folder given (or here)."""
    from kbsync.git.staged import top_level

    return top_level(Path(folder or ".").expanduser())


def pre_commit(folder: str | None, config_arg: str | None, *, fix: bool | None, only: str | None) -> HookReport:
    """Check the staged files: protocol validation (with repairs re-staged when `fix`) and the secret scan."""
    from kbsync.config import resolve
    from kbsync.git.hook import CHECKS, HookContext, check_staged

    top, prefix = hook_top(folder)
    _root, cfg = resolve(str(top / prefix), config_arg)
    ctx = HookContext(top, prefix, cfg, fix=cfg.hook.fix if fix is None else fix, checks=(only,) if only else CHECKS)
    return check_staged(ctx)


def pre_push(folder: str | None, updates: str) -> list[SecretFinding]:
    """Secrets in every file version the ref updates (as git gives them to a pre-push hook) would publish."""
    from kbsync.git.hook import pushed_ranges, scan_outgoing

    top, prefix = hook_top(folder)
    return [f for head, exclude in pushed_ranges(updates) for f in scan_outgoing(top, head, exclude, prefix)]


def install_hooks(folder: str | None, python: str, *, force: bool = False, chain: bool = False) -> list[str]:
    """Write the pre-commit and pre-push trampolines into the repository's hooks folder; what was done."""
    from kbsync.git.hookinstall import install

    top, _prefix = hook_top(folder)
    return install(top, python, force=force, chain=chain)
