"""A hostile remote: trees no `git add` would make, pushed to the remote, then `kbsync sync` (git mode and
GitHub API mode). Each is refused whole with one line naming the entry and the commit; nothing of it is
written, nothing runs, and nothing outside the workspace's content changes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path
from typing import Iterator

import pytest

from helpers.cli import Cli
from helpers.ghserver import Canned, GitHubServer
from helpers.hostile import SUBMODULE_COMMIT, Additions, disk_state, file_add, push_hostile
from helpers.sync import git, make_bare, open_ws, workspace
from kbsync.sync.syncer import sync

TOKEN_ENV = "KBSYNC_TEST_TOKEN"
MARKER = "ran-a-command"


def fsmonitor_config(marker: Path) -> bytes:
    return f'[core]\n\tfsmonitor = "touch {marker}; false"\n'.encode()


def command_source(marker: Path) -> bytes:
    return (f'[[search.sources]]\nname = "evil"\nkind = "command"\n'
            f'command = ["sh", "-c", "touch {marker}"]\n').encode()


# (id, path as the tree spells it, mode, what the one line must name)
SHAPES = [
    ("dotgit-config", ".git/config", "100644", "'.git/config'"),
    ("dotdot", "../x", "100644", "'../x'"),
    ("nested-dotdot", "a/../../x", "100644", "'a/../../x'"),
    ("upper-dotgit", ".GIT/hooks/x", "100644", "'.GIT/hooks/x'"),
    ("ntfs-trailing-dot", ".git./x", "100644", "'.git./x'"),
    ("ntfs-trailing-space", ".git /x", "100644", "'.git /x'"),
    ("ntfs-short-name", "git~1/x", "100644", "'git~1/x'"),
    ("hfs-ignorable", ".g\u200cit/x", "100644", "'.g\\u200cit/x'"),
    ("kbsync-state", ".kbsync/status.json", "100644", "'.kbsync/status.json'"),
    ("upper-kbsync", ".KBSYNC/config.toml", "100644", "'.KBSYNC/config.toml'"),
    ("symlink", "sessions/link.md", "120000", "'sessions/link.md' is a symbolic link"),
    ("submodule", "vendor", "160000", "'vendor' is a submodule"),
]


def additions(path: str, mode: str, marker: Path) -> Additions:
    if mode == "160000":
        return file_add(path, SUBMODULE_COMMIT.encode(), mode)
    if mode == "120000":
        return file_add(path, b"../../.git/config", mode)
    return file_add(path, fsmonitor_config(marker) if path.lower().endswith("config") else b"pwned\n", mode)


def assert_refused(done: subprocess.CompletedProcess[str], commit: str, names: str) -> None:
    assert done.returncode == 3, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    lines = [ln for ln in done.stderr.splitlines() if "refused" in ln]
    assert len(lines) == 1 and done.stderr.rstrip().endswith(lines[0]), done.stderr
    assert commit[:12] in lines[0] and names in lines[0] and "nothing of it was written" in lines[0], lines[0]


def assert_untouched(tmp: Path, root: Path, before: tuple[dict[str, bytes], list[Path]], marker: Path) -> None:
    """The workspace as it was (git's config and hooks included), the folder around it too, and no command ran."""
    assert disk_state(root) == before[0]
    assert sorted(tmp.iterdir()) == before[1]
    assert not marker.exists(), "a command ran"


def state(tmp: Path, root: Path) -> tuple[dict[str, bytes], list[Path]]:
    return disk_state(root), sorted(tmp.iterdir())


# ---- git mode ------------------------------------------------------------------------------------

@pytest.fixture
def git_ws(tmp_path: Path) -> tuple[Path, Path]:
    bare = make_bare(tmp_path / "remote.git")
    root = workspace(tmp_path, "a", bare)
    sync(open_ws(root))
    return root, bare


@pytest.mark.parametrize(("path", "mode", "names"), [s[1:] for s in SHAPES], ids=[s[0] for s in SHAPES])
def test_git_mode_refuses_the_tree_whole(tmp_path: Path, git_ws: tuple[Path, Path], cli: Cli,
                                         path: str, mode: str, names: str) -> None:
    root, bare = git_ws
    marker = tmp_path / MARKER
    commit = push_hostile(bare, additions(path, mode, marker) | file_add("memory/harmless.md", b"# ok\n"))
    before, head = state(tmp_path, root), git(root, "rev-parse", "HEAD")
    done = cli("-w", str(root), "sync")
    assert_refused(done, commit, names)
    assert git(root, "rev-parse", "HEAD") == head
    assert not (root / "memory" / "harmless.md").exists()  # refused whole: not even the harmless file
    assert_untouched(tmp_path, root, before, marker)
    git(root, "status")  # git itself runs in the workspace: the fsmonitor hook was never written
    assert not marker.exists()


def test_git_mode_refuses_a_path_through_a_local_symlink(tmp_path: Path, git_ws: tuple[Path, Path], cli: Cli) -> None:
    root, bare = git_ws
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "notes").symlink_to(outside)
    commit = push_hostile(bare, file_add("notes/x.md", b"# through the link\n"))
    before = disk_state(root)
    done = cli("-w", str(root), "sync")
    assert_refused(done, commit, "'notes/x.md' passes through notes, a symlink on this machine")
    assert list(outside.iterdir()) == []
    assert disk_state(root) == before


