"""Repair of one workspace file on disk, with every guarantee of the protocol's repair path."""

from __future__ import annotations

import difflib
import functools
import logging
from dataclasses import dataclass, field
from typing import Iterator, Literal

from kbsync import parallel, progress
from kbsync.core import protocol
from kbsync.core.findings import Finding, has_errors
from kbsync.core.repair import REBUILT, RepairResult, repair_text
from kbsync.core.validate import validate_text
from kbsync.errors import ConflictError, InputError, LockedError
from kbsync.progress import Progress
from kbsync.store import appendscan, fsio
from kbsync.store.eventlog import log_error
from kbsync.store.workspace import Workspace, decode

log = logging.getLogger(__name__)
Status = Literal["valid", "repaired", "would-repair", "locked", "changed", "invalid"]


@dataclass
class RepairOutcome:
    relpath: str
    status: Status
    fixes: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    diff: str = ""

    @property
    def ok(self) -> bool:
        return self.status in ("valid", "repaired", "would-repair") and not has_errors(self.findings)


def unified_diff(relpath: str, old: str, new: str) -> str:
    return "".join(difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), f"a/{relpath}", f"b/{relpath}"))


def repair_file(ws: Workspace, relpath: str, *, dry_run: bool = False) -> RepairOutcome:
    """Validate `relpath` and, if it has errors, repair it in place (or show the diff)."""
    path = ws.path(relpath)
    if fsio.clear_stale_lock(path):
        log.info("%s: cleared a stale lock", relpath)
    if fsio.lock_held(path):
        return _locked(relpath)
    planned = _plan(ws, relpath)
    if isinstance(planned, RepairOutcome):
        return planned
    text, fp, result = planned
    if dry_run:
        return RepairOutcome(relpath, "would-repair", result.fixes, result.findings, unified_diff(relpath, text, result.text))
    return _write(ws, relpath, fp, result)


def check_file(ws: Workspace, relpath: str, *, dry_run: bool = False) -> RepairOutcome | None:
    """What `repair_file` gives for `relpath` when it writes nothing, found without writing anything (a pool
    worker's part); None when it would write (a repair to apply, a lock file to clear or to wait for)."""
    if fsio.lock_path(ws.path(relpath)).exists():
        return None
    planned = _plan(ws, relpath)
    if isinstance(planned, RepairOutcome):
        return planned
    text, _fp, result = planned
    return RepairOutcome(relpath, "would-repair", result.fixes, result.findings,
                         unified_diff(relpath, text, result.text)) if dry_run else None


def _locked(relpath: str) -> RepairOutcome:
    return RepairOutcome(relpath, "locked", findings=[Finding(relpath, 1, "warning", "skipped: locked by a writer")])


def _plan(ws: Workspace, relpath: str) -> RepairOutcome | tuple[str, fsio.Fingerprint, RepairResult]:
    """The file's outcome when it needs no write; else its text, the fingerprint it was read at and its repair."""
    try:
        data, fp = fsio.read_with_fingerprint(ws.checked_path(relpath))
        text = decode(data, relpath)
    except InputError as exc:
        return RepairOutcome(relpath, "invalid", findings=[Finding(relpath, exc.line or 1, "error", exc.message)])
    result = repair_text(relpath, text, ws.config)
    if not result.fixes:
        status: Status = "invalid" if has_errors(result.findings) else "valid"
        return RepairOutcome(relpath, status, findings=result.findings)
    return text, fp, result


def _write(ws: Workspace, relpath: str, fp: fsio.Fingerprint, result: RepairResult) -> RepairOutcome:
    """Write the repaired text under the file's lock, if it is still as read (backup first, atomic replace)."""
    def reparses(written: bytes) -> bool:
        return validate_text(relpath, written.decode("utf-8"), ws.config) == result.findings

    try:
        fsio.guarded_replace(ws.path(relpath), result.text.encode("utf-8"), fp, check=reparses,
                             backup_to=lambda old: fsio.backup(ws.backup_dir, relpath, old),
                             ttl_s=ws.config.daemon.lock_ttl_s)
    except LockedError:
        return _locked(relpath)
    except ConflictError as exc:
        return RepairOutcome(relpath, "changed", findings=[Finding(relpath, 1, "warning", exc.message)])
    if REBUILT in result.fixes:
        log_error(ws, f"{relpath}: no frontmatter; rebuilt from the file name with status: conflict; review and fill it in")
    log.debug("%s: repaired (%s)", relpath, "; ".join(result.fixes))  # the caller says it, once
    return RepairOutcome(relpath, "repaired", result.fixes, result.findings)


def repair_paths(ws: Workspace, relpaths: list[str] | None = None, *, dry_run: bool = False) -> Iterator[RepairOutcome]:
    """`repair_file` of each given file, or of every Markdown file of the workspace (walked as the work goes),
    in order, each outcome as soon as it is known. The reading and checking run on every core
    (kbsync.parallel); the writes are this process's alone, one file at a time."""
    rels = relpaths if relpaths is not None else ws.iter_files()
    with Progress("repair", _count(ws, relpaths)) as shown:
        for batch, found in parallel.batches(functools.partial(_check_batch, ws, dry_run), rels):
            for rel, outcome in zip(batch, found):
                yield outcome if outcome is not None else repair_file(ws, rel, dry_run=dry_run)
                shown.advance()


def _count(ws: Workspace, relpaths: list[str] | None) -> int | None:
    """How many files the progress counts to; for the whole workspace, a count of its files (a walk that
    keeps nothing) when progress is shown at all, else None (the bar then counts without an estimate)."""
    if relpaths is not None:
        return len(relpaths)
    return sum(1 for _ in ws.scan()) if progress.shown() else None


def _check_batch(ws: Workspace, dry_run: bool, relpaths: list[str]) -> list[RepairOutcome | None]:
    return [check_file(ws, rel, dry_run=dry_run) for rel in relpaths]


def validate_paths(ws: Workspace, relpaths: list[str] | None = None) -> Iterator[Finding]:
    """Findings for the given workspace files, or for every Markdown file of the workspace (walked as the
    work goes: no list of all paths is made); for index.md, also each row that names a session that no
    longer exists. The files are checked on every core
    (kbsync.parallel); the findings come in the order of the files, as a serial run gives them, each batch's
    as soon as it and those before it are done."""
    rels = relpaths if relpaths is not None else ws.iter_files()
    with Progress("validate", _count(ws, relpaths)) as shown:
        for batch, found in parallel.batches(functools.partial(_validate_batch, ws), rels):
            yield from found
            shown.advance(len(batch))


def _validate_batch(ws: Workspace, relpaths: list[str]) -> list[Finding]:
    return [f for rel in relpaths for f in _findings(ws, rel)]


def _findings(ws: Workspace, rel: str) -> list[Finding]:
    try:
        if rel in protocol.APPEND_ONLY:
            return appendscan.findings(ws, rel)
        text = ws.read_text(rel)
    except InputError as exc:
        return [Finding(rel, exc.line or 1, "error", exc.message)]
    return validate_text(rel, text, ws.config)
