"""A local stand-in for GitHub's Git Database API, over a real bare git repository.

It serves the operations kbsync uses (refs, matching-refs, blobs, trees, commits,
contents PUT) on 127.0.0.1, builds every object with git plumbing in the bare
repository (so a git client can fetch from and push to the same repository), and
answers like GitHub does: `PATCH git/refs` with `force: false` refuses a
non-fast-forward with 422 "Update is not a fast forward", an empty repository
answers 409 to the Git Database API, every response carries rate-limit headers.

Fault switches (`server.faults`) make the next matching request misbehave:
canned responses (403 secondary limit with or without `retry-after`, 502 on a
tree, an exhausted rate limit, a `retry-after` or reset far ahead), a hook that lets another writer move the ref
just before a PATCH is applied, a PATCH that is applied but whose response
is lost, and a response sent a byte at a time (`dripped`: its head and body, one byte every `drip_s`, until the
client goes away). Every request is recorded (`server.log`) so tests can assert on what
was sent (for instance that `force: true` never was). An optional `check`
callable sees every (method, route, status, request body, response body) and is
used by the tests to validate both against the API description.
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable
from urllib.parse import parse_qs, unquote, urlsplit

ZERO = "0" * 40
DOCS = "https://docs.github.com/rest"
Check = Callable[[str, str, int, Any, Any], None]
HOST = "127.0.0.1"  # loopback only


class _Server(ThreadingHTTPServer):
    """A client that hangs up in the middle of an answer (kbsync stops reading a blob at its size limit) is what
    some tests are about, not an error: the standard server prints its traceback to the process's stderr, where
    a CLI call run in the test's process would find it among its own output."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)


@dataclass
class Canned:
    """A response given instead of handling one matching request."""

    method: str
    route: str
    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Faults:
    canned: list[Canned] = field(default_factory=list)
    before_patch: list[Callable[[], None]] = field(default_factory=list)
    after_head_read: list[Callable[[], None]] = field(default_factory=list)  # each run once, after a ref is read or compared
    lose_patch_response: int = 0
    dripped: list[tuple[str, str]] = field(default_factory=list)  # (method, route): the next such answer dripped
    drip_s: float = 0.5

    def drip(self, method: str, route: str) -> None:
        self.dripped.append((method, route))

    def take_drip(self, method: str, route: str) -> bool:
        if (method, route) in self.dripped:
            self.dripped.remove((method, route))
            return True
        return False

    def add(self, method: str, route: str, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        body = {"message": message, "documentation_url": DOCS}
        self.canned.append(Canned(method, route, status, body, dict(headers or {})))

    def secondary_limit(self, method: str, route: str, retry_after: int | None) -> None:
        headers = {"retry-after": str(retry_after)} if retry_after is not None else {}
        self.add(method, route, 403, "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.", headers)

    def rate_limit_exhausted(self, method: str, route: str, reset_in: int = 2) -> None:
        headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(time.time()) + reset_in)}
        self.add(method, route, 403, "API rate limit exceeded for user ID 1.", headers)

    def take(self, method: str, route: str) -> Canned | None:
        for c in self.canned:
            if c.method == method and c.route == route:
                self.canned.remove(c)
                return c
        return None


@dataclass
class Logged:
    method: str
    route: str
    path: str
    headers: dict[str, str]
    body: Any
    status: int = 0


class GitError(RuntimeError):
    pass