def test_config_injection_never_reaches_the_config_and_search_runs_nothing(
        tmp_path: Path, git_ws: tuple[Path, Path], cli: Cli) -> None:
    root, bare = git_ws
    marker = tmp_path / MARKER
    config = root / ".kbsync" / "config.toml"
    mine = config.read_bytes()
    commit = push_hostile(bare, file_add(".kbsync/config.toml", mine + b"\n" + command_source(marker)))
    assert_refused(cli("-w", str(root), "sync"), commit, "'.kbsync/config.toml' writes into kbsync's own folder")
    assert config.read_bytes() == mine
    searched = cli("-w", str(root), "search", "合同")
    assert searched.returncode in (0, 1) and "Traceback" not in searched.stderr
    assert not marker.exists()


def test_a_refused_tree_stays_refused_and_a_clean_one_then_syncs(
        tmp_path: Path, git_ws: tuple[Path, Path], cli: Cli) -> None:
    root, bare = git_ws
    bad = push_hostile(bare, file_add(".git/hooks/post-checkout", b"#!/bin/sh\ntouch x\n"))
    assert_refused(cli("-w", str(root), "sync"), bad, "'.git/hooks/post-checkout'")
    assert_refused(cli("-w", str(root), "sync"), bad, "'.git/hooks/post-checkout'")
    git(bare, "update-ref", "refs/heads/main", f"{bad}^")
    push_hostile(bare, file_add("memory/fine.md", b"# fine\n"))
    done = cli("-w", str(root), "sync")
    assert done.returncode == 0, done.stderr
    assert (root / "memory" / "fine.md").read_bytes() == b"# fine\n"
    assert not (root / ".git" / "hooks" / "post-checkout").exists()


# ---- GitHub API mode ---------------------------------------------------------------------------

@pytest.fixture
def server(tmp_path: Path) -> Iterator[GitHubServer]:
    with GitHubServer(make_bare(tmp_path / "remote.git")) as srv:
        yield srv


@pytest.fixture
def api_root(tmp_path: Path, server: GitHubServer, monkeypatch: pytest.MonkeyPatch) -> Path:
    config = (f'[sync]\nmode = "github-api"\n\n[github]\napi_url = "{server.url}"\n'
              f'repository = "{server.repository}"\ntoken_env = "{TOKEN_ENV}"\n')
    root = workspace(tmp_path, "a", server.repo.path, config)
    monkeypatch.setenv(TOKEN_ENV, server.token)
    sync(open_ws(root))
    sync(open_ws(root))  # the first sync seeded the empty repository with one file; this one sends the rest
    return root


