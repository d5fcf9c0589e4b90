"""The workspace's files as a whole: validate, repair, rebuild index.md, export to HTML or DOCX."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from kbsync.errors import InputError, UsageError

if TYPE_CHECKING:
    from kbsync.core.findings import Finding as Finding  # the doors name it through the app layer
    from kbsync.store.export import Exported, Format, ImageMode
    from kbsync.store.rebuild import Rebuilt
    from kbsync.store.repairfile import RepairOutcome as RepairOutcome  # the doors name it through the app layer
    from kbsync.store.workspace import Workspace


def validate(ws: Workspace, paths: list[str] | None = None) -> Iterator[Finding]:
    """Findings for the named files (globs allowed), or for every workspace file, in the order of the files,
    each file's as soon as it is checked."""
    from kbsync.store.repairfile import validate_paths

    return validate_paths(ws, ws.expand(paths) if paths else None)


def repair(ws: Workspace, paths: list[str] | None = None, *, dry_run: bool = False) -> Iterator[RepairOutcome]:
    """The lossless repairs of the named files (or all), applied unless `dry_run`; each outcome as soon as
    its file is done, so that a caller can say it at once."""
    from kbsync.store.repairfile import repair_paths

    yield from repair_paths(ws, ws.expand(paths) if paths else None, dry_run=dry_run)


def rebuild_index(ws: Workspace) -> Rebuilt:
    """Regenerate index.md from the sessions: the number of rows, and the paths whose rows were dropped."""
    from kbsync.store.rebuild import rebuild_index as rebuild

    return rebuild(ws)


def _sources(paths: list[str]) -> list[Path]:
    """The source files, checked before anything is written."""
    from kbsync.store.workspace import left_out

    sources = [Path(p) for p in paths]
    for src in sources:
        why = left_out(src)
        if why:
            raise InputError(f"left out: {why}; export the file it points to", path=str(src))
        if not src.is_file():
            raise InputError("no such file; give the Markdown files to export", path=str(src))
    stems: dict[str, Path] = {}
    for src in sources:
        other = stems.setdefault(src.stem, src)
        if other != src:
            raise UsageError(f"{other} and {src} would both be written as {src.stem}.*; export them to different --out folders")
    return sources


def export(paths: list[str], out: str, to: Format, images: ImageMode) -> list[Exported]:
    """Each file as a self-contained HTML page or a DOCX document in the folder `out`."""
    from kbsync.store import export as exporter

    sources = _sources(paths)
    out_dir = Path(out)
    if out_dir.exists() and not out_dir.is_dir():
        raise UsageError("--out must be a folder", path=str(out_dir))
    if to == "docx":
        exporter.require_pandoc()
    return [exporter.export_file(src, str(src), out_dir, to, images) for src in sources]
