"""A client for GitHub's Git Database REST API on an injected `requests.Session`.

One job: send requests the way GitHub asks (headers, serial writes), wait and
retry where GitHub says to (`retry-after`, an exhausted rate limit, secondary
limits, 5xx) with bounded, jittered backoff, and check what comes back (blob
shas are recomputed locally). Sleeping, the clock and the jitter source are
injected so tests run without waiting.

Nothing GitHub (or whatever answers at `api_url`) says can make a sync wait without a bound: a request ends
within `timeout_s` by the wall clock, its body included (kbsync.sync.transports.wallclock), and a wait GitHub
asks for (`retry-after`, `x-ratelimit-reset`, a secondary limit's minute) is made only when it fits in
`timeout_s` and in what is left of the job's deadline (`proc.remaining`); a longer one is RateLimitedError
(exit 3, "rate limited until ..."), and the next sync tries again.
"""

from __future__ import annotations

import base64
import json
import logging
import math
import random
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import requests

from kbsync import __version__, proc
from kbsync.errors import RemoteError
from kbsync.git.objects import blob_id
from kbsync.sync.transports import wallclock

log = logging.getLogger(__name__)

API_VERSION = "2022-11-28"
SUBMODULE = "160000"
LOST_RACE = ("fast forward", "cannot be updated")  # 422 messages of a ref another writer moved meanwhile
RETRYABLE_NETWORK = (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError)
FAR_S = 1e10  # a wait asked for beyond this (some 300 years) is shown as ending then
JSON_SLACK = 64 * 1024  # the JSON around a blob's base64 content
ANSWER_MAX = 64 * 1024 * 1024  # any other answer (GitHub's own: a listing is cut at 100,000 entries, about 7 MB)
READ_PIECE = 64 * 1024


class EmptyRepositoryError(RemoteError):
    """The repository has no commit yet (GitHub answers 409)."""


class AnswerTooLargeError(RemoteError):
    """An answer ran past the size allowed (a blob's limit, else ANSWER_MAX); the read was stopped there."""


class LostResponseError(RemoteError):
    """A ref update was sent but its answer never came: it may or may not have been applied."""


class RateLimitedError(RemoteError):
    """GitHub asked for a wait longer than this sync may wait; the next sync tries again."""


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 5
    base_s: float = 1.0
    cap_s: float = 60.0
    secondary_s: float = 60.0  # GitHub: wait at least a minute after a secondary limit without retry-after


def request_policy(round_retries: int) -> RetryPolicy:
    """How often one request is retried: `[sync] max_retries` bounds the rounds of a sync, and a request is
    retried at most as often, and never more than 5 times (a remote that never answers costs at most six
    timeouts per request, not one per round allowed)."""
    return RetryPolicy(max_retries=min(round_retries, RetryPolicy.max_retries))


@dataclass(frozen=True)
class TreeEntry:
    path: str
    mode: str
    sha: str | None  # None deletes the path from the base tree
    content: str | None = None  # the file's text, sent instead of a blob sha (GitHub writes the blob)


@dataclass(frozen=True)
class Commit:
    sha: str
    tree: str
    parents: tuple[str, ...]


@dataclass(frozen=True)
class FileChange:
    path: str
    status: str  # GitHub's: added, removed, modified, renamed, copied, changed, unchanged
    sha: str | None  # the blob the path now holds
    previous: str | None = None  # a rename's old path
    patch: str | None = None  # the change as unified-diff hunks, when GitHub gives them


@dataclass(frozen=True)
class Comparison:
    """What changed on a branch since a commit: its head (the newest commit), that head's tree, and every file
    changed; `complete` only when GitHub listed every commit and file (it stops at 250 and 300)."""
    head: str
    tree: str | None
    changes: tuple[FileChange, ...]
    complete: bool


COMPARE_MAX_COMMITS = 250
COMPARE_MAX_FILES = 300


@dataclass(frozen=True)
class Reply:
    status: int
    body: Any