@pytest.mark.parametrize(("path", "mode", "names"), [s[1:] for s in SHAPES], ids=[s[0] for s in SHAPES])
def test_api_mode_refuses_the_tree_whole_before_fetching_a_blob(
        tmp_path: Path, server: GitHubServer, api_root: Path, cli: Cli, path: str, mode: str, names: str) -> None:
    marker = tmp_path / MARKER
    commit = push_hostile(server.repo.path, additions(path, mode, marker) | file_add("memory/harmless.md", b"# ok\n"))
    before, head = state(tmp_path, api_root), git(api_root, "rev-parse", "HEAD")
    server.log.clear()
    done = cli("-w", str(api_root), "sync", env={TOKEN_ENV: server.token})
    assert_refused(done, commit, names)
    assert server.requests_sent("GET", "blobs") == [] and server.requests_sent("PATCH") == []
    assert git(api_root, "rev-parse", "HEAD") == head
    assert_untouched(tmp_path, api_root, before, marker)


@pytest.mark.parametrize("path", ["/etc/kbsync-x", "a//b.md", "./a.md", "a/./b.md", "memory/"])
def test_api_mode_refuses_paths_a_git_tree_cannot_even_hold(
        tmp_path: Path, server: GitHubServer, api_root: Path, cli: Cli, path: str) -> None:
    commit = push_hostile(server.repo.path, file_add("memory/harmless.md", b"# ok\n"))
    tree = git(server.repo.path, "rev-parse", f"{commit}^{{tree}}")
    listing = server.tree_json(tree, recursive=True)
    blob = next(e for e in listing["tree"] if e["type"] == "blob")
    listing["tree"].append({**blob, "path": path})
    server.faults.canned.append(Canned("GET", "compare", 404, {"message": "Not Found"}))  # so the tree is listed
    server.faults.canned.append(Canned("GET", "trees", 200, listing))
    before = disk_state(api_root)
    done = cli("-w", str(api_root), "sync", env={TOKEN_ENV: server.token})
    assert_refused(done, commit, repr(path))
    assert disk_state(api_root) == before
    assert not Path("/etc/kbsync-x").exists()


# ---- files named like this machine's conflict copies -------------------------------------------

NOTES = "artifacts/notes.md"
PLANTED = b"# planted by the remote\n"


def planted_copies(root: Path, relpath: str, seconds: int = 90) -> Additions:
    """Files at every name this machine's copy of `relpath` could take from a few seconds ago to `seconds` ahead."""
    from kbsync.core import protocol
    from kbsync.store import fsio
    from kbsync.store.machine import machine_id

    mid, now = machine_id(open_ws(root)), int(time.time())
    names = [protocol.conflict_name(relpath, fsio.utc_stamp(t), m)
             for t in range(now - 5, now + seconds) for m in (mid, *(f"{mid}-{n}" for n in range(1, 4)))]
    return {tuple(name.split("/")): ("100644", PLANTED) for name in names}


def set_quiet(root: Path, quiet_ms: int) -> None:
    config = root / ".kbsync" / "config.toml"
    text = config.read_text(encoding="utf-8")
    config.write_text(re.sub(r"quiet_ms = \d+", f"quiet_ms = {quiet_ms}", text), encoding="utf-8")


def assert_copy_kept(root: Path, done: subprocess.CompletedProcess[str], mine: bytes, relpath: str = NOTES) -> str:
    """The sync reports one conflict; its copy holds `mine`, errors.md names it, and the planted files are the
    remote's, as the remote wrote them. The copy's path."""
    from kbsync.core import protocol

    assert done.returncode == 1 and "Traceback" not in done.stderr, (done.stdout, done.stderr)
    copies = [p.relative_to(root).as_posix() for p in (root / relpath).parent.iterdir()
              if protocol.is_conflict_copy(p.name) and p.read_bytes() != PLANTED]
    assert len(copies) == 1, copies
    assert (root / copies[0]).read_bytes() == mine
    lines = (root / "logs" / "errors.md").read_text(encoding="utf-8").splitlines()
    last = [ln for ln in lines if "conflict: " in ln][-1]
    assert f"vs {copies[0]} (" in last, last
    said = [ln for ln in lines if "named like conflict copies of this machine" in ln]
    assert len(said) == 1 and "and 379 more" in said[0], said
    planted = [p for p in (root / relpath).parent.iterdir() if p.read_bytes() == PLANTED]
    assert len(planted) == 95 * 4, len(planted)
    assert copies[0] in done.stdout + done.stderr
    return copies[0]


