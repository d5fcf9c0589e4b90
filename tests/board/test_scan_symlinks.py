"""The scan never follows a symlink in a source (its target's bytes never become a candidate), and its
candidate list is never written through a link: both say so in one line."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.cli import Cli

NOW = "2025-07-01T09:00:00+08:00"
PRIVATE = "私人钥匙的位置"


def configure(ws: Path, notes: Path) -> None:
    (ws / ".kbsync").mkdir(parents=True, exist_ok=True)
    (ws / ".kbsync" / "config.toml").write_text(f'[[scan.sources]]\nname = "notes"\npath = "{notes}"\n',
                                               encoding="utf-8")


def test_a_linked_file_in_a_source_is_left_out_with_its_reason(tmp_path: Path, cli: Cli) -> None:
    ws, notes, private = tmp_path / "ws", tmp_path / "notes", tmp_path / "private.md"
    ws.mkdir()
    notes.mkdir()
    (notes / "real.md").write_text("# 真的\n\n一条笔记。\n", encoding="utf-8")
    private.write_text(f"# 私密\n\n{PRIVATE}\n", encoding="utf-8")
    (notes / "link.md").symlink_to(private)
    configure(ws, notes)
    done = cli("scan", "--now", NOW, ws=ws, cwd=ws)
    assert done.returncode == 0, done.stderr
    assert "notes: link.md: left out: symlink" in done.stderr
    listed = "".join(p.read_text(encoding="utf-8") for p in (ws / "candidates").glob("*.md"))
    assert "real.md" in listed and PRIVATE not in listed and "link.md" not in listed
    again = cli("scan", "--json", "--now", NOW, ws=ws, cwd=ws)
    assert json.loads(again.stdout) == []


def test_the_candidate_list_is_never_written_through_a_linked_folder(tmp_path: Path, cli: Cli) -> None:
    ws, notes, elsewhere = tmp_path / "ws", tmp_path / "notes", tmp_path / "elsewhere"
    for folder in (ws, notes, elsewhere):
        folder.mkdir()
    (notes / "real.md").write_text("# 真的\n\n一条笔记。\n", encoding="utf-8")
    (ws / "candidates").symlink_to(elsewhere)
    configure(ws, notes)
    done = cli("scan", "--now", NOW, ws=ws, cwd=ws)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "passes through candidates, a symlink on this machine" in done.stderr
    assert list(elsewhere.iterdir()) == []
    assert not (ws / ".kbsync" / "scan" / "notes.json").exists(), "the watermark stays where it was"
