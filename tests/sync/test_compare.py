"""A synced API workspace reads the remote in one request: GitHub's comparison with the last remote commit it saw
(the head and every file changed), patches applied here, the tree rebuilt and checked; any doubt falls back to
reading the ref and listing the tree."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import requests
from test_github import api_sync, assert_converged, started, write_session

from helpers.ghserver import Canned, GitHubServer
from helpers.sync import SpecCheck, git, open_ws
from kbsync.sync.syncer import sync


def moved_by_git(g: Path) -> None:
    """The git machine edits a session, renames a file, deletes one and adds one, and pushes."""
    write_session(g, 1, "edited on the git machine")
    git(g, "mv", "memory/facts.md", "memory/facts-moved.md")
    (g / "memory" / "entities").mkdir(parents=True, exist_ok=True)
    (g / "memory" / "entities" / "alpha.md").write_text("# Alpha\n- owner: 王五\n", encoding="utf-8")
    git(g, "add", "-A")
    assert sync(open_ws(g)).pushed


def routes_since(server: GitHubServer, start: int) -> list[tuple[str, str]]:
    return [(r.method, r.route) for r in server.log[start:]]


def test_a_synced_workspace_takes_the_remote_in_one_request(tmp_path: Path, server: GitHubServer) -> None:
    a, g = started(tmp_path, server)
    write_session(a, 1, "first version")
    api_sync(a, server)
    sync(open_ws(g))
    moved_by_git(g)
    start = len(server.log)
    result = api_sync(a, server)
    assert result.exit_code == 0 and not result.pushed
    assert routes_since(server, start) == [("GET", "compare")]  # no ref, no listing, no blob: patches applied
    assert_converged(server, [a, g], ["edited on the git machine", "owner: 王五"])
    assert (a / "memory" / "facts-moved.md").exists() and not (a / "memory" / "facts.md").exists()


def test_an_unmoved_remote_costs_one_request(tmp_path: Path, server: GitHubServer) -> None:
    a, _g = started(tmp_path, server)
    start = len(server.log)
    assert api_sync(a, server).exit_code == 0
    assert routes_since(server, start) == [("GET", "compare")]


def real_comparison(server: GitHubServer, a: Path) -> dict[str, Any]:
    base = open_ws(a).state_dir.joinpath("sync.json").read_text(encoding="utf-8").split('"remote": "')[1][:40]
    reply = requests.get(server.api(f"compare/{base}...main"), headers={"Authorization": f"Bearer {server.token}"},
                         timeout=10)
    body: dict[str, Any] = reply.json()
    server.log.pop()
    return body


def test_a_patch_that_does_not_give_the_blob_is_replaced_by_the_blob(tmp_path: Path, server: GitHubServer) -> None:
    a, g = started(tmp_path, server)
    rel = write_session(g, 2, "the true text")
    assert sync(open_ws(g)).pushed
    body = real_comparison(server, a)
    for entry in body["files"]:
        entry["patch"] = entry["patch"].replace("the true text", "a forged text")
    server.faults.canned.append(Canned("GET", "compare", 200, body))
    start = len(server.log)
    assert api_sync(a, server).exit_code == 0
    assert ("GET", "blobs") in routes_since(server, start)
    assert_converged(server, [a, g], ["the true text"])
    assert "the true text" in (a / rel).read_text(encoding="utf-8")


def test_files_that_do_not_rebuild_the_tree_fall_back_to_the_listing(tmp_path: Path, server: GitHubServer) -> None:
    a, g = started(tmp_path, server)
    moved_by_git(g)
    body = real_comparison(server, a)
    body["files"] = body["files"][1:]  # one change left out
    server.faults.canned.append(Canned("GET", "compare", 200, body))
    start = len(server.log)
    assert api_sync(a, server).exit_code == 0
    assert routes_since(server, start)[:2] == [("GET", "compare"), ("GET", "trees")]
    assert ("GET", "ref") not in routes_since(server, start)  # the comparison named the head
    assert_converged(server, [a, g], ["owner: 王五"])


@pytest.mark.parametrize("answer", [
    (404, {"message": "Not Found"}),
    (200, {"status": "ahead", "commits": "not a list"}),
    (200, {"status": "diverged", "commits": [], "total_commits": 0}),
])
def test_a_comparison_that_cannot_be_used_falls_back_to_the_ref(
        tmp_path: Path, server: GitHubServer, answer: tuple[int, dict[str, Any]]) -> None:
    a, g = started(tmp_path, server)
    moved_by_git(g)
    server.faults.canned.append(Canned("GET", "compare", *answer))
    start = len(server.log)
    assert api_sync(a, server).exit_code == 0
    assert routes_since(server, start)[:3] == [("GET", "compare"), ("GET", "ref"), ("GET", "trees")]
    assert_converged(server, [a, g], ["owner: 王五"])
    assert isinstance(server.check, SpecCheck)
    server.check.errors[:] = [e for e in server.check.errors if not e.startswith("GET compare 200")]  # on purpose
