"""The GitHub API client against the local test server (real HTTP on 127.0.0.1, real bare repository)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Iterator

import pytest
import requests

from helpers.daemon import wait_for
from helpers.ghserver import Canned, GitHubServer
from helpers.sync import SpecCheck, git, make_bare, seed_bare
from kbsync import proc
from kbsync.errors import RemoteError
from kbsync.git.objects import blob_id
from kbsync.sync.transports.githubclient import (
    EmptyRepositoryError,
    GitHubApi,
    LostResponseError,
    RateLimitedError,
    RetryPolicy,
    TreeEntry,
)


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def checked() -> Iterator[SpecCheck]:
    check = SpecCheck()
    yield check
    assert check.errors == []


@pytest.fixture
def server(tmp_path: Path, checked: SpecCheck) -> Iterator[GitHubServer]:
    bare = make_bare(tmp_path / "remote.git")
    seed_bare(bare, {"index.md": "| a |\n", "memory/facts.md": "- one\n"}, tmp_path)
    with GitHubServer(bare, check=checked) as srv:
        yield srv


def client(srv: GitHubServer, sleeps: Sleeps | None = None, token: str = "test-token") -> GitHubApi:
    return GitHubApi(requests.Session(), api_url=srv.url, repository=srv.repository, token=token,
                     timeout_s=120, policy=RetryPolicy(max_retries=3), sleep=sleeps if sleeps is not None else Sleeps(), jitter=lambda: 0.5)


def test_blob_tree_commit_ref_round_trip(server: GitHubServer, checked: SpecCheck) -> None:
    api = client(server)
    head = api.get_ref("main", fresh=True)
    assert head is not None
    commit = api.get_commit(head)
    files = api.get_tree(commit.tree)
    assert set(files) == {"index.md", "memory/facts.md"}
    assert api.get_blob(files["index.md"][1]) == b"| a |\n"
    blob = api.create_blob("新的\n".encode())
    assert blob == blob_id("新的\n".encode())
    tree = api.create_tree(commit.tree, [TreeEntry("memory/new.md", "100644", blob), TreeEntry("index.md", "100644", None)])
    new = api.create_commit("add and remove", tree, [head])
    assert api.update_ref("main", new) is True
    assert set(api.get_tree(new)) == {"memory/facts.md", "memory/new.md"}
    assert git(server.repo.path, "rev-parse", "refs/heads/main") == new
    assert checked.checked >= 9


def test_non_fast_forward_is_refused_and_force_never_sent(server: GitHubServer) -> None:
    api = client(server)
    head = api.get_ref("main")
    assert head is not None
    tree = api.get_commit(head).tree
    first = api.create_commit("one", tree, [head])
    second = api.create_commit("two", tree, [head])
    assert api.update_ref("main", first) is True
    assert api.update_ref("main", second) is False
    assert git(server.repo.path, "rev-parse", "refs/heads/main") == first
    assert all(r.body.get("force") is False for r in server.requests_sent("PATCH"))


def test_headers_and_uncached_ref_read(server: GitHubServer) -> None:
    api = client(server)
    api.get_ref("main", fresh=True)
    api.get_ref("main")
    fresh, plain = server.requests_sent("GET", "ref")
    for r in (fresh, plain):
        assert r.headers["authorization"] == "Bearer test-token"
        assert r.headers["accept"] == "application/vnd.github+json"
        assert r.headers["x-github-api-version"] == "2022-11-28"
        assert r.headers["user-agent"].startswith("kbsync/")
    assert fresh.headers["cache-control"] == "no-cache"
    assert "if-none-match" not in fresh.headers


@pytest.mark.parametrize("retry_after, least", [(7, 7.0), (None, 60.0)])
def test_secondary_limit_waits_then_retries(server: GitHubServer, retry_after: int | None, least: float) -> None:
    sleeps = Sleeps()
    server.faults.secondary_limit("POST", "blobs", retry_after)
    assert client(server, sleeps).create_blob(b"x\n") == blob_id(b"x\n")
    assert len(sleeps) == 1 and sleeps[0] >= least
    assert [r.status for r in server.requests_sent("POST", "blobs")] == [403, 201]


def test_exhausted_rate_limit_waits_for_reset(server: GitHubServer) -> None:
    sleeps = Sleeps()
    server.faults.rate_limit_exhausted("GET", "ref", reset_in=30)
    assert client(server, sleeps).get_ref("main") is not None
    assert len(sleeps) == 1 and 25 <= sleeps[0] <= 32


def test_502_on_tree_is_retried_with_growing_backoff(server: GitHubServer) -> None:
    sleeps = Sleeps()
    api = client(server, sleeps)
    head = api.get_ref("main")
    assert head is not None
    server.faults.add("POST", "trees", 502, "Server Error")
    server.faults.add("POST", "trees", 502, "Server Error")
    api.create_tree(api.get_commit(head).tree, [])
    assert sleeps == [0.75, 1.5]


def test_persistent_5xx_gives_up_after_bounded_tries(server: GitHubServer) -> None:
    for _ in range(10):
        server.faults.add("GET", "commits", 503, "Unavailable")
    with pytest.raises(RemoteError, match="after 4 tries"):
        client(server).get_commit("0" * 40)
    assert len(server.requests_sent("GET", "commits")) == 4


def test_lost_patch_response_is_reported_not_retried(server: GitHubServer) -> None:
    api = client(server)
    head = api.get_ref("main")
    assert head is not None
    new = api.create_commit("x", api.get_commit(head).tree, [head])
    server.faults.lose_patch_response = 1
    with pytest.raises(LostResponseError):
        api.update_ref("main", new)
    assert len(server.requests_sent("PATCH")) == 1
    assert api.get_ref("main", fresh=True) == new


def test_bad_token_fails_at_once_with_advice(server: GitHubServer) -> None:
    with pytest.raises(RemoteError, match="token"):
        client(server, token="wrong").get_ref("main")
    assert len(server.log) == 1


def test_wrong_blob_sha_is_detected(server: GitHubServer) -> None:
    server.faults.canned.append(Canned("POST", "blobs", 201, {"url": "u", "sha": "1" * 40}))
    with pytest.raises(RemoteError, match="hash"):
        client(server).create_blob(b"data\n")


def test_empty_repository_is_seeded_through_contents(tmp_path: Path, checked: SpecCheck) -> None:
    with GitHubServer(make_bare(tmp_path / "empty.git"), check=checked) as srv:
        api = client(srv)
        with pytest.raises(EmptyRepositoryError):
            api.get_ref("main")
        sha = api.put_file(".gitattributes", b"index.md merge=union\n", "seed", "main")
        assert api.get_ref("main") == sha
        assert git(srv.repo.path, "show", "main:.gitattributes") == "index.md merge=union"


def test_matching_refs_lists_branches(server: GitHubServer, checked: SpecCheck) -> None:
    api = client(server)
    resp = requests.get(f"{server.url}/repos/{server.repository}/git/matching-refs/heads/ma",
                        headers=api._headers(False), timeout=10)
    assert [r["ref"] for r in resp.json()] == ["refs/heads/main"]


def test_429_honours_retry_after_and_a_plain_403_is_not_retried(server: GitHubServer) -> None:
    sleeps = Sleeps()
    api = client(server, sleeps)
    head = api.get_ref("main")
    assert head is not None
    server.faults.add("GET", "commits", 429, "Too many requests", {"retry-after": "3"})
    assert api.get_commit(head).sha == head
    assert sleeps == [3.0]
    server.faults.add("GET", "commits", 403, "Resource not accessible by personal access token")
    with pytest.raises(RemoteError, match="may write its contents"):
        api.get_commit(head)
    assert sleeps == [3.0]


def test_a_request_is_retried_at_most_five_times_whatever_the_rounds_allowed() -> None:
    from kbsync.config import Config
    from kbsync.sync.transports.githubclient import request_policy

    assert Config().sync.max_retries == 8  # rounds: twenty machines pushing at once need them
    assert request_policy(8).max_retries == 5
    assert request_policy(1).max_retries == 1


# ---- a hostile endpoint cannot stall a sync: waits and requests are bounded ---------------------------


def test_a_retry_after_longer_than_timeout_s_is_rate_limited_at_once(server: GitHubServer) -> None:
    sleeps = Sleeps()
    server.faults.secondary_limit("GET", "ref", 999999)
    with pytest.raises(RateLimitedError, match=r"rate limited until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC "
                                               r"\(GET git/ref/heads/main answered 403, a wait of 999999 s\)") as raised:
        client(server, sleeps).get_ref("main")
    assert raised.value.exit_code == 3 and "the next sync tries again" in str(raised.value)
    assert sleeps == [] and len(server.requests_sent("GET", "ref")) == 1


def test_a_reset_far_ahead_is_rate_limited_at_once(server: GitHubServer) -> None:
    sleeps = Sleeps()
    server.faults.rate_limit_exhausted("GET", "ref", reset_in=10**6)
    with pytest.raises(RateLimitedError, match="rate limited until"):
        client(server, sleeps).get_ref("main")
    assert sleeps == []


def test_a_used_up_limit_on_a_success_stops_the_next_request_unsent(server: GitHubServer) -> None:
    sleeps = Sleeps()
    far = str(int(time.time()) + 10**6)
    server.faults.canned.append(Canned("GET", "ref", 200, {"ref": "refs/heads/main", "node_id": "R", "url": "u",
                                                           "object": {"type": "commit", "sha": "a" * 40, "url": "u"}},
                                       {"x-ratelimit-remaining": "0", "x-ratelimit-reset": far}))
    api = client(server, sleeps)
    assert api.get_ref("main") == "a" * 40
    with pytest.raises(RateLimitedError, match="the rate limit was used up before GET git/commits"):
        api.get_commit("a" * 40)
    assert sleeps == [] and server.requests_sent("GET", "commits") == []


def test_a_wait_that_fits_timeout_s_but_not_the_jobs_deadline_is_not_begun(server: GitHubServer) -> None:
    sleeps = Sleeps()
    server.faults.secondary_limit("GET", "ref", 30)
    with proc.deadline(5.0), pytest.raises(RateLimitedError, match="a wait of 30 s"):
        client(server, sleeps).get_ref("main")
    assert sleeps == []


@pytest.mark.parametrize("headers, limited", [({"retry-after": "9" * 400}, True),
                                              ({"x-ratelimit-remaining": "0", "x-ratelimit-reset": "soon"}, False),
                                              ({"x-ratelimit-remaining": "0", "x-ratelimit-reset": "inf"}, False)])
def test_rate_limit_headers_that_are_no_numbers_are_no_traceback(
        server: GitHubServer, headers: dict[str, str], limited: bool) -> None:
    sleeps = Sleeps()
    server.faults.add("GET", "ref", 403, "API rate limit exceeded for user ID 1.", headers)
    if limited:
        with pytest.raises(RateLimitedError, match="rate limited until"):
            client(server, sleeps).get_ref("main")
    else:  # no usable reset: waited as a secondary limit, then retried
        assert client(server, sleeps).get_ref("main") is not None
        assert sleeps == [60.0]


def test_an_answer_sent_a_byte_at_a_time_is_given_up_at_timeout_s(server: GitHubServer) -> None:
    server.faults.drip("GET", "ref")
    server.faults.drip("GET", "ref")
    api = GitHubApi(requests.Session(), api_url=server.url, repository=server.repository, token="test-token",
                    timeout_s=1.0, policy=RetryPolicy(max_retries=1), sleep=Sleeps(), jitter=lambda: 0.5)
    started = time.monotonic()
    with pytest.raises(RemoteError, match="kept failing after 2 tries"):
        api.get_ref("main")
    assert time.monotonic() - started < 60  # the dripped answers alone would take minutes
    wait_for(lambda: server.dripped_abandoned == 2)  # kbsync closed both connections, mid-answer


def test_a_dripped_answer_then_a_plain_one(server: GitHubServer) -> None:
    server.faults.drip("GET", "ref")
    api = GitHubApi(requests.Session(), api_url=server.url, repository=server.repository, token="test-token",
                    timeout_s=1.0, policy=RetryPolicy(max_retries=1), sleep=Sleeps(), jitter=lambda: 0.5)
    assert api.get_ref("main") == git(server.repo.path, "rev-parse", "refs/heads/main")
    assert len(server.requests_sent("GET", "ref")) == 2


def test_a_dripped_answer_to_the_ref_update_is_a_lost_answer(server: GitHubServer) -> None:
    api = GitHubApi(requests.Session(), api_url=server.url, repository=server.repository, token="test-token",
                    timeout_s=1.0, policy=RetryPolicy(max_retries=1), sleep=Sleeps(), jitter=lambda: 0.5)
    head = api.get_ref("main")
    assert head is not None
    new = api.create_commit("next", api.get_commit(head).tree, [head])
    server.faults.drip("PATCH", "refs")
    with pytest.raises(LostResponseError, match="no answer to PATCH"):
        api.update_ref("main", new)
    assert git(server.repo.path, "rev-parse", "refs/heads/main") == new  # applied; the sync reads the ref again
