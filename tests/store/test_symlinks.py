"""A symlink in the workspace is never followed for content: every command that reads files leaves it out
with its reason, and none replaces it by a regular file holding its target's bytes. A person may still commit
one by hand with git."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from helpers.cli import Cli
from helpers.core import new_workspace
from helpers.daemon import dirty, head_files, session_relpath, session_text, write

LINK = session_relpath(1, "link")
LINK_TO_DIRTY = session_relpath(2, "alias")
DIRTY = session_relpath(3, "dirty")
PLAIN = session_relpath(4, "plain")
SECRET_WORD = "嘉禾路七号"


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout


@pytest.fixture
def linked(tmp_path: Path) -> Path:
    """A workspace with the classic attack (a session that is a link to git's config) and a link to a dirty
    session inside the workspace, besides plain files."""
    root = tmp_path / "ws"
    new_workspace(root)
    git(root, "config", "kbsync.note", SECRET_WORD)  # a word only git's config holds
    write(root, DIRTY, dirty(session_text(DIRTY, body=f"{SECRET_WORD} dirty")), age_s=5)
    write(root, PLAIN, session_text(PLAIN, body="plain"), age_s=5)
    (root / LINK).symlink_to("../../.git/config")
    (root / LINK_TO_DIRTY).symlink_to(Path(DIRTY).name)
    return root


def links_intact(root: Path, before: dict[str, bytes]) -> None:
    assert (root / LINK).is_symlink() and (root / LINK_TO_DIRTY).is_symlink()
    assert str((root / LINK).readlink()) == "../../.git/config"
    assert (root / ".git" / "config").read_bytes() == before["config"]


def test_validate_names_each_link_as_left_out(linked: Path, cli: Cli) -> None:
    done = cli("-w", str(linked), "validate")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    for rel in (LINK, LINK_TO_DIRTY):
        line = next(ln for ln in done.stdout.splitlines() if ln.startswith(f"{rel}:"))
        assert "error: left out: symlink" in line
    assert SECRET_WORD not in done.stdout
    named = cli("-w", str(linked), "validate", LINK_TO_DIRTY)
    assert named.returncode == 1 and "left out: symlink" in named.stdout


def test_repair_never_turns_a_link_into_a_file(linked: Path, cli: Cli) -> None:
    before = {"config": (linked / ".git" / "config").read_bytes()}
    done = cli("-w", str(linked), "repair")
    assert "Traceback" not in done.stderr
    links_intact(linked, before)
    assert "status： " not in (linked / DIRTY).read_text(encoding="utf-8"), "the real file is repaired"
    assert "left out: symlink" in done.stdout + done.stderr


def test_commit_leaves_links_out_with_the_reason_and_a_person_can_commit_one(linked: Path, cli: Cli) -> None:
    before = {"config": (linked / ".git" / "config").read_bytes()}
    done = cli("-w", str(linked), "commit", "--json")
    assert done.returncode in (0, 1), done.stderr
    result = json.loads(done.stdout)
    assert result["skipped"][LINK].startswith("symlink") and result["skipped"][LINK_TO_DIRTY].startswith("symlink")
    files = head_files(linked)
    assert PLAIN in files and LINK not in files and LINK_TO_DIRTY not in files
    assert SECRET_WORD not in git(linked, "log", "-p", "--all")
    assert f"- {LINK}: symlink" in git(linked, "log", "-1", "--format=%B")
    links_intact(linked, before)
    git(linked, "add", LINK_TO_DIRTY)
    git(linked, "commit", "-q", "-m", "a link, by hand")
    assert git(linked, "ls-tree", "HEAD", LINK_TO_DIRTY).startswith("120000")
    again = cli("-w", str(linked), "commit", "--json")
    assert again.returncode in (0, 1) and LINK_TO_DIRTY in head_files(linked)


def test_the_search_index_never_reads_through_a_link(linked: Path, cli: Cli) -> None:
    assert cli("-w", str(linked), "index", "rebuild", "--search").returncode in (0, 1)
    done = cli("-w", str(linked), "search", SECRET_WORD, "--json")
    assert "Traceback" not in done.stderr
    paths = {hit["path"] for hit in json.loads(done.stdout)}
    assert DIRTY in paths and LINK not in paths and LINK_TO_DIRTY not in paths


def test_export_refuses_a_link_and_never_writes_into_git(linked: Path, tmp_path: Path, cli: Cli) -> None:
    out = tmp_path / "out"
    done = cli("export", str(linked / LINK_TO_DIRTY), "--to", "html", "--out", str(out))
    assert done.returncode == 2 and "left out: symlink" in done.stderr and not out.exists()
    into_git = cli("export", str(linked / PLAIN), "--to", "html", "--out", str(linked / ".git" / "hooks"))
    assert into_git.returncode == 2 and ".git" in into_git.stderr
    assert not list((linked / ".git" / "hooks").glob("*.html"))
    out.mkdir()
    (out / f"{Path(PLAIN).stem}.html").symlink_to(linked / ".git" / "config")
    over_link = cli("export", str(linked / PLAIN), "--to", "html", "--out", str(out))
    assert over_link.returncode == 2 and "symlink" in over_link.stderr
    assert SECRET_WORD in (linked / ".git" / "config").read_text(encoding="utf-8")