class BareRepo:
    """Git plumbing on a bare repository; every call is one `git` subprocess."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def git(self, *args: str, data: bytes | None = None, env: dict[str, str] | None = None) -> bytes:
        proc = subprocess.run(
            ["git", "-C", str(self.path), *args], input=data, capture_output=True,
            env={**os.environ, **(env or {})},
        )
        if proc.returncode != 0:
            raise GitError(proc.stderr.decode(errors="replace").strip())
        return proc.stdout

    def text(self, *args: str, **kw: Any) -> str:
        return self.git(*args, **kw).decode().strip()

    def is_empty(self) -> bool:
        return not self.text("for-each-ref", "--count=1", "refs/")

    def ref(self, name: str) -> str | None:
        try:
            return self.text("rev-parse", "--verify", "--quiet", f"{name}^{{commit}}")
        except GitError:
            return None

    def object_type(self, sha: str) -> str | None:
        try:
            return self.text("cat-file", "-t", sha)
        except GitError:
            return None

    def is_ancestor(self, old: str, new: str) -> bool:
        proc = subprocess.run(["git", "-C", str(self.path), "merge-base", "--is-ancestor", old, new], capture_output=True)
        return proc.returncode == 0

    def write_blob(self, data: bytes) -> str:
        return self.text("hash-object", "-w", "--stdin", data=data)

    def write_tree(self, base: str | None, entries: list[tuple[str, str, str | None]]) -> str:
        """A tree: `base` with each (path, mode, sha) set, or removed where sha is None."""
        with tempfile.TemporaryDirectory() as tmp:
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            if base:
                self.git("read-tree", base, env=env)
            lines = "".join(
                f"{mode} {sha}\t{path}\n" if sha else f"0 {ZERO}\t{path}\n" for path, mode, sha in entries
            )
            self.git("update-index", "--index-info", data=lines.encode(), env=env)
            return self.text("write-tree", env=env)

    def commit_tree(self, tree: str, parents: list[str], message: str, author: dict[str, str] | None) -> str:
        args = ["commit-tree", tree]
        for p in parents:
            args += ["-p", p]
        who = author or {"name": "GitHub", "email": "noreply@github.com"}
        env = {
            "GIT_AUTHOR_NAME": who["name"], "GIT_AUTHOR_EMAIL": who["email"],
            "GIT_COMMITTER_NAME": who["name"], "GIT_COMMITTER_EMAIL": who["email"],
        }
        if "date" in who:
            env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = who["date"]
        return self.text(*args, data=message.encode(), env=env)

    def cas_ref(self, ref: str, new: str, old: str | None) -> None:
        self.git("update-ref", ref, new, old or ZERO)


def _git_date(raw: str) -> str:
    """`<unix> <+hhmm>` from a raw git author line's tail, as ISO 8601."""
    stamp, off = raw.split()
    t = time.gmtime(int(stamp) + (1 if off[0] == "+" else -1) * (int(off[1:3]) * 3600 + int(off[3:5]) * 60))
    return time.strftime("%Y-%m-%dT%H:%M:%S", t) + f"{off[:3]}:{off[3:]}"


