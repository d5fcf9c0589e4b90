"""Machines that sync one repository: no false conflicts, no nested copies, facts merged, conflicts settled."""

from __future__ import annotations

from pathlib import Path

import pytest
import requests

from helpers.cli import Cli
from helpers.ghserver import GitHubServer
from helpers.sync import git, make_bare, open_ws, tree_files, workspace
from kbsync.app import memory
from kbsync.core import protocol
from kbsync.store.machine import machine_id
from kbsync.sync.state import known_remote
from kbsync.sync.syncer import backoff_s, sync
from kbsync.sync.transports.github import ApiTransport
from kbsync.sync.transports.githubclient import GitHubApi


def api_sync(root: Path, srv: GitHubServer) -> object:
    api = GitHubApi(requests.Session(), api_url=srv.url, repository=srv.repository, token=srv.token, timeout_s=10)
    transport = ApiTransport(root, api, "main", ("kbsync", "kbsync@localhost"), known_remote(open_ws(root)))
    return sync(open_ws(root), transport, sleep=lambda _s: None)


def test_a_git_clone_synced_over_the_api_keeps_its_own_committed_edits(tmp_path: Path, server: GitHubServer) -> None:
    """The first API sync of a git clone takes the merge base from the local history: no false conflicts."""
    g = workspace(tmp_path, "g", server.repo.path)
    memory.set_fact(open_ws(g), "origin", "git")
    assert sync(open_ws(g)).pushed
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(server.repo.path), str(clone))
    git(clone, "remote", "remove", "origin")
    (clone / "artifacts").mkdir(exist_ok=True)
    (clone / "artifacts" / "mine.md").write_text("committed on the clone\n", encoding="utf-8")
    (clone / "memory" / "facts.md").write_text("# 长期事实\n- origin: clone\n", encoding="utf-8")
    git(clone, "add", "-A")
    git(clone, "commit", "-qm", "edits on the clone")
    memory.set_fact(open_ws(g), "other", "from git")  # the remote moves on meanwhile
    assert sync(open_ws(g)).pushed
    result = api_sync(clone, server)
    assert result.conflicts == [] and result.pushed  # type: ignore[attr-defined]
    files = tree_files(server.repo.path, "main")
    assert files["artifacts/mine.md"] == b"committed on the clone\n"
    assert b"- origin: clone\n" in files["memory/facts.md"] and b"- other: from git\n" in files["memory/facts.md"]


def test_an_unrelated_history_still_falls_back_to_both_sides_changed(tmp_path: Path, server: GitHubServer) -> None:
    g = workspace(tmp_path, "g", server.repo.path)
    (g / "artifacts" / "x.md").write_text("git side\n", encoding="utf-8")
    assert sync(open_ws(g)).pushed
    a = workspace(tmp_path, "a", server.repo.path)
    (a / "artifacts" / "x.md").write_text("api side\n", encoding="utf-8")
    result = api_sync(a, server)
    assert [protocol.original_of(c) for c in result.conflicts] == ["artifacts/x.md"]  # type: ignore[attr-defined]
    assert b"added on both sides" in (a / "logs" / "errors.md").read_bytes()


def test_facts_set_on_three_machines_are_all_kept_without_copies(tmp_path: Path) -> None:
    bare = make_bare(tmp_path / "remote.git")
    roots = [workspace(tmp_path, f"m{i}", bare) for i in range(3)]

    def everyone_syncs() -> None:
        for root in roots + roots[:2]:
            assert sync(open_ws(root)).conflicts == []

    everyone_syncs()
    for i, root in enumerate(roots):
        memory.set_fact(open_ws(root), f"fact {i}", f"value {i}")
    everyone_syncs()
    memory.forget_fact(open_ws(roots[2]), "fact 1")  # deleted on one side, untouched on the others
    memory.set_fact(open_ws(roots[0]), "fact 3", "value 3")
    everyone_syncs()
    files = tree_files(bare, "main")
    facts = files["memory/facts.md"].decode()
    assert sorted(ln for ln in facts.splitlines() if ln.startswith("- ")) == ["- fact 0: value 0", "- fact 2: value 2",
                                                                              "- fact 3: value 3"]
    assert not [p for p in files if protocol.is_conflict_copy(p)]
    assert len({git(r, "rev-parse", "HEAD^{tree}") for r in roots}) == 1


