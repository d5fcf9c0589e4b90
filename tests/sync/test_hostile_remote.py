"""A hostile remote: trees no `git add` would make, pushed to the remote, then `kbsync sync` (git mode and
GitHub API mode). Each is refused whole with one line naming the entry and the commit; nothing of it is
written, nothing runs, and nothing outside the workspace's content changes."""

from __future__ import annotations

import subprocess
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
