"""Installing the git hook trampolines (pre-commit, pre-push) into a repository's hooks folder.

A different hook already there is never lost: without `force` or `chain` the
install is refused before anything is written; `chain` moves it aside and runs it
before kbsync's check; `force` replaces it and keeps a copy beside it.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from kbsync.errors import UsageError
from kbsync.proc import git
from kbsync.store.fsio import atomic_write

HOOKS = ("pre-commit", "pre-push")
MARKER = "# kbsync-hook:"
CHAINED = ".chained"  # suffix of a previous hook that runs first
BACKUP = ".kbsync-backup"  # suffix of a previous hook replaced with --force

TRAMPOLINE = """#!/bin/sh
{marker} {hook} trampoline
# {purpose}
# Install it with `kbsync hook install`; KBSYNC_PYTHON picks the interpreter that has kbsync.
{python_line}if [ -n "$KBSYNC_PYTHON" ]; then
  kbsync() {{ "$KBSYNC_PYTHON" -m kbsync "$@"; }}
elif ! command -v kbsync >/dev/null 2>&1; then
  echo "kbsync {hook} hook: kbsync is not installed; pip install it or set KBSYNC_PYTHON" >&2
  exit 1
fi
chained="$(dirname "$0")/{hook}{chained}"
{body}"""

BODIES = {
    "pre-commit": (
        "Checks the staged files (protocol validation and the secret scan) with `kbsync hook pre-commit`.",
        'if [ -x "$chained" ]; then "$chained" "$@" || exit $?; fi\n'
        "kbsync hook pre-commit\n",
    ),
    "pre-push": (
        "Scans every file version a push would publish for secrets with `kbsync hook pre-push`.",
        "updates=$(cat)\n"
        "if [ -x \"$chained\" ]; then printf '%s\\n' \"$updates\" | \"$chained\" \"$@\" || exit $?; fi\n"
        "# `kbsync sync` scans what it pushes itself, and names the commit it scanned for:\n"
        "if [ -n \"$KBSYNC_SCANNED\" ] && [ \"$(printf '%s\\n' \"$updates\" | cut -d' ' -f2)\" = \"$KBSYNC_SCANNED\" ]; then exit 0; fi\n"
        "printf '%s\\n' \"$updates\" | kbsync hook pre-push \"$@\"\n",
    ),
}


def trampoline(hook: str, python: str | None) -> str:
    """The hook script; with `python`, it runs that interpreter unless KBSYNC_PYTHON says otherwise."""
    purpose, body = BODIES[hook]
    line = f'KBSYNC_PYTHON="${{KBSYNC_PYTHON:-{shlex.quote(python)}}}"\n' if python else ""
    return TRAMPOLINE.format(marker=MARKER, hook=hook, purpose=purpose, python_line=line, chained=CHAINED,
                             body=body)


def hooks_dir(top: Path) -> Path:
    """Where git looks for hooks (honours core.hooksPath)."""
    return top / git(["rev-parse", "--git-path", "hooks"], cwd=top).strip()


def install(top: Path, python: str, *, force: bool = False, chain: bool = False) -> list[str]:
    """Write both hooks; one sentence per hook saying what was done."""
    folder = hooks_dir(top)
    existing = {name: (folder / name).read_bytes() if (folder / name).exists() else None for name in HOOKS}
    foreign = [name for name, data in existing.items() if data is not None and MARKER.encode() not in data]
    _check(folder, foreign, force=force, chain=chain)
    done = []
    for name in HOOKS:
        note = _set_aside(folder, name, existing[name], chain=chain) if name in foreign else ""
        atomic_write(folder / name, trampoline(name, python).encode())
        os.chmod(folder / name, 0o755)
        done.append(f"{'updated' if existing[name] is not None and not note else 'installed'} {folder / name}{note}")
    return done


def _check(folder: Path, foreign: list[str], *, force: bool, chain: bool) -> None:
    if foreign and not (force or chain):
        raise UsageError(f"a different {' and '.join(foreign)} hook is installed; use --chain to run it before "
                         "kbsync's check, or --force to replace it (a copy is kept)", path=str(folder))
    taken = [folder / f"{name}{CHAINED}" for name in foreign if (folder / f"{name}{CHAINED}").exists()]
    if chain and taken:
        raise UsageError(f"{taken[0]} already exists; merge the hooks by hand", path=str(folder))


def _set_aside(folder: Path, name: str, existing: bytes | None, *, chain: bool) -> str:
    if chain:
        os.replace(folder / name, folder / f"{name}{CHAINED}")
        return f"; the previous hook runs first, from {folder / (name + CHAINED)}"
    atomic_write(folder / f"{name}{BACKUP}", existing or b"")
    os.chmod(folder / f"{name}{BACKUP}", 0o755)
    return f"; the previous hook was kept as {folder / (name + BACKUP)}"
