"""Installing the git pre-commit trampoline into a repository's hooks folder.

A different hook already there is never lost: without `force` or `chain` the
install is refused; `chain` moves it aside and runs it before kbsync's checks;
`force` replaces it and keeps a copy beside it.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from kbsync.errors import UsageError
from kbsync.fsio import atomic_write
from kbsync.proc import git

MARKER = "# kbsync-hook: pre-commit trampoline"
CHAINED = "pre-commit.chained"
BACKUP = "pre-commit.kbsync-backup"

TRAMPOLINE = """#!/bin/sh
{marker}
# Checks the staged files (protocol validation and the secret scan) with `kbsync hook pre-commit`.
# Install it with `kbsync hook install`; KBSYNC_PYTHON picks the interpreter that has kbsync.
chained="$(dirname "$0")/{chained}"
if [ -x "$chained" ]; then "$chained" "$@" || exit $?; fi
{python_line}if [ -n "$KBSYNC_PYTHON" ]; then exec "$KBSYNC_PYTHON" -m kbsync hook pre-commit; fi
if command -v kbsync >/dev/null 2>&1; then exec kbsync hook pre-commit; fi
echo "kbsync pre-commit hook: kbsync is not installed; pip install it or set KBSYNC_PYTHON" >&2
exit 1
"""


def trampoline(python: str | None) -> str:
    """The hook script; with `python`, it runs that interpreter unless KBSYNC_PYTHON says otherwise."""
    line = f'KBSYNC_PYTHON="${{KBSYNC_PYTHON:-{shlex.quote(python)}}}"\n' if python else ""
    return TRAMPOLINE.format(marker=MARKER, chained=CHAINED, python_line=line)


def hooks_dir(top: Path) -> Path:
    """Where git looks for hooks (honours core.hooksPath)."""
    return top / git(["rev-parse", "--git-path", "hooks"], cwd=top).strip()


def install(top: Path, python: str, *, force: bool = False, chain: bool = False) -> str:
    """Write the pre-commit hook; a sentence saying what was done."""
    folder = hooks_dir(top)
    hook = folder / "pre-commit"
    existing = hook.read_bytes() if hook.exists() else None
    note = ""
    if existing is not None and MARKER.encode() not in existing:
        note = _set_aside(folder, existing, force=force, chain=chain)
    atomic_write(hook, trampoline(python).encode())
    os.chmod(hook, 0o755)
    verb = "updated" if existing is not None and not note else "installed"
    return f"{verb} {hook}{note}"


def _set_aside(folder: Path, existing: bytes, *, force: bool, chain: bool) -> str:
    if chain:
        target = folder / CHAINED
        if target.exists():
            raise UsageError(f"{target} already exists; merge the two hooks by hand", path=str(folder / "pre-commit"))
        os.replace(folder / "pre-commit", target)
        return f"; the previous hook runs first, from {target}"
    if force:
        atomic_write(folder / BACKUP, existing)
        os.chmod(folder / BACKUP, 0o755)
        return f"; the previous hook was kept as {folder / BACKUP}"
    raise UsageError("a different pre-commit hook is installed; use --chain to run it before kbsync's "
                     "checks, or --force to replace it (a copy is kept)", path=str(folder / "pre-commit"))
