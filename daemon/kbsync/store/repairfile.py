"""Repair of one workspace file on disk, with every guarantee of the protocol's repair path."""

from __future__ import annotations

import difflib
import logging
from dataclasses import dataclass, field
from typing import Literal

from kbsync.core import indexmd, protocol
from kbsync.progress import Progress
from kbsync.store import fsio
from kbsync.errors import ConflictError, InputError, LockedError
from kbsync.store.eventlog import log_error
from kbsync.core.findings import Finding, has_errors
from kbsync.core.repair import REBUILT, repair_text
from kbsync.core.validate import validate_text
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
        return RepairOutcome(relpath, "locked", findings=[Finding(relpath, 1, "warning", "skipped: locked by a writer")])
    try:
        data, fp = fsio.read_with_fingerprint(ws.checked_path(relpath))
        text = decode(data, relpath)
    except InputError as exc:
        return RepairOutcome(relpath, "invalid", findings=[Finding(relpath, exc.line or 1, "error", exc.message)])
    result = repair_text(relpath, text, ws.config)
    if not result.fixes:
        status: Status = "invalid" if has_errors(result.findings) else "valid"
        return RepairOutcome(relpath, status, findings=result.findings)
    if dry_run:
        return RepairOutcome(relpath, "would-repair", result.fixes, result.findings, unified_diff(relpath, text, result.text))
    new = result.text.encode("utf-8")

    def reparses(written: bytes) -> bool:
        return validate_text(relpath, written.decode("utf-8"), ws.config) == result.findings

    try:
        fsio.guarded_replace(path, new, fp, backup_to=lambda old: fsio.backup(ws.backup_dir, relpath, old),
                             check=reparses, ttl_s=ws.config.daemon.lock_ttl_s)
    except LockedError:
        return RepairOutcome(relpath, "locked", findings=[Finding(relpath, 1, "warning", "skipped: locked by a writer")])
    except ConflictError as exc:
        return RepairOutcome(relpath, "changed", findings=[Finding(relpath, 1, "warning", exc.message)])
    if REBUILT in result.fixes:
        log_error(ws, f"{relpath}: no frontmatter; rebuilt from the file name with status: conflict; review and fill it in")
    log.debug("%s: repaired (%s)", relpath, "; ".join(result.fixes))  # the caller says it, once
    return RepairOutcome(relpath, "repaired", result.fixes, result.findings)


def validate_paths(ws: Workspace, relpaths: list[str] | None = None) -> list[Finding]:
    """Findings for the given workspace files, or for every Markdown file of the workspace; for index.md,
    also each row that names a session that no longer exists."""
    out: list[Finding] = []
    rels = relpaths if relpaths is not None else list(ws.iter_files())
    with Progress("validate", len(rels)) as shown:
        for rel in rels:
            out += _findings(ws, rel)
            shown.advance()
    return out


def _findings(ws: Workspace, rel: str) -> list[Finding]:
    try:
        text = ws.read_text(rel)
    except InputError as exc:
        return [Finding(rel, exc.line or 1, "error", exc.message)]
    found = validate_text(rel, text, ws.config)
    if rel == protocol.INDEX_MD:
        found += indexmd.missing_rows(rel, text, lambda path: ".." not in path.split("/") and ws.path(path).is_file())
    return found