def test_git_mode_a_copy_never_lands_on_a_name_the_remote_writes(
        tmp_path: Path, git_ws: tuple[Path, Path], cli: Cli) -> None:
    """A committed local change and a remote change to the same file: this machine's version goes to a copy whose
    name the remote's tree does not hold, though the remote ships files at every name the copy could predict."""
    root, bare = git_ws
    (root / NOTES).write_text("# base\n", encoding="utf-8")
    assert cli("-w", str(root), "sync").returncode == 0
    (root / NOTES).write_text("# mine\n", encoding="utf-8")
    assert cli("-w", str(root), "commit").returncode == 0
    push_hostile(bare, file_add(NOTES, b"# theirs\n") | planted_copies(root, NOTES))
    done = cli("-w", str(root), "sync")
    copy = assert_copy_kept(root, done, b"# mine\n")
    assert (root / NOTES).read_bytes() == b"# theirs\n"
    assert git(root, "show", f"HEAD:{copy}") == "# mine"  # committed with the integration, then pushed
    assert git(bare, "show", f"main:{copy}") == "# mine"


def test_git_mode_an_uncommitted_edit_survives_a_remote_planting_its_copy_names(
        tmp_path: Path, git_ws: tuple[Path, Path], cli: Cli) -> None:
    """An edit not yet committed (still inside the quiet time) and a remote change to the same file: the edit is
    saved as a copy the remote's writes cannot reach, and the sync reports it."""
    root, bare = git_ws
    (root / NOTES).write_text("# base\n", encoding="utf-8")
    assert cli("-w", str(root), "sync").returncode == 0
    set_quiet(root, 600_000)
    push_hostile(bare, file_add(NOTES, b"# theirs\n") | planted_copies(root, NOTES))
    (root / NOTES).write_text("# my uncommitted edit\n", encoding="utf-8")
    done = cli("-w", str(root), "sync")
    assert_copy_kept(root, done, b"# my uncommitted edit\n")
    assert (root / NOTES).read_bytes() == b"# theirs\n"


def test_api_mode_a_copy_never_lands_on_a_name_the_remote_writes(
        tmp_path: Path, server: GitHubServer, api_root: Path, cli: Cli) -> None:
    env = {TOKEN_ENV: server.token}
    (api_root / NOTES).write_text("# base\n", encoding="utf-8")
    assert cli("-w", str(api_root), "sync", env=env).returncode == 0
    (api_root / NOTES).write_text("# mine\n", encoding="utf-8")
    assert cli("-w", str(api_root), "commit").returncode == 0
    push_hostile(server.repo.path, file_add(NOTES, b"# theirs\n") | planted_copies(api_root, NOTES))
    copy = assert_copy_kept(api_root, cli("-w", str(api_root), "sync", env=env), b"# mine\n")
    assert git(server.repo.path, "show", f"main:{copy}") == "# mine"


def test_a_remote_file_named_like_an_uncommitted_copy_of_this_machine_takes_nothing_of_it(
        tmp_path: Path, git_ws: tuple[Path, Path], cli: Cli) -> None:
    """A copy this machine saved and has not committed yet, and a remote that ships a file at that very name: the
    remote's file is an ordinary file written at its path, and this machine's copy is kept under another name."""
    from kbsync.store.conflicts import save_conflict_copy

    root, bare = git_ws
    set_quiet(root, 600_000)
    ours = save_conflict_copy(open_ws(root), NOTES, b"# our copy\n", other_desc="test")
    push_hostile(bare, file_add(ours, PLANTED))
    done = cli("-w", str(root), "sync")
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert (root / ours).read_bytes() == PLANTED
    kept = [p for p in (root / "artifacts").iterdir() if p.read_bytes() == b"# our copy\n"]
    assert len(kept) == 1 and kept[0].name != Path(ours).name


# ---- the board: a person's two drafts under one key ------------------------------------------

