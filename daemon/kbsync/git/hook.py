"""The pre-commit check: protocol validation and the secret scan over what is staged.

Only the index is read, never the working tree (except to repair with `fix`), so a
file fixed on disk but not staged still fails. Protocol files are validated; every
staged text file is scanned for secrets. With `fix`, a file whose working-tree and
staged bytes are equal is repaired on disk (lock, backup, atomic replace) and the
repaired bytes are staged; otherwise the file is reported and the commit blocked.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from kbsync.config import Config
from kbsync.core import protocol
from kbsync.core.detect.secrets import ALLOW_FILE, SecretFinding, parse_allowlist, scan_bytes
from kbsync.core.findings import Finding, has_errors
from kbsync.core.validate import validate_text
from kbsync.errors import ConflictError, InputError, LockedError
from kbsync.git import staged
from kbsync.git.staged import StagedFile
from kbsync.store.fsio import backup, guarded_replace, read_with_fingerprint
from kbsync.store.workspace import decode

CHECKS = ("validate", "secrets")


@dataclass
class HookReport:
    findings: list[Finding] = field(default_factory=list)
    secrets: list[SecretFinding] = field(default_factory=list)
    fixed: dict[str, list[str]] = field(default_factory=dict)  # path -> fixes applied and staged
    checked: int = 0

    @property
    def blocked(self) -> bool:
        return has_errors(self.findings) or bool(self.secrets)


@dataclass(frozen=True)
class HookContext:
    top: Path  # the repository's top level
    prefix: str  # the workspace's folder inside the repository ("" when it is the top)
    cfg: Config
    fix: bool = False
    checks: tuple[str, ...] = CHECKS

    def workspace_relpath(self, path: str) -> str | None:
        return path[len(self.prefix):] if path.startswith(self.prefix) else None


def _read_with_allowlist(top: Path, entries: list[StagedFile], allow_name: str) -> tuple[
        dict[str, bytes | None], frozenset[str]]:
    """The entries' blobs and the fingerprints of the `.kbsync-allow` named (`:path` or `rev:path`)."""
    blobs = staged.read_objects(top, [e.blob for e in entries] + [allow_name])
    return blobs, parse_allowlist((blobs.get(allow_name) or b"").decode("utf-8", "replace"))


def check_staged(ctx: HookContext) -> HookReport:
    """Every finding for the staged files; `report.blocked` says whether the commit must stop."""
    entries = [e for e in staged.staged_files(ctx.top) if e.mode != staged.GITLINK]
    blobs, allowed = _read_with_allowlist(ctx.top, entries, f":{ctx.prefix}{ALLOW_FILE}")
    report = HookReport(checked=len(entries))
    for entry in entries:
        data = blobs[entry.blob] or b""
        if "secrets" in ctx.checks:
            report.secrets += scan_bytes(entry.path, data, allowed)
        if "validate" in ctx.checks:
            _validate_entry(ctx, entry, data, report)
    return report


def _validate_entry(ctx: HookContext, entry: StagedFile, data: bytes, report: HookReport) -> None:
    rel = ctx.workspace_relpath(entry.path)
    if rel is None or entry.mode == staged.SYMLINK:
        return
    if rel.split("/", 1)[0] == protocol.STATE_DIR:
        report.findings.append(Finding(entry.path, 1, "error",
                                       f"local state must not be committed; run `git rm --cached {entry.path}`"))
        return
    if protocol.classify(rel) == "other":
        return
    try:
        text = decode(data, rel)
    except InputError as exc:
        report.findings.append(Finding(entry.path, exc.line or 1, "error", exc.message))
        return
    findings = validate_text(rel, text, ctx.cfg)
    if has_errors(findings) and ctx.fix:
        findings = _fix(ctx, entry, rel, (text, data), findings, report)
    report.findings += [_at(f, entry.path) for f in findings]


def _findings(ctx: HookContext, rel: str, data: bytes) -> list[Finding]:
    try:
        return validate_text(rel, decode(data, rel), ctx.cfg)
    except InputError as exc:
        return [Finding(rel, exc.line or 1, "error", exc.message)]


def _at(f: Finding, path: str) -> Finding:
    """The finding under the repository path git shows (the workspace may be a subfolder)."""
    if f.path == path:
        return f
    return dataclasses.replace(f, path=path, message=f.message.replace(f" {f.path}`", f" {path}`"))


def _fix(ctx: HookContext, entry: StagedFile, rel: str, staged_content: tuple[str, bytes], found: list[Finding],
         report: HookReport) -> list[Finding]:
    """Repair on disk and stage the result, or explain why not; the findings that remain."""
    from kbsync.core.repair import repair_text

    text, data = staged_content
    path = ctx.top / entry.path
    try:
        disk, fp = read_with_fingerprint(path)
    except OSError:
        disk = None
    if disk != data:
        return found + [Finding(rel, 1, "error", "not repaired: the working tree differs from what is staged; "
                                                 f"fix the file, then `git add {entry.path}`")]
    result = repair_text(rel, text, ctx.cfg)
    if not result.fixes or has_errors(result.findings):
        return result.findings or found
    new = result.text.encode("utf-8")
    try:
        guarded_replace(path, new, fp, ttl_s=ctx.cfg.daemon.lock_ttl_s,
                        backup_to=lambda old: backup(ctx.top / ctx.prefix / protocol.BACKUP_DIR, rel, old),
                        check=lambda b: not has_errors(_findings(ctx, rel, b)))
    except (LockedError, ConflictError) as exc:
        return found + [Finding(rel, 1, "error", f"not repaired: {exc.message}; commit again in a moment")]
    staged.stage_bytes(ctx.top, entry, new)
    report.fixed[entry.path] = result.fixes
    return result.findings


# ---- pushes -----------------------------------------------------------------------

def pushed_ranges(updates: str) -> list[tuple[str, list[str]]]:
    """(head, exclude) for each ref update that git's pre-push hook reads on stdin.

    A line is `<local ref> <local sha> <remote ref> <remote sha>`; a deleted ref
    publishes nothing, and what the remote already has (its old sha, or any
    remote-tracking branch) is excluded.
    """
    out: list[tuple[str, list[str]]] = []
    for line in updates.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[1].strip("0"):
            out.append((parts[1], ["--remotes", *([parts[3]] if parts[3].strip("0") else [])]))
    return out


def scan_outgoing(top: Path, head: str, exclude: list[str], prefix: str = "") -> list[SecretFinding]:
    """Secrets in every file version that the commits `head --not exclude` would publish.

    Intermediate versions count (a secret added then removed is still in the
    history); the allowlist is `.kbsync-allow` as of `head`. One finding per path and secret.
    """
    entries = [e for e in staged.outgoing_files(top, head, exclude) if e.mode != staged.GITLINK]
    blobs, allowed = _read_with_allowlist(top, entries, f"{head}:{prefix}{ALLOW_FILE}")
    found = (f for e in entries for f in scan_bytes(e.path, blobs[e.blob] or b"", allowed))
    return list({(f.path, f.fingerprint): f for f in found}.values())
