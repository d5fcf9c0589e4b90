"""`kbsync sync` over the GitHub API, against the local test server: faults end converged, lossless, unforced."""

from __future__ import annotations

from pathlib import Path

import pytest
import requests

from helpers.cli import Cli
from helpers.daemon import session_relpath, session_text
from helpers.ghserver import GitHubServer
from helpers.sync import all_text, append, git, open_ws, tree_files, workspace
from kbsync.sync.state import known_remote
from kbsync.sync.syncer import SyncResult, sync
from kbsync.sync.transports.github import ApiTransport
from kbsync.sync.transports.githubclient import GitHubApi, RetryPolicy

TOKEN_ENV = "KBSYNC_TEST_TOKEN"


def api_config(srv: GitHubServer) -> str:
    return (f'[sync]\nmode = "github-api"\n\n[github]\napi_url = "{srv.url}"\nrepository = "{srv.repository}"\n'
            f'token_env = "{TOKEN_ENV}"\n')


def api_ws(tmp: Path, name: str, srv: GitHubServer) -> Path:
    return workspace(tmp, name, srv.repo.path, api_config(srv))


def transport(root: Path, srv: GitHubServer, sleeps: list[float]) -> ApiTransport:
    api = GitHubApi(requests.Session(), api_url=srv.url, repository=srv.repository, token=srv.token, timeout_s=120,
                    policy=RetryPolicy(max_retries=4), sleep=sleeps.append, jitter=lambda: 0.5)
    return ApiTransport(root, api, "main", ("kbsync", "kbsync@localhost"), known_remote(open_ws(root)))


def api_sync(root: Path, srv: GitHubServer, sleeps: list[float] | None = None) -> SyncResult:
    waits = sleeps if sleeps is not None else []
    return sync(open_ws(root), transport(root, srv, waits), sleep=waits.append)


def write_session(root: Path, n: int, body: str) -> str:
    rel = session_relpath(n)
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(session_text(rel, body=body), encoding="utf-8")
    return rel


def assert_converged(srv: GitHubServer, roots: list[Path], lines: list[str]) -> None:
    head_tree = git(srv.repo.path, "rev-parse", "main^{tree}")
    for root in roots:
        assert git(root, "rev-parse", "HEAD^{tree}") == head_tree
        assert git(root, "status", "--porcelain") == ""
    text = all_text(tree_files(srv.repo.path, "main"))
    assert [line for line in lines if line not in text] == []


def test_empty_repository_is_seeded_and_a_second_machine_takes_its_files(tmp_path: Path, server: GitHubServer) -> None:
    a = api_ws(tmp_path, "a", server)
    write_session(a, 1, "first from a")
    result = api_sync(a, server)
    assert result.pushed and server.requests_sent("PUT", "contents")
    b = api_ws(tmp_path, "b", server)
    (b / "memory/facts.md").write_text("# 长期事实\n- b knows\n", encoding="utf-8")
    assert api_sync(b, server).conflicts == []
    assert api_sync(a, server).exit_code == 0
    assert_converged(server, [a, b], ["first from a", "- b knows"])


def other_machine(tmp: Path, srv: GitHubServer) -> tuple[Path, list[str]]:
    """A git-mode workspace on the server's bare repository (the mixed setup)."""
    root = workspace(tmp, "git-machine", srv.repo.path)
    assert sync(open_ws(root)).exit_code in (0, 1)
    return root, []


def started(tmp: Path, srv: GitHubServer) -> tuple[Path, Path]:
    a = api_ws(tmp, "a", srv)
    api_sync(a, srv)
    g, _ = other_machine(tmp, srv)
    api_sync(a, srv)
    return a, g


def test_ref_moved_by_another_writer_before_the_patch(tmp_path: Path, server: GitHubServer) -> None:
    a, g = started(tmp_path, server)
    write_session(a, 2, "a's session")
    append(a, "logs/tool-calls.md", "2025-06-11T00:00:00Z | s | api-tool | ok")

    def move() -> None:
        write_session(g, 3, "git machine's session")
        append(g, "logs/tool-calls.md", "2025-06-11T00:00:01Z | s | git-tool | ok")
        assert sync(open_ws(g)).pushed

    server.faults.before_patch.append(move)
    sleeps: list[float] = []
    result = api_sync(a, server, sleeps)
    assert result.rounds == 2 and result.pushed and len(sleeps) == 1
    assert [r.status for r in server.requests_sent("PATCH")][-2:] == [422, 200]
    sync(open_ws(g))
    assert_converged(server, [a, g], ["a's session", "git machine's session", "api-tool", "git-tool"])


def test_after_a_lost_race_a_remote_that_moved_again_costs_no_tree_or_commit(tmp_path: Path, server: GitHubServer) -> None:
    a, g = started(tmp_path, server)
    write_session(a, 7, "a's session")
    moves = iter(range(8, 10))

    def move() -> None:
        write_session(g, next(moves), "git machine's session")
        assert sync(open_ws(g)).pushed

    def lose_at_the_patch() -> None:
        move()
        server.faults.after_head_read.append(move)  # the next round reads the head, then the remote moves

    server.faults.before_patch.append(lose_at_the_patch)
    sleeps: list[float] = []
    trees, patches = len(server.requests_sent("POST", "trees")), len(server.requests_sent("PATCH"))
    result = api_sync(a, server, sleeps)
    assert result.rounds == 3 and result.pushed and len(sleeps) == 2
    assert len(server.requests_sent("POST", "trees")) - trees == 2  # rounds 1 and 3: round 2 saw the move first
    assert [r.status for r in server.requests_sent("PATCH")][patches:] == [422, 200]
    sync(open_ws(g))
    assert_converged(server, [a, g], ["a's session", "git machine's session"])