class GitHubServer:
    """The API for repository `owner/name`, served from `bare` on 127.0.0.1."""

    def __init__(self, bare: Path, *, owner: str = "owner", name: str = "kb", token: str = "test-token",
                 check: Check | None = None) -> None:
        self.repo = BareRepo(bare)
        self.owner, self.name, self.token = owner, name, token
        self.faults = Faults()
        self.log: list[Logged] = []
        self.check = check
        self.write_lock = threading.Lock()
        self.rate_remaining = 5000
        self.dripped_abandoned = 0  # dripped answers the client stopped reading
        self._httpd = _Server((HOST, 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self._httpd.server_address[1]}"

    @property
    def repository(self) -> str:
        return f"{self.owner}/{self.name}"

    def start(self) -> "GitHubServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> "GitHubServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def requests_sent(self, method: str | None = None, route: str | None = None) -> list[Logged]:
        return [r for r in self.log if (method is None or r.method == method) and (route is None or r.route == route)]

    # ---- URLs of objects, as GitHub builds them -------------------------------

    def api(self, tail: str) -> str:
        return f"{self.url}/repos/{self.owner}/{self.name}/{tail}"

    def ref_json(self, ref: str, sha: str) -> dict[str, Any]:
        return {
            "ref": ref, "node_id": f"REF_{sha[:12]}", "url": self.api(f"git/{ref}"),
            "object": {"type": "commit", "sha": sha, "url": self.api(f"git/commits/{sha}")},
        }

    def tree_json(self, sha: str, recursive: bool) -> dict[str, Any]:
        args = ["ls-tree", "-l", "-z"] + (["-r", "-t"] if recursive else []) + [sha]
        entries = []
        for item in self.repo.git(*args).decode().split("\0"):
            if not item:
                continue
            meta, path = item.split("\t", 1)
            mode, kind, osha, size = meta.split()
            entry: dict[str, Any] = {"path": path, "mode": mode, "type": kind, "sha": osha,
                                     "url": self.api(f"git/{kind}s/{osha}")}
            if kind == "blob":
                entry["size"] = int(size)
            entries.append(entry)
        return {"sha": sha, "url": self.api(f"git/trees/{sha}"), "tree": entries, "truncated": False}

    def commit_json(self, sha: str) -> dict[str, Any]:
        raw = self.repo.git("cat-file", "commit", sha).decode()
        head, _, message = raw.partition("\n\n")
        tree, parents, people = "", [], {}
        for line in head.splitlines():
            key, _, value = line.partition(" ")
            if key == "tree":
                tree = value
            elif key == "parent":
                parents.append(value)
            elif key in ("author", "committer"):
                m = re.match(r"^(.*) <(.*)> (\d+ [+-]\d{4})$", value)
                assert m, value
                people[key] = {"name": m.group(1), "email": m.group(2), "date": _git_date(m.group(3))}
        return {
            "sha": sha, "node_id": f"C_{sha[:12]}", "url": self.api(f"git/commits/{sha}"),
            "html_url": f"{self.url}/{self.owner}/{self.name}/commit/{sha}",
            "author": people["author"], "committer": people["committer"], "message": message,
            "tree": {"sha": tree, "url": self.api(f"git/trees/{tree}")},
            "parents": [{"sha": p, "url": self.api(f"git/commits/{p}"),
                         "html_url": f"{self.url}/{self.owner}/{self.name}/commit/{p}"} for p in parents],
            "verification": {"verified": False, "reason": "unsigned", "signature": None, "payload": None,
                             "verified_at": None},
        }


    def listed_commit_json(self, sha: str) -> dict[str, Any]:
        """A commit as the comparison lists it (the `commit` schema: git data under `commit`, no GitHub user)."""
        git = self.commit_json(sha)
        return {
            "url": self.api(f"commits/{sha}"), "sha": sha, "node_id": git["node_id"], "html_url": git["html_url"],
            "comments_url": self.api(f"commits/{sha}/comments"),
            "commit": {"url": git["url"], "author": git["author"], "committer": git["committer"],
                       "message": git["message"], "comment_count": 0, "tree": git["tree"],
                       "verification": git["verification"]},
            "author": {}, "committer": {},
            "parents": [{"sha": p["sha"], "url": self.api(f"commits/{p['sha']}"), "html_url": p["html_url"]}
                        for p in git["parents"]],
        }

    def diff_entries(self, old: str, new: str) -> list[dict[str, Any]]:
        """The files changed from commit `old` to `new`, renames found, each with its hunks as GitHub gives them."""
        fields = self.repo.git("diff-tree", "-r", "-z", "-M", old, new).decode().split("\0")
        out, i = [], 0
        while i < len(fields) - 1:
            meta = fields[i].lstrip(":").split()
            letter, paths = meta[4][0], fields[i + 1:i + (3 if meta[4][0] in "RC" else 2)]
            i += 1 + len(paths)
            patch = self._patch(meta)
            plus = sum(1 for line in (patch or "").splitlines() if line.startswith("+"))
            minus = sum(1 for line in (patch or "").splitlines() if line.startswith("-"))
            name, sha = paths[-1], meta[3] if letter != "D" else meta[2]
            entry: dict[str, Any] = {
                "sha": sha, "filename": name, "status": STATUS[letter], "additions": plus, "deletions": minus,
                "changes": plus + minus, "blob_url": f"{self.url}/{self.owner}/{self.name}/blob/{new}/{name}",
                "raw_url": f"{self.url}/{self.owner}/{self.name}/raw/{new}/{name}",
                "contents_url": self.api(f"contents/{name}?ref={new}")}
            if patch is not None:
                entry["patch"] = patch
            if letter in "RC":
                entry["previous_filename"] = paths[0]
            out.append(entry)
        return out

    def _patch(self, meta: list[str]) -> str | None:
        """The hunks of one file's change (GitHub drops the diff's header lines), made blob to blob so that no
        path of the tree is ever given to git; None for binary content, a submodule or a removal."""
        omode, nmode, osha, nsha, letter = meta
        if letter[0] == "D" or SUBMODULE_MODE in (omode, nmode):
            return None
        old = osha if omode != "000000" else self.repo.write_blob(b"")
        text = self.repo.git("diff", "--no-color", "--no-ext-diff", old, nsha).decode("utf-8", "replace")
        if "\nBinary files " in text or text.startswith("Binary files "):
            return None
        at = text.find("\n@@")
        return text[at + 1:].removesuffix("\n") if at >= 0 else None


SUBMODULE_MODE = "160000"
STATUS = {"A": "added", "D": "removed", "M": "modified", "R": "renamed", "C": "copied", "T": "changed"}


class Reply(Exception):
    """Raised by a route to answer with `status` and `body`."""

    def __init__(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        super().__init__(status)
        self.status, self.body, self.headers = status, body, headers or {}


def error(status: int, message: str) -> Reply:
    return Reply(status, {"message": message, "documentation_url": DOCS, "status": str(status)})


def validation(message: str) -> Reply:
    return Reply(422, {"message": message, "documentation_url": DOCS})


EMPTY = "Git Repository is empty."
ROUTES = [
    ("GET", re.compile(r"^git/ref/(heads/.+)$"), "ref"),
    ("GET", re.compile(r"^git/matching-refs/(heads/.*)$"), "matching-refs"),
    ("PATCH", re.compile(r"^git/refs/(heads/.+)$"), "refs"),
    ("POST", re.compile(r"^git/refs$"), "refs"),
    ("POST", re.compile(r"^git/blobs$"), "blobs"),
    ("GET", re.compile(r"^git/blobs/([0-9a-f]{40})$"), "blobs"),
    ("POST", re.compile(r"^git/trees$"), "trees"),
    ("GET", re.compile(r"^git/trees/([0-9a-f]{40})$"), "trees"),
    ("POST", re.compile(r"^git/commits$"), "commits"),
    ("GET", re.compile(r"^git/commits/([0-9a-f]{40})$"), "commits"),
    ("PUT", re.compile(r"^contents/(.+)$"), "contents"),
    ("GET", re.compile(r"^compare/(.+)$"), "compare"),
]


class Api:
    """The routes; each returns (status, body) or raises Reply."""

    def __init__(self, server: GitHubServer) -> None:
        self.s = server
        self.repo = server.repo

    def dispatch(self, method: str, route: str, arg: str, query: dict[str, list[str]], body: Any) -> tuple[int, Any]:
        handler = getattr(self, f"{method.lower()}_{route.replace('-', '_')}")
        if method in ("POST", "PATCH", "PUT"):
            with self.s.write_lock:
                result: tuple[int, Any] = handler(arg, query, body)
                return result
        result = handler(arg, query, body)
        return result

    def _not_empty(self) -> None:
        if self.repo.is_empty():
            raise error(409, EMPTY)

    def get_ref(self, ref: str, _q: Any, _b: Any) -> tuple[int, Any]:
        self._not_empty()
        sha = self.repo.ref(f"refs/{ref}")
        if sha is None:
            raise error(404, "Not Found")
        answer = self.s.ref_json(f"refs/{ref}", sha)
        self._head_read()
        return 200, answer

    def _head_read(self) -> None:
        while self.s.faults.after_head_read:
            self.s.faults.after_head_read.pop(0)()

    def get_matching_refs(self, prefix: str, _q: Any, _b: Any) -> tuple[int, Any]:
        self._not_empty()
        out = self.repo.text("for-each-ref", "--format=%(refname) %(objectname)", "refs/")
        pairs = [line.split() for line in out.splitlines() if line]
        return 200, [self.s.ref_json(r, sha) for r, sha in pairs if r.startswith(f"refs/{prefix}")]

    def patch_refs(self, ref: str, _q: Any, body: dict[str, Any]) -> tuple[int, Any]:
        self._not_empty()
        while self.s.faults.before_patch:
            self.s.faults.before_patch.pop(0)()
        new, force = body.get("sha"), bool(body.get("force", False))
        current = self.repo.ref(f"refs/{ref}")
        if current is None:
            raise validation("Reference does not exist")
        if not isinstance(new, str) or self.repo.object_type(new) != "commit":
            raise validation("Object does not exist")
        if not force and not self.repo.is_ancestor(current, new):
            raise validation("Update is not a fast forward")
        try:
            self.repo.cas_ref(f"refs/{ref}", new, current)
        except GitError:
            raise validation("Reference cannot be updated") from None
        return 200, self.s.ref_json(f"refs/{ref}", new)

    def post_refs(self, _a: str, _q: Any, body: dict[str, Any]) -> tuple[int, Any]:
        self._not_empty()
        ref, sha = body.get("ref", ""), body.get("sha", "")
        if not ref.startswith("refs/") or ref.count("/") < 2:
            raise validation("Reference name is not well-formed")
        if self.repo.object_type(sha) != "commit":
            raise validation("Object does not exist")
        try:
            self.repo.cas_ref(ref, sha, None)
        except GitError:
            raise validation("Reference already exists") from None
        return 201, self.s.ref_json(ref, sha)

    def post_blobs(self, _a: str, _q: Any, body: dict[str, Any]) -> tuple[int, Any]:
        self._not_empty()
        content, encoding = body.get("content"), body.get("encoding", "utf-8")
        if not isinstance(content, str) or encoding not in ("utf-8", "base64"):
            raise validation("Invalid request.")
        data = base64.b64decode(content) if encoding == "base64" else content.encode()
        sha = self.repo.write_blob(data)
        return 201, {"url": self.s.api(f"git/blobs/{sha}"), "sha": sha}

    def get_blobs(self, sha: str, _q: Any, _b: Any) -> tuple[int, Any]:
        self._not_empty()
        if self.repo.object_type(sha) != "blob":
            raise error(404, "Not Found")
        data = self.repo.git("cat-file", "blob", sha)
        encoded = base64.encodebytes(data).decode()
        return 200, {"sha": sha, "node_id": f"B_{sha[:12]}", "size": len(data), "url": self.s.api(f"git/blobs/{sha}"),
                     "content": encoded, "encoding": "base64"}

    def post_trees(self, _a: str, _q: Any, body: dict[str, Any]) -> tuple[int, Any]:
        self._not_empty()
        base = body.get("base_tree")
        if base is not None and self.repo.object_type(base) != "tree":
            raise validation("Invalid tree info")
        entries: list[tuple[str, str, str | None]] = []
        for item in body.get("tree", []):
            path, mode = item.get("path", ""), item.get("mode", "")
            if mode not in ("100644", "100755", "040000", "160000", "120000") or not path or path.startswith("/"):
                raise validation("Invalid tree info")
            if "content" in item:
                entries.append((path, mode, self.repo.write_blob(item["content"].encode())))
            elif item.get("sha") is None:
                entries.append((path, mode, None))
            elif self.repo.object_type(item["sha"]) is None:
                raise validation("Invalid tree info")
            else:
                entries.append((path, mode, item["sha"]))
        sha = self.repo.write_tree(base, entries)
        return 201, self.s.tree_json(sha, recursive=False)

    def get_trees(self, sha: str, query: dict[str, list[str]], _b: Any) -> tuple[int, Any]:
        self._not_empty()
        kind = self.repo.object_type(sha)
        if kind == "commit":
            sha = self.repo.text("rev-parse", f"{sha}^{{tree}}")
        elif kind != "tree":
            raise error(404, "Not Found")
        return 200, self.s.tree_json(sha, recursive=bool(query.get("recursive")))

    def post_commits(self, _a: str, _q: Any, body: dict[str, Any]) -> tuple[int, Any]:
        self._not_empty()
        tree, parents = body.get("tree", ""), body.get("parents", [])
        if self.repo.object_type(tree) != "tree" or any(self.repo.object_type(p) != "commit" for p in parents):
            raise validation("Tree SHA does not exist" if self.repo.object_type(tree) != "tree" else "Parent SHA does not exist or is not a commit object")
        sha = self.repo.commit_tree(tree, parents, body.get("message", ""), body.get("author"))
        return 201, self.s.commit_json(sha)

    def get_commits(self, sha: str, _q: Any, _b: Any) -> tuple[int, Any]:
        self._not_empty()
        if self.repo.object_type(sha) != "commit":
            raise error(404, "Not Found")
        return 200, self.s.commit_json(sha)

    def put_contents(self, path: str, _q: Any, body: dict[str, Any]) -> tuple[int, Any]:
        """Create a file (only creation is needed: it seeds an empty repository)."""
        branch = body.get("branch") or "main"
        data = base64.b64decode(body.get("content", ""))
        head = None if self.repo.is_empty() else self.repo.ref(f"refs/heads/{branch}")
        base = self.repo.text("rev-parse", f"{head}^{{tree}}") if head else None
        if head and body.get("sha") is None and self.repo.object_type(f"{head}:{path}") is not None:
            raise validation('Invalid request.\n\n"sha" wasn\'t supplied.')
        blob = self.repo.write_blob(data)
        tree = self.repo.write_tree(base, [(path, "100644", blob)])
        commit = self.repo.commit_tree(tree, [head] if head else [], body.get("message", ""), body.get("committer"))
        self.repo.cas_ref(f"refs/heads/{branch}", commit, head)
        if head is None:
            self.repo.git("symbolic-ref", "HEAD", f"refs/heads/{branch}")
        cj = self.s.commit_json(commit)
        name = path.rsplit("/", 1)[-1]
        content = {"name": name, "path": path, "sha": blob, "size": len(data), "type": "file",
                   "url": self.s.api(f"contents/{path}"), "git_url": self.s.api(f"git/blobs/{blob}"),
                   "html_url": f"{self.s.url}/{self.s.owner}/{self.s.name}/blob/{branch}/{path}",
                   "download_url": f"{self.s.url}/raw/{branch}/{path}"}
        return 201, {"content": content, "commit": cj}


    def get_compare(self, basehead: str, _q: Any, _b: Any) -> tuple[int, Any]:
        """`BASE...HEAD`: GitHub's three-dot comparison (commits and files since the merge base; 250 and 300 at most)."""
        self._not_empty()
        base_name, sep, head_name = basehead.partition("...")
        base, head = self.repo.ref(base_name), self.repo.ref(head_name) if sep else None
        if base is None or head is None:
            raise error(404, "Not Found")
        try:
            fork = self.repo.text("merge-base", base, head)
        except GitError:
            raise error(404, f"No common ancestor between {base_name} and {head_name}.") from None
        ahead, behind = (int(self.repo.text("rev-list", "--count", f"{a}..{b}")) for a, b in ((base, head), (head, base)))
        status = "identical" if not ahead and not behind else "behind" if not ahead else "ahead" if not behind else "diverged"
        commits = self.repo.text("rev-list", "--reverse", f"{fork}..{head}").split()
        answer = {
            "url": self.s.api(f"compare/{basehead}"), "html_url": f"{self.s.url}/{self.s.owner}/{self.s.name}/compare/{basehead}",
            "permalink_url": f"{self.s.url}/{self.s.owner}/{self.s.name}/compare/{base}...{head}",
            "diff_url": f"{self.s.url}/{self.s.owner}/{self.s.name}/compare/{basehead}.diff",
            "patch_url": f"{self.s.url}/{self.s.owner}/{self.s.name}/compare/{basehead}.patch",
            "base_commit": self.s.listed_commit_json(base), "merge_base_commit": self.s.listed_commit_json(fork),
            "status": status, "ahead_by": ahead, "behind_by": behind, "total_commits": len(commits),
            "commits": [self.s.listed_commit_json(c) for c in commits[:250]],
            "files": self.s.diff_entries(fork, head)[:300],
        }
        self._head_read()
        return 200, answer


def _handler_for(server: GitHubServer) -> type[BaseHTTPRequestHandler]:
    api = Api(server)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
            return

        def _route(self, method: str) -> tuple[str, str, dict[str, list[str]]] | None:
            parts = urlsplit(self.path)
            prefix = f"/repos/{server.owner}/{server.name}/"
            if not parts.path.startswith(prefix):
                return None
            tail = unquote(parts.path[len(prefix):])
            for m, rx, route in ROUTES:
                match = rx.match(tail) if m == method else None
                if match:
                    return route, (match.group(1) if match.groups() else ""), parse_qs(parts.query)
            return None

        def _body(self) -> Any:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            return json.loads(raw) if raw else None

        def _send(self, status: int, body: Any, headers: dict[str, str], drip: bool = False) -> None:
            data = json.dumps(body).encode()
            server.rate_remaining = max(0, server.rate_remaining - 1)
            base = {
                "Content-Type": "application/json; charset=utf-8",
                "x-ratelimit-limit": "5000", "x-ratelimit-remaining": str(server.rate_remaining),
                "x-ratelimit-reset": str(int(time.time()) + 3600), "x-ratelimit-used": str(5000 - server.rate_remaining),
                "x-ratelimit-resource": "core", "x-github-api-version-selected": "2022-11-28",
            }
            if self.command == "GET" and status == 200:
                base["Cache-Control"] = "private, max-age=60, s-maxage=60"
                base["ETag"] = '"%s"' % abs(hash(data))
            base.update(headers)
            if drip:
                self._drip(status, base, data)
                return
            self.send_response(status)
            for k, v in base.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _drip(self, status: int, headers: dict[str, str], data: bytes) -> None:
            """The whole answer, a byte every `drip_s`: every read of the client gets something before any
            per-read time-out, so only a bound on the whole request ends it."""
            head = f"HTTP/1.1 {status} {self.responses[status][0]}\r\n" + "".join(
                f"{k}: {v}\r\n" for k, v in {**headers, "Content-Length": str(len(data))}.items()) + "\r\n"
            self.close_connection = True
            try:
                for byte in head.encode() + data:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    time.sleep(server.faults.drip_s)
            except OSError:  # the client gave up (what the tests want)
                server.dripped_abandoned += 1

        def _handle(self, method: str) -> None:
            body = self._body()
            found = self._route(method)
            route = found[0] if found else "?"
            entry = Logged(method, route, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            server.log.append(entry)
            status, out, headers = self._answer(method, found, body)
            entry.status = status
            if server.check is not None:
                server.check(method, route, status, body, out)
            if method == "PATCH" and status == 200 and server.faults.lose_patch_response > 0:
                server.faults.lose_patch_response -= 1
                self.close_connection = True
                self.connection.shutdown(2)
                return
            self._send(status, out, headers, server.faults.take_drip(method, route))

        def _answer(self, method: str, found: tuple[str, str, dict[str, list[str]]] | None, body: Any) -> tuple[int, Any, dict[str, str]]:
            if self.headers.get("Authorization") != f"Bearer {server.token}":
                return 401, {"message": "Bad credentials", "documentation_url": DOCS, "status": "401"}, {}
            if found is None:
                return 404, {"message": "Not Found", "documentation_url": DOCS, "status": "404"}, {}
            route, arg, query = found
            canned = server.faults.take(method, route)
            if canned is not None:
                return canned.status, canned.body, canned.headers
            try:
                status, out = api.dispatch(method, route, arg, query, body)
            except Reply as reply:
                return reply.status, reply.body, reply.headers
            return status, out, {}

        def do_GET(self) -> None:
            self._handle("GET")

        def do_POST(self) -> None:
            self._handle("POST")

        def do_PATCH(self) -> None:
            self._handle("PATCH")

        def do_PUT(self) -> None:
            self._handle("PUT")

    return Handler