class GitHubApi:
    """The repository `owner/name` behind `api_url`, authenticated with `token`."""

    def __init__(
        self,
        session: requests.Session,
        *,
        api_url: str,
        repository: str,
        token: str,
        timeout_s: float = 30.0,
        policy: RetryPolicy = RetryPolicy(),
        sleep: Callable[[float], None] = proc.pause,
        clock: Callable[[], float] = time.time,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        self.session = wallclock.mount(session)
        self.base = f"{api_url.rstrip('/')}/repos/{repository}/"
        self.repository = repository
        self.token = token
        self.timeout_s = timeout_s
        self.policy = policy
        self.sleep, self.clock, self.jitter = sleep, clock, jitter
        self.requests_sent = 0
        self._paused_until = 0.0

    # ---- operations -----------------------------------------------------------

    def get_ref(self, branch: str, *, fresh: bool = False) -> str | None:
        """The commit sha `branch` points at; None if the branch does not exist."""
        reply = self._call("GET", f"git/ref/heads/{branch}", ok=(200,), passthrough=(404, 409), fresh=fresh)
        if reply.status == 409:
            raise EmptyRepositoryError(f"GitHub repository {self.repository} is empty")
        return None if reply.status == 404 else str(reply.body["object"]["sha"])

    def update_ref(self, branch: str, sha: str) -> bool:
        """Move `branch` to `sha` only as a fast forward; False if GitHub refuses it as not one."""
        reply = self._call("PATCH", f"git/refs/heads/{branch}", {"sha": sha, "force": False}, ok=(200,), passthrough=(422,))
        if reply.status == 422:
            if any(why in _message(reply.body).lower() for why in LOST_RACE):
                return False
            raise self._error("PATCH", f"git/refs/heads/{branch}", reply.status, reply.body)
        return True

    def create_ref(self, branch: str, sha: str) -> bool:
        """Create `branch` at `sha`; False if it already exists."""
        reply = self._call("POST", "git/refs", {"ref": f"refs/heads/{branch}", "sha": sha}, ok=(201,), passthrough=(422,))
        return reply.status == 201

    def create_blob(self, data: bytes) -> str:
        body = {"content": base64.b64encode(data).decode("ascii"), "encoding": "base64"}
        sha = str(self._call("POST", "git/blobs", body, ok=(201,)).body["sha"])
        expected = blob_id(data)
        if sha != expected:
            raise RemoteError(f"GitHub stored a blob as {sha}, but its bytes hash to {expected}; nothing was pushed, run sync again")
        return sha

    def get_blob(self, sha: str, max_bytes: int | None = None) -> bytes:
        """The blob's bytes; AnswerTooLargeError, having read no more than about that, when they are over
        `max_bytes` (the answer is base64 in JSON: its read stops a little past 4/3 of the limit)."""
        cap = ANSWER_MAX if max_bytes is None else max_bytes * 4 // 3 * 61 // 60 + JSON_SLACK
        body = self._call("GET", f"git/blobs/{sha}", ok=(200,), cap=cap).body
        if not isinstance(body, dict):
            raise RemoteError(f"GitHub answered blob {sha} with no JSON object; nothing was changed, run sync again")
        data = base64.b64decode(body["content"]) if body.get("encoding") == "base64" else str(body["content"]).encode()
        if blob_id(data) != sha:
            raise RemoteError(f"blob {sha} from GitHub does not hash to its sha; nothing was changed, run sync again")
        return data

    def get_tree(self, sha: str) -> dict[str, tuple[str, str]]:
        """Every blob under tree (or commit) `sha`: path -> (mode, blob sha)."""
        return {p: entry for p, entry in self.get_listing(sha)[1].items() if entry[0] != SUBMODULE}

    def get_listing(self, sha: str) -> tuple[str, dict[str, tuple[str, str]], dict[str, int]]:
        """The tree sha of tree or commit `sha` (one request, no commit read), every entry under it that
        is no folder (path -> (mode, sha)), and the size GitHub gives each blob (path -> bytes)."""
        body = self._call("GET", f"git/trees/{sha}?recursive=1", ok=(200,)).body
        if body.get("truncated"):
            raise RemoteError(f"GitHub truncated the listing of tree {sha}; the repository is too large for API sync, use mode = \"git\"")
        entries = [e for e in body["tree"] if e["type"] != "tree"]
        sizes = {e["path"]: e["size"] for e in entries if isinstance(e.get("size"), int) and e["type"] == "blob"}
        return str(body["sha"]), {e["path"]: (e["mode"], e["sha"]) for e in entries}, sizes

    def create_tree(self, base_tree: str | None, entries: Sequence[TreeEntry]) -> str:
        tree = [{"path": e.path, "mode": e.mode, "type": "blob", **({"content": e.content} if e.content is not None
                                                                     else {"sha": e.sha})} for e in entries]
        body: dict[str, Any] = {"tree": tree}
        if base_tree:
            body["base_tree"] = base_tree
        return str(self._call("POST", "git/trees", body, ok=(201,)).body["sha"])

    def compare(self, base: str, branch: str) -> Comparison | None:
        """`branch` against commit `base`, read fresh (one request for the head and what changed since `base`);
        None when GitHub cannot compare them (an unknown commit) or `branch` is not ahead of `base`."""
        reply = self._call("GET", f"compare/{base}...{branch}", ok=(200,), passthrough=(404, 409, 422), fresh=True)
        if reply.status != 200:
            return None
        try:
            return _comparison(base, reply.body)
        except (KeyError, TypeError, IndexError, ValueError) as exc:
            log.info("GitHub's comparison with %s did not have the expected shape (%s); listing the tree instead",
                     base[:12], exc)
            return None

    def get_commit(self, sha: str) -> Commit:
        body = self._call("GET", f"git/commits/{sha}", ok=(200,)).body
        return Commit(body["sha"], body["tree"]["sha"], tuple(p["sha"] for p in body["parents"]))

    def create_commit(self, message: str, tree: str, parents: Sequence[str], author: dict[str, str] | None = None) -> str:
        body: dict[str, Any] = {"message": message, "tree": tree, "parents": list(parents)}
        if author:
            body["author"] = author
        return str(self._call("POST", "git/commits", body, ok=(201,)).body["sha"])

    def put_file(self, path: str, data: bytes, message: str, branch: str) -> str:
        """Create `path` through the contents API (the only way to write to an empty repository); the commit sha."""
        body = {"message": message, "content": base64.b64encode(data).decode("ascii"), "branch": branch}
        return str(self._call("PUT", f"contents/{path}", body, ok=(200, 201)).body["commit"]["sha"])

    # ---- transport ------------------------------------------------------------

    def _headers(self, fresh: bool) -> dict[str, str]:
        headers = {
            "Authorization": f"Bearer {self.token}",
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": API_VERSION,
            "User-Agent": f"kbsync/{__version__} (+python-requests/{requests.__version__})",
        }
        if fresh:
            headers["Cache-Control"] = "no-cache"
            headers["Pragma"] = "no-cache"
        return headers

    def _call(
        self, method: str, tail: str, body: Any = None, *, ok: tuple[int, ...],
        passthrough: tuple[int, ...] = (), fresh: bool = False, cap: int = 0,
    ) -> Reply:
        """One operation, retried where GitHub says waiting helps; RemoteError when it does not. The answer is read
        in pieces, no more than `cap` bytes of it (ANSWER_MAX unless given; AnswerTooLargeError past that)."""
        for attempt in range(self.policy.max_retries + 1):
            self._respect_pause(method, tail)
            try:
                resp, payload = self._send(method, tail, body, fresh or method != "GET", cap)
            except RETRYABLE_NETWORK as exc:
                if method == "PATCH":
                    raise LostResponseError(f"no answer to PATCH {tail} ({type(exc).__name__})") from exc
                wait = self._backoff(attempt)
                log.info("GitHub API %s %s: %s; retrying in %.1fs", method, tail, type(exc).__name__, wait)
            else:
                if resp.status_code in ok or resp.status_code in passthrough:
                    self._note_limits(resp)
                    return Reply(resp.status_code, payload)
                if method == "PATCH" and resp.status_code >= 500:
                    raise LostResponseError(f"PATCH {tail} answered {resp.status_code}; it may have been applied")
                asked = self._limit_wait(resp, payload, attempt)
                if asked is not None:
                    self._allow(asked, f"{method} {tail.split('?')[0]} answered {resp.status_code}")
                    wait = asked
                elif resp.status_code >= 500:
                    wait = self._backoff(attempt)
                else:
                    raise self._error(method, tail, resp.status_code, payload)
                log.info("GitHub API %s %s: %s; retrying in %.1fs", method, tail, resp.status_code, wait)
            if attempt < self.policy.max_retries:
                self.sleep(min(wait, self._waitable()))
        raise RemoteError(
            f"GitHub API {method} {tail.split('?')[0]} kept failing after {self.policy.max_retries + 1} tries; "
            "nothing was lost, run sync again later"
        )

    def _send(self, method: str, tail: str, body: Any, fresh: bool, cap: int) -> tuple[requests.Response, Any]:
        """The answer and its JSON (None if it holds none), the body read whole within the wall-clock bound, in
        pieces and stopped past `cap` bytes (ANSWER_MAX where 0; AnswerTooLargeError)."""
        self.requests_sent += 1
        bound = proc.remaining(self.timeout_s)
        assert bound is not None
        read: list[Any] = []

        def request() -> requests.Response:
            resp = self.session.request(method, self.base + tail, json=body, headers=self._headers(fresh),
                                        timeout=bound, allow_redirects=True, stream=True)
            read.append(_capped_json(resp, cap or ANSWER_MAX, tail))
            return resp

        resp = wallclock.send(bound, request)
        return resp, read[0]

    def _backoff(self, attempt: int) -> float:
        ceiling = min(self.policy.cap_s, self.policy.base_s * (2 ** attempt))
        return float(ceiling * (0.5 + self.jitter() / 2))

    def _limit_wait(self, resp: requests.Response, payload: Any, attempt: int) -> float | None:
        """The seconds a rate limit asks to wait before trying again; None when the answer is no rate limit."""
        status, headers = resp.status_code, resp.headers
        if status not in (403, 429):
            return None
        retry_after = headers.get("retry-after")
        if retry_after is not None and retry_after.strip().isdigit():
            return float(retry_after)
        if headers.get("x-ratelimit-remaining") == "0" and (reset := _seconds(headers.get("x-ratelimit-reset"))):
            return max(0.0, reset - self.clock()) + 1.0
        if status == 429 or "rate limit" in _message(payload).lower():
            return max(self.policy.secondary_s, self._backoff(attempt))
        return None

    def _waitable(self) -> float:
        """The longest wait this sync may make now: `timeout_s`, cut to what is left of the job's deadline
        (TimedOutError once that has passed)."""
        bound = proc.remaining(self.timeout_s)
        assert bound is not None
        return bound

    def _allow(self, seconds: float, why: str) -> None:
        """RateLimitedError unless a wait of `seconds` (one a rate limit asks for) may be made now."""
        if seconds <= self._waitable():
            return
        until = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(self.clock() + min(seconds, FAR_S)))
        raise RateLimitedError(
            f"GitHub API rate limited until {until} ({why}, a wait of {seconds:.0f} s); a sync waits at most "
            f"[sync] timeout_s = {self.timeout_s:g} s and never past the job's deadline: nothing was lost, "
            "the next sync tries again")

    def _note_limits(self, resp: requests.Response) -> None:
        if resp.headers.get("x-ratelimit-remaining") == "0" and (reset := _seconds(resp.headers.get("x-ratelimit-reset"))):
            self._paused_until = max(self._paused_until, reset + 1.0)

    def _respect_pause(self, method: str, tail: str) -> None:
        now = self.clock()
        if now < self._paused_until:
            wait = self._paused_until - now
            self._allow(wait, f"the rate limit was used up before {method} {tail.split('?')[0]}")
            log.info("GitHub API rate limit exhausted; waiting %.0fs for its reset", wait)
            self.sleep(wait)
            self._paused_until = 0.0

    def _error(self, method: str, tail: str, status: int, payload: Any) -> RemoteError:
        what = f"GitHub API {method} {tail.split('?')[0]} answered {status} ({_message(payload) or 'no message'})"
        if status == 401:
            return RemoteError(f"{what}; the token was refused: set a valid token in the variable named by [github] token_env")
        if status in (403, 404):
            return RemoteError(f"{what}; check [github] repository = {self.repository!r} and that the token may write its contents")
        return RemoteError(f"{what}; nothing was lost, run sync again")