def test_two_uncommitted_drafts_with_one_key_both_survive_a_remote_change_to_another_entry(
        tmp_path: Path, git_ws: tuple[Path, Path], cli: Cli) -> None:
    from helpers.sync import board_entry, upsert_board
    from kbsync.core import board

    root, bare = git_ws
    upsert_board(root, "甲", "one")
    assert cli("-w", str(root), "sync").returncode == 0
    set_quiet(root, 600_000)
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(bare), str(other))
    upsert_board(other, "甲", "one, edited on the remote")
    git(other, "-c", "user.name=o", "-c", "user.email=o@localhost", "commit", "-qam", "remote edit")
    git(other, "push", "-q", "origin", "HEAD:main")
    draft = board.render_entry(board_entry("乙", "first draft")).rstrip("\n")
    second = board.render_entry(board_entry("乙", "second draft")).rstrip("\n")
    path = root / "LEARNING_BOARD.md"
    path.write_text(path.read_text(encoding="utf-8").rstrip("\n") + f"\n\n{draft}\n\n{second}\n", encoding="utf-8")
    done = cli("-w", str(root), "sync")
    assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr
    text = path.read_text(encoding="utf-8")
    assert "first draft" in text and "second draft" in text
    assert "one, edited on the remote" in text


# ---- a file too large to hold: sizes read before content -------------------------------------

SMALL_LIMITS = "[sync]\nmax_file_mb = 0.01\nmax_artifact_mb = 0.05\n"  # 10,485 and 52,428 bytes


def with_limits(root: Path, limits: str) -> None:
    """The workspace's config with `limits` in its [sync] table (added to one that is there, replacing them)."""
    config = root / ".kbsync" / "config.toml"
    text = re.sub(r"(?m)^max_(file|artifact)_mb = .*\n", "", config.read_text(encoding="utf-8"))
    body = limits.removeprefix("[sync]\n")
    config.write_text(text.replace("[sync]\n", "[sync]\n" + body) if "[sync]\n" in text else text + limits,
                      encoding="utf-8")


def assert_too_large(done: subprocess.CompletedProcess[str], relpath: str, key: str) -> None:
    assert done.returncode == 3, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    line = done.stderr.strip().splitlines()[-1]
    assert f"its file {relpath!r} holds" in line and key in line and "nothing of it was written" in line, line


@pytest.mark.parametrize(("relpath", "size", "key"), [
    ("memory/big.md", 20_000, "[sync] max_file_mb"),
    ("artifacts/big.bin", 60_000, "[sync] max_artifact_mb"),
])
def test_git_mode_a_file_over_its_limit_refuses_the_commit_before_any_content_is_read(
        tmp_path: Path, git_ws: tuple[Path, Path], cli: Cli, relpath: str, size: int, key: str) -> None:
    root, bare = git_ws
    with_limits(root, SMALL_LIMITS)
    push_hostile(bare, file_add(relpath, bytes(size)) | file_add("memory/harmless.md", b"# ok\n")
                 | file_add("artifacts/fits.bin", bytes(40_000)))
    before, head = disk_state(root), git(root, "rev-parse", "HEAD")
    done = cli("-w", str(root), "sync")
    assert_too_large(done, relpath, key)
    assert f"holds {size:,} bytes" in done.stderr
    assert git(root, "rev-parse", "HEAD") == head and disk_state(root) == before
    assert_too_large(cli("-w", str(root), "sync"), relpath, key)  # the same until the file is gone
    with_limits(root, "[sync]\nmax_file_mb = 1.0\nmax_artifact_mb = 1.0\n")  # or the limit raised
    assert cli("-w", str(root), "sync").returncode == 0
    assert (root / relpath).read_bytes() == bytes(size)


FETCH_PEAK = r"""
import resource, sys
from pathlib import Path
from kbsync.git import repo
repo.fetch(Path(sys.argv[1]), "origin", "main", timeout_s=60)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)
"""


