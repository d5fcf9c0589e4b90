"""The core on the shared corpus: `gen_workspace.py --dirty 0.2` validated, repaired, left valid."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.cli import Cli
from helpers.corpus import gen_workspace
from kbsync.config import Config
from kbsync.core.findings import has_errors
from kbsync.store.repairfile import repair_file, validate_paths
from kbsync.store.workspace import Workspace


@pytest.fixture(scope="module")
def dirty_ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return gen_workspace(tmp_path_factory.mktemp("gen") / "ws", sessions=400, dirty=0.2, seed=11)


def defects(root: Path) -> dict[str, str]:
    rows = (ln.split("\t") for ln in (root / ".defects.tsv").read_text(encoding="utf-8").splitlines())
    return {rel: kind for rel, kind in rows}


def test_validate_reports_the_dirty_files_and_only_them(dirty_ws: Path) -> None:
    ws = Workspace(dirty_ws, Config())
    bad = {f.path for f in validate_paths(ws) if f.level == "error"}
    marked = defects(dirty_ws)
    # a truncation inside the last section's text leaves a valid file; every other defect is an error
    expected = {rel for rel, kind in marked.items() if kind != "truncated"}
    assert expected <= bad <= set(marked)


def test_repair_makes_every_file_valid_keeps_clean_ones_and_is_idempotent(dirty_ws: Path, tmp_path: Path, cli: Cli) -> None:
    marked = defects(dirty_ws)
    clean = [p for p in sorted((dirty_ws / "sessions").rglob("*.md")) if p.relative_to(dirty_ws).as_posix() not in marked][:50]
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in clean}
    first = cli("-w", str(dirty_ws), "repair")
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-2000:]
    assert "Traceback" not in first.stderr
    assert cli("-w", str(dirty_ws), "validate").returncode == 0
    for p, (data, mtime) in before.items():
        assert p.read_bytes() == data and p.stat().st_mtime_ns == mtime
    snapshot = {p: p.read_bytes() for p in (dirty_ws / "sessions").rglob("*.md")}
    second = cli("-w", str(dirty_ws), "repair")
    assert second.returncode == 0 and second.stdout == ""
    assert snapshot == {p: p.read_bytes() for p in (dirty_ws / "sessions").rglob("*.md")}
    backup_root = dirty_ws / ".kbsync" / "backup"
    backed_up = {Path(*b.relative_to(backup_root).parts[1:]).as_posix(): b for b in backup_root.rglob("*.md")}
    assert {rel for rel, kind in marked.items() if kind != "truncated"} <= set(backed_up) <= set(marked)
    for rel, backup in backed_up.items():
        assert backup.read_bytes() != (dirty_ws / rel).read_bytes()  # the previous bytes, kept
    errors_log = (dirty_ws / "logs" / "errors.md").read_text(encoding="utf-8")
    assert all(rel in errors_log for rel, kind in marked.items() if kind == "no_frontmatter")


def test_repair_file_api_outcomes(tmp_path: Path) -> None:
    root = gen_workspace(tmp_path / "ws", sessions=30, dirty=0.5, seed=3)
    ws = Workspace(root, Config())
    outcomes = [repair_file(ws, rel) for rel in ws.iter_files() if rel.startswith("sessions/")]
    assert {o.status for o in outcomes} <= {"valid", "repaired"}
    assert any(o.status == "repaired" for o in outcomes)
    assert not has_errors(validate_paths(ws))


def test_a_folder_argument_stands_for_its_files(tmp_path: Path, cli: Cli) -> None:
    root = gen_workspace(tmp_path / "ws", sessions=20, dirty=1.0, seed=5)
    out = cli("-w", str(root), "validate", str(root / "sessions"), "--json")
    assert out.returncode == 1
    assert {ln.split(":")[0] for ln in cli("-w", str(root), "validate", str(root / "sessions")).stdout.splitlines()} <= {
        rel for rel in defects(root)}
    assert cli("-w", str(root), "repair", str(root / "sessions")).returncode == 0
    assert cli("-w", str(root), "validate", "sessions", cwd=root).returncode == 0