def test_copies_carry_the_machine_id_and_a_copy_never_gets_a_copy_of_its_own(tmp_path: Path) -> None:
    bare = make_bare(tmp_path / "remote.git")
    a, b = workspace(tmp_path, "a", bare), workspace(tmp_path, "b", bare)
    sync(open_ws(a)), sync(open_ws(b))
    ida, idb = machine_id(open_ws(a)), machine_id(open_ws(b))
    assert ida != idb and machine_id(open_ws(a)) == ida and (a / ".kbsync" / "machine-id").read_text().strip() == ida
    for root in (a, b):
        (root / "artifacts" / "n.md").write_text(f"{root.name}\n", encoding="utf-8")
    sync(open_ws(a))
    (copy,) = sync(open_ws(b)).conflicts
    assert copy.endswith(f"-{idb}.md") and protocol.original_of(copy) == "artifacts/n.md"
    sync(open_ws(a))
    (a / copy).write_text("edited on a\n", encoding="utf-8")  # the same copy edited on both machines
    (b / copy).write_text("edited on b\n", encoding="utf-8")
    sync(open_ws(a))
    second = sync(open_ws(b)).conflicts
    assert [protocol.original_of(c) for c in second] == ["artifacts/n.md"] and ".conflict-" not in second[0].split(
        ".conflict-", 1)[1]
    sync(open_ws(a))
    assert all(p.count(".conflict-") <= 1 for p in tree_files(bare, "main"))


def test_backoff_spreads_over_the_observed_window_and_doubles_with_each_lost_race() -> None:
    assert backoff_s(1.5, 1, 0.5) == 1.5 and backoff_s(1.5, 3, 0.5) == 6.0
    assert backoff_s(0.01, 1, 0.99) == pytest.approx(0.396) and backoff_s(10, 6, 0.99) == 30.0
    assert backoff_s(2.0, 2, 0.0) == 0.0


def test_conflicts_are_listed_compared_and_settled(tmp_path: Path, cli: Cli) -> None:
    bare = make_bare(tmp_path / "remote.git")
    a, b = workspace(tmp_path, "a", bare), workspace(tmp_path, "b", bare)
    sync(open_ws(a)), sync(open_ws(b))
    for root, value in ((a, "from a"), (b, "from b")):
        memory.set_fact(open_ws(root), "owner", value)
        memory.set_fact(open_ws(root), f"only {root.name}", "x")
        (root / "artifacts" / "n.md").write_text(f"{root.name}\n", encoding="utf-8")
    sync(open_ws(a))
    copies = sorted(sync(open_ws(b)).conflicts)
    assert len(copies) == 2 and all(machine_id(open_ws(b)) in c for c in copies)
    listed = cli("-w", str(b), "conflicts")
    assert listed.returncode == 1 and f"machine {machine_id(open_ws(a))}" in listed.stdout, listed.stdout
    assert f"machine {machine_id(open_ws(b))}" in listed.stdout
    fact_copy = next(c for c in copies if c.startswith("memory/"))
    assert (b / fact_copy).read_text(encoding="utf-8") == "# 长期事实\n- owner: from b\n"
    diff = cli("-w", str(b), "conflicts", "diff", fact_copy)
    assert "-- owner: from a" in diff.stdout and "+- owner: from b" in diff.stdout
    done = cli("-w", str(b), "conflicts", "resolve", "memory/facts.md", "--keep", "both")
    assert done.returncode == 0, done.stderr
    facts = (b / "memory" / "facts.md").read_text(encoding="utf-8")
    assert "- owner: from a\n  from b\n" in facts and "only a" in facts and "only b" in facts
    assert not (b / fact_copy).exists() and git(b, "status", "--porcelain") == ""
    assert "conflict: memory/facts.md settled, kept both" in git(b, "log", "-1", "--format=%B")
    assert cli("-w", str(b), "conflicts", "resolve", "artifacts/n.md", "--keep", "both").returncode == 2
    assert cli("-w", str(b), "conflicts", "resolve", "artifacts/n.md", "--keep", "mine").returncode == 0
    assert (b / "artifacts" / "n.md").read_text(encoding="utf-8") == "b\n"
    assert cli("-w", str(b), "conflicts").returncode == 0
    status = cli("-w", str(b), "status")
    assert f"machine:     {machine_id(open_ws(b))}" in status.stdout