@pytest.mark.parametrize("retry_after", [5, None])
def test_secondary_limit_on_trees_and_commits(tmp_path: Path, server: GitHubServer, retry_after: int | None) -> None:
    a, g = started(tmp_path, server)
    write_session(a, 4, "limited")
    server.faults.secondary_limit("POST", "commits", retry_after)
    server.faults.secondary_limit("POST", "trees", retry_after)
    sleeps: list[float] = []
    assert api_sync(a, server, sleeps).pushed
    assert len(sleeps) == 2 and min(sleeps) >= (retry_after or 60)
    sync(open_ws(g))
    assert_converged(server, [a, g], ["limited"])


def test_502_on_a_tree_then_success(tmp_path: Path, server: GitHubServer) -> None:
    a, g = started(tmp_path, server)
    write_session(a, 5, "after a 502")
    server.faults.add("POST", "trees", 502, "Server Error")
    assert api_sync(a, server).pushed
    sync(open_ws(g))
    assert_converged(server, [a, g], ["after a 502"])


def test_patch_applied_but_its_answer_lost(tmp_path: Path, server: GitHubServer) -> None:
    a, g = started(tmp_path, server)
    write_session(a, 6, "answer lost")
    server.faults.lose_patch_response = 1
    result = api_sync(a, server)
    assert result.pushed and len(server.requests_sent("PATCH")) == 2
    head = git(server.repo.path, "rev-parse", "main")
    assert result.remote_head == head
    again = api_sync(a, server)
    assert not again.pushed and git(server.repo.path, "rev-parse", "main") == head
    sync(open_ws(g))
    assert_converged(server, [a, g], ["answer lost"])


def test_exhausted_rate_limit_waits_for_its_reset(tmp_path: Path, server: GitHubServer) -> None:
    a, g = started(tmp_path, server)
    write_session(a, 7, "rate limited")
    server.faults.rate_limit_exhausted("GET", "compare", reset_in=20)  # the first read of a synced workspace
    sleeps: list[float] = []
    assert api_sync(a, server, sleeps).pushed
    assert sleeps and 15 <= sleeps[0] <= 22
    sync(open_ws(g))
    assert_converged(server, [a, g], ["rate limited"])


def test_mixed_git_and_api_machines_converge_with_conflict_copies(tmp_path: Path, server: GitHubServer) -> None:
    a, g = started(tmp_path, server)
    lines = []
    for r in range(2):
        for root, who in ((a, "api"), (g, "git")):
            line = f"- {who} fact {r}"
            append(root, "artifacts/notes.md", line)
            append(root, "index.md", f"| 2025-06-11 | {who}{r} | t | s | x.md |")
            lines += [line, f"{who}{r}"]
        api_sync(a, server)
        sync(open_ws(g))
    api_sync(a, server)
    assert_converged(server, [a, g], lines)
    assert any(p.startswith("artifacts/notes.conflict-") for p in tree_files(server.repo.path, "main"))


def test_changed_blobs_plus_at_most_five_requests(tmp_path: Path, server: GitHubServer) -> None:
    a = api_ws(tmp_path, "a", server)
    api_sync(a, server)
    for n in (1, 10):
        for i in range(n):
            write_session(a, 1000 * n + i, f"bench {n} {i}")
        before = len(server.log)
        assert api_sync(a, server).pushed
        assert len(server.log) - before <= n + 5


def test_large_change_is_split_into_trees_of_about_100_paths(tmp_path: Path, server: GitHubServer) -> None:
    a = api_ws(tmp_path, "a", server)
    api_sync(a, server)
    for i in range(101):
        (a / "artifacts" / f"bulk-{i:03d}.md").write_text(f"bulk {i}\n", encoding="utf-8")
    before = len(server.requests_sent("POST", "trees"))
    assert api_sync(a, server).pushed
    assert len(server.requests_sent("POST", "trees")) - before == 2
    assert git(a, "rev-parse", "HEAD^{tree}") == git(server.repo.path, "rev-parse", "main^{tree}")


def test_cli_sync_over_the_api_reads_the_token_from_the_environment(tmp_path: Path, server: GitHubServer, cli: Cli) -> None:
    a = api_ws(tmp_path, "a", server)
    missing = cli("-w", str(a), "sync", env={TOKEN_ENV: ""})
    assert missing.returncode == 2 and TOKEN_ENV in missing.stderr
    done = cli("-w", str(a), "sync", "--json", env={TOKEN_ENV: server.token})
    assert done.returncode == 0, done.stderr
    assert git(a, "rev-parse", "HEAD^{tree}") == git(server.repo.path, "rev-parse", "main^{tree}")


def test_cli_sync_told_to_wait_for_days_is_exit_3_at_once_and_the_next_sync_pushes(
        tmp_path: Path, server: GitHubServer, cli_process: Cli) -> None:
    a, _g = started(tmp_path, server)
    rel = write_session(a, 9, "told to wait eleven days")
    server.faults.secondary_limit("GET", "compare", 999999)
    patches = len(server.requests_sent("PATCH"))
    done = cli_process("-w", str(a), "sync", env={TOKEN_ENV: server.token}, timeout=60)
    assert done.returncode == 3, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "rate limited until" in lines[0] and "a wait of 999999 s" in lines[0], lines
    assert "the next sync tries again" in lines[0] and len(server.requests_sent("PATCH")) == patches
    again = cli_process("-w", str(a), "sync", env={TOKEN_ENV: server.token}, timeout=60)
    assert again.returncode == 0, again.stderr
    assert rel in tree_files(server.repo.path, "main")