def test_git_mode_fetch_holds_no_large_blob_whole(tmp_path: Path, git_ws: tuple[Path, Path]) -> None:
    """git's own fetch streams a blob over 1 MB to the pack (core.bigFileThreshold), so no process of the sync
    holds a large file whole, even one over every limit (the remote's side streams too, as a server's would)."""
    import sys

    root, bare = git_ws
    git(bare, "config", "core.bigFileThreshold", "1m")
    push_hostile(bare, file_add("artifacts/zeros.bin", bytes(96 * 1024 * 1024)))
    done = subprocess.run([sys.executable, "-c", FETCH_PEAK, str(root)], capture_output=True, text=True, check=True)
    assert int(done.stdout) < 64, f"git's fetch peaked at {done.stdout.strip()} MB for a 96 MB blob"


def test_api_mode_a_file_over_its_limit_is_refused_from_the_listing_before_any_blob(
        tmp_path: Path, server: GitHubServer, api_root: Path, cli: Cli) -> None:
    with_limits(api_root, SMALL_LIMITS)
    commit = push_hostile(server.repo.path, file_add("artifacts/big.bin", bytes(60_000)))
    server.faults.canned.append(Canned("GET", "compare", 404, {"message": "Not Found"}))  # so the tree is listed
    server.log.clear()
    before = disk_state(api_root)
    done = cli("-w", str(api_root), "sync", env={TOKEN_ENV: server.token})
    assert_too_large(done, "artifacts/big.bin", "[sync] max_artifact_mb")
    assert commit[:12] in done.stderr and "holds 60,000 bytes" in done.stderr
    assert server.requests_sent("GET", "blobs") == [] and server.requests_sent("PATCH") == []
    assert disk_state(api_root) == before


def test_api_mode_a_blob_read_stops_at_the_limit_whatever_the_listing_says(
        tmp_path: Path, server: GitHubServer, api_root: Path, cli: Cli) -> None:
    """Where no size is known before the read (GitHub's comparison names no sizes), or a listing understates one,
    the blob's answer is read in pieces and the read stops past the limit."""
    with_limits(api_root, SMALL_LIMITS)
    commit = push_hostile(server.repo.path, file_add("memory/big.md", b"# big\n" + b"x" * 300_000))
    before = disk_state(api_root)
    done = cli("-w", str(api_root), "sync", env={TOKEN_ENV: server.token})  # the comparison, then the blob
    assert_too_large(done, "memory/big.md", "[sync] max_file_mb")
    assert commit[:12] in done.stderr and "holds more than the limit of 10,485 bytes" in done.stderr
    assert disk_state(api_root) == before
    tree = git(server.repo.path, "rev-parse", f"{commit}^{{tree}}")
    listing = server.tree_json(tree, recursive=True)
    for entry in listing["tree"]:
        if entry.get("path") == "memory/big.md":
            entry["size"] = 10  # a listing that lies
    server.faults.canned.append(Canned("GET", "compare", 404, {"message": "Not Found"}))
    server.faults.canned.append(Canned("GET", "trees", 200, listing))
    assert_too_large(cli("-w", str(api_root), "sync", env={TOKEN_ENV: server.token}), "memory/big.md",
                     "[sync] max_file_mb")
    assert disk_state(api_root) == before


# ---- a remote .gitignore or .gitattributes that would hide or misreport protocol files ----------------

IGNORE_ALL = b".kbsync/\n*.tmp\n*.lock\nsessions/\nmemory/entities/\ncandidates/\n"
ENCODED = b"index.md merge=union\nlogs/*.md merge=union\nartifacts/*.md working-tree-encoding=UTF-16LE\n"