def _comparison(base: str, body: Any) -> Comparison | None:
    status = body["status"]
    if status == "identical":
        return Comparison(base, None, (), True)
    if status != "ahead":
        return None
    commits, files = body["commits"], body.get("files") or []
    newest = commits[-1]
    changes = tuple(FileChange(str(f["filename"]), str(f["status"]), None if f.get("sha") is None else str(f["sha"]),
                               _text_or_none(f.get("previous_filename")), _text_or_none(f.get("patch")))
                    for f in files)
    complete = (len(commits) == int(body["total_commits"]) < COMPARE_MAX_COMMITS and len(files) < COMPARE_MAX_FILES)
    return Comparison(str(newest["sha"]), str(newest["commit"]["tree"]["sha"]), changes, complete)


def _seconds(value: str | None) -> float | None:
    """A header's number of seconds (or epoch time); None when absent or no finite number."""
    try:
        number = float(value) if value is not None else math.nan
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _capped_json(resp: requests.Response, cap: int, tail: str) -> Any:
    """The answer's JSON, read in pieces (decompressed) and stopped once past `cap` bytes."""
    try:
        length = resp.headers.get("content-length", "")
        if length.isdigit() and int(length) > cap:
            raise AnswerTooLargeError(f"GitHub's answer to {tail.split('?')[0]} holds {int(length):,} bytes, over "
                                      f"{cap:,}; nothing was changed, check [github] api_url")
        pieces, total = [], 0
        for piece in resp.iter_content(READ_PIECE):
            total += len(piece)
            if total > cap:
                raise AnswerTooLargeError(f"GitHub's answer to {tail.split('?')[0]} ran past {cap:,} bytes; nothing "
                                          "was changed, check [github] api_url")
            pieces.append(piece)
    finally:
        resp.close()
    try:
        return json.loads(b"".join(pieces))
    except ValueError:
        return None


def _message(payload: Any) -> str:
    return str(payload.get("message", "")) if isinstance(payload, dict) else ""