def test_a_remote_gitignore_never_keeps_protocol_files_out_of_the_daemons_commits(
        tmp_path: Path, git_ws: tuple[Path, Path], cli: Cli) -> None:
    """A collaborator pushes a .gitignore covering the protocol's folders and a .gitattributes that re-encodes
    artifacts: the real daemon still commits and pushes a new session, an entity file and an artifact, `status`
    names each protocol file git would ignore (and the rule), and nothing stays 'uncommitted' for ever."""
    from helpers.daemon import DaemonProcess, head_files, session_relpath, session_text, wait_for, write

    root, bare = git_ws
    push_hostile(bare, file_add(".gitignore", IGNORE_ALL) | file_add(".gitattributes", ENCODED))
    assert cli("-w", str(root), "sync").returncode == 0
    assert (root / ".gitignore").read_bytes() == IGNORE_ALL
    (root / ".kbsync" / "config.toml").write_text('[daemon]\nquiet_ms = 100\n[sync]\nevery = "1s"\n', encoding="utf-8")
    session = session_relpath(7)
    entity, artifact = "memory/entities/acme.md", "artifacts/notes.md"
    d = DaemonProcess(root)
    try:
        write(root, session, session_text(session, status="closed"))
        write(root, entity, "# Acme\n\n- 行业: 制造\n")
        write(root, artifact, "# notes\n")  # UTF-8 bytes, which git would read as UTF-16
        wait_for(lambda: {session, entity, artifact} <= head_files(root), timeout=30)
        wait_for(lambda: session in git(bare, "-c", "core.quotePath=false", "ls-tree", "-r", "--name-only", "main"), timeout=30)
    finally:
        assert d.stop(timeout=15) == 0
    pushed = git(bare, "-c", "core.quotePath=false", "ls-tree", "-r", "--name-only", "main")
    assert entity in pushed and artifact in pushed
    assert git(bare, "show", f"main:{artifact}") == "# notes"  # the bytes, not git's re-encoding of them
    os_touch(root / artifact)  # git now looks at its content through the attribute: "modified"
    assert artifact in git(root, "status", "--porcelain")
    shown = cli("-w", str(root), "status", "--json")
    report = json.loads(shown.stdout)
    assert report["uncommitted"] == 0, report
    ignored = {w["path"]: w["reason"] for w in report["waiting"] if w["kind"] == "git-ignored"}
    assert set(ignored) == {session, entity}, ignored
    assert ".gitignore:4: sessions/" in ignored[session] and ".gitignore:5: memory/entities/" in ignored[entity]
    text = cli("-w", str(root), "status")
    assert text.returncode == 1 and f"{session}: git would ignore it (.gitignore:4: sessions/)" in text.stdout


def os_touch(path: Path) -> None:
    later = time.time() + 5
    os.utime(path, (later, later))


def test_protocol_files_git_ignores_are_committed_and_others_are_not(tmp_path: Path, git_ws: tuple[Path, Path],
                                                                       cli: Cli) -> None:
    """Only the protocol's files pass .gitignore: a file outside them that it covers stays out, as git has it."""
    root, _bare = git_ws
    (root / ".gitignore").write_bytes(IGNORE_ALL + b"*.bin\nnotes/\n")
    candidate = "candidates/2025-06-11-notes.md"
    (root / "candidates").mkdir(exist_ok=True)
    (root / candidate).write_text("# 候选\n", encoding="utf-8")
    (root / "notes").mkdir()
    (root / "notes" / "private.md").write_text("# mine only\n", encoding="utf-8")
    (root / "artifacts" / "blob.bin").write_bytes(b"\x00\x01")
    assert cli("-w", str(root), "commit").returncode == 0
    committed = git(root, "ls-tree", "-r", "--name-only", "HEAD")
    assert candidate in committed
    assert "notes/private.md" not in committed and "artifacts/blob.bin" not in committed


def test_api_mode_every_answer_is_read_within_a_bound(tmp_path: Path, server: GitHubServer, api_root: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Not only blobs: a listing or a comparison larger than the bound for any answer stops the read there."""
    from kbsync.errors import RemoteError
    from kbsync.sync.transports import githubclient

    push_hostile(server.repo.path, {("memory", f"n{i}.md"): ("100644", b"# n\n" * 50) for i in range(40)})
    monkeypatch.setattr(githubclient, "ANSWER_MAX", 4000)
    before = disk_state(api_root)
    too_large = r"GitHub.s answer to compare/\S+ (ran past 4,000 bytes|holds [0-9,]+ bytes, over 4,000)"
    with pytest.raises(RemoteError, match=too_large):
        sync(open_ws(api_root))
    assert disk_state(api_root) == before
