"""The GitHub API transport: a remote branch read and written through the Git Database API.

Pull: read the ref (never from a cache), and when it moved, list its tree,
fetch the blobs this repository lacks and rebuild the tree locally (its sha
must equal GitHub's). Push: blobs for the new contents (sha checked), trees on
`base_tree` = the remote head's tree holding only the changed paths (about 100
a request, deletions as a null sha), whose result must equal the local tree, a
commit whose parent is the head that was read, and `PATCH` of the ref with
`force: false`. A lost answer to the PATCH is settled by reading the ref again.
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path
from typing import Callable, Mapping, Sequence

import requests

from kbsync.config import SyncConfig
from kbsync.errors import ConfigError, RemoteError
from kbsync.git import repo
from kbsync.git.objects import Change, blob_id
from kbsync.store import pathgate
from kbsync.store.workspace import Workspace
from kbsync.sync import limits
from kbsync.sync.transports import hunks
from kbsync.sync.transports.base import RemoteHead
from kbsync.sync.transports.githubclient import (
    AnswerTooLargeError,
    Comparison,
    EmptyRepositoryError,
    FileChange,
    GitHubApi,
    LostResponseError,
    TreeEntry,
    request_policy,
)

log = logging.getLogger(__name__)

PATHS_PER_TREE = 100
SEED_FIRST = (".gitattributes", ".gitignore")
SHA = re.compile(r"^[0-9a-f]{40}$")
INLINE_MAX = 256 * 1024  # text up to this size goes inside the tree request (GitHub writes its blob)
BASE_WALK = 10  # remote commits read back, at most, to find one this repository holds


class ApiTransport:
    mode = "github-api"

    def __init__(self, root: Path, api: GitHubApi, branch: str, author: tuple[str, str],
                 known: Mapping[str, str] | None = None, *, sizes: SyncConfig = SyncConfig()) -> None:
        self.root, self.api, self.branch, self.author = root, api, branch, author
        self.sizes = sizes  # the size limits of the files taken from the remote (kbsync.sync.limits)
        self.where = f"{api.repository}/{branch}"
        self.trees: dict[str, str] = dict(known or {})  # remote commit -> its tree, held locally
        self.remote_blobs: set[str] = set()  # blob shas the remote is known to hold
        self.contended = False  # a push of this transport lost a race: look at the ref before sending
        self.last = next(iter(self.trees), None)  # the last remote commit seen: the next pull compares with it

    @property
    def requests_sent(self) -> int:
        return self.api.requests_sent

    # ---- pull ------------------------------------------------------------------------

    def pull(self) -> RemoteHead | None:
        head = self._compared() or self._listed()
        if head is not None:
            self.last = head.commit
        return head

    def _listed(self) -> RemoteHead | None:
        """The remote head the plain way: the ref read, its tree listed, the blobs this repository lacks."""
        try:
            sha = self.api.get_ref(self.branch, fresh=True)
        except EmptyRepositoryError:
            sha = self._seed()
        return None if sha is None else self._held(sha, self._fetch)

    def _held(self, sha: str, fetch: Callable[[str], str]) -> RemoteHead:
        """Remote commit `sha` with its tree held here: taken locally, or known, or got by `fetch`."""
        if not SHA.match(sha):
            raise RemoteError(f"GitHub answered {sha[:60]!r} as the head of {self.where}, which is no commit sha; "
                              "nothing was changed, check [github] api_url")
        local = repo.is_commit(self.root, sha)  # a clone's commit, or one a git machine fetched
        if sha not in self.trees or not repo.has_object(self.root, self.trees[sha]):
            self.trees[sha] = repo.tree_of(self.root, sha) if local else fetch(sha)
        return RemoteHead(sha, self.trees[sha], sha if local else None)

    def _compared(self) -> RemoteHead | None:
        """The remote head in one request where that works: GitHub's comparison of the branch with the last
        remote commit seen here (its tree held) names the head and every file changed since. The patches of
        those files are applied here where they give the blob GitHub named, other blobs are fetched, and the tree
        rebuilt on the old one must have the head's tree sha; else the head's tree is listed. None when there is
        nothing to compare with or GitHub cannot compare (the caller reads the ref, as without it)."""
        since = self.last
        if since is None or since not in self.trees or not repo.has_object(self.root, self.trees[since]):
            return None
        found = self.api.compare(since, self.branch)
        if found is None:
            return None
        return self._held(found.head, lambda head: self._rebuilt(self.trees[since], found) or self._fetch(head))

    def _rebuilt(self, old_tree: str, found: Comparison) -> str | None:
        """The tree of the compared head, rebuilt on `old_tree` from the changes; None if it cannot be."""
        files = repo.list_tree(self.root, old_tree)
        entries = changed_entries(files, found.changes) if found.complete else None
        if entries is None or found.tree is None:
            return None
        removed = {p for p, _m, sha in entries if sha is None}
        now = {p: m for p, (m, _s) in files.items() if p not in removed} | {p: m for p, m, sha in entries if sha}
        pathgate.check_remote_tree(found.head, now.items())  # before any path of it is handed to git
        if repo.tree_id(self.root, old_tree, entries) != found.tree:
            log.info("the changes GitHub listed up to %s do not rebuild its tree %s; listing the tree instead",
                     found.head[:12], found.tree)
            return None
        self._store_blobs(found.head, files, found.changes, {p: s for p, _m, s in entries if s})
        tree = repo.build_tree(self.root, old_tree, entries)
        self.remote_blobs |= {s for _p, _m, s in entries if s}
        return tree

    def _store_blobs(self, commit: str, files: Mapping[str, tuple[str, str]], changes: Sequence[FileChange],
                     paths: Mapping[str, str]) -> None:
        """Each blob of remote `commit` (`paths`: path -> blob sha) this repository lacks: from its change's patch
        on the old blob where that gives the very blob, else fetched within its path's size limit."""
        missing = repo.missing_objects(self.root, sorted(set(paths.values())))
        patched = [c for c in changes if c.sha in missing and c.patch is not None and c.status != "removed"]
        sources = [files[c.previous or c.path][1] for c in patched if (c.previous or c.path) in files]
        held = dict(zip(sources, repo.read_blobs(self.root, sources))) if sources else {}
        for c in patched:
            source = files.get(c.previous or c.path)
            old = held.get(source[1]) if source else b""
            new = None if old is None else hunks.apply(old, c.patch or "")
            if new is not None and blob_id(new) == c.sha and len(new) <= limits.limit_for(self.sizes, c.path):
                repo.write_blob(self.root, new)
                missing.discard(c.sha)
        self._fetch_blobs(commit, {p: s for p, s in paths.items() if s in missing})

    def _fetch_blobs(self, commit: str, paths: Mapping[str, str]) -> None:
        """Fetch each blob (`paths`: path -> blob sha), each read stopped at the smallest limit of its paths."""
        strictest: dict[str, str] = {}
        for path, sha in sorted(paths.items()):
            if sha not in strictest or limits.limit_for(self.sizes, path) < limits.limit_for(self.sizes, strictest[sha]):
                strictest[sha] = path
        for blob, path in sorted(strictest.items()):
            try:
                data = self.api.get_blob(blob, limits.limit_for(self.sizes, path))
            except AnswerTooLargeError as exc:
                raise limits.refusal(self.sizes, commit, path, None) from exc
            if len(data) > limits.limit_for(self.sizes, path):
                raise limits.refusal(self.sizes, commit, path, len(data))
            if repo.write_blob(self.root, data) != blob:
                raise RemoteError(f"blob {blob} from GitHub was stored under another sha; sync again")

    def _fetch(self, commit: str) -> str:
        """The tree of remote `commit`, held locally: one listing, the blobs this repository lacks, the tree
        rebuilt locally (it must have GitHub's sha)."""
        tree_sha, files, sizes = self.api.get_listing(commit)
        pathgate.check_remote_tree(commit, [(p, mode) for p, (mode, _s) in files.items()])  # before any blob is fetched
        missing = repo.missing_objects(self.root, [s for _m, s in files.values()])
        wanted = {p: s for p, (_m, s) in files.items() if s in missing}
        limits.check_sizes(self.sizes, commit, [(p, sizes[p]) for p in wanted if p in sizes])
        self._fetch_blobs(commit, wanted)
        tree = repo.build_tree(self.root, None, [(p, mode, s) for p, (mode, s) in files.items()])
        if tree != tree_sha:
            raise RemoteError(f"the remote tree {tree_sha} rebuilt locally as {tree}; it holds entries kbsync "
                              "cannot sync, use mode = \"git\"")
        self.remote_blobs |= {s for _m, s in files.values()}
        return tree

    def _seed(self) -> str | None:
        """An empty repository gets its first commit through the contents API: one file of the local head."""
        head = repo.head_sha(self.root)
        if head is None:
            return None
        files = repo.list_tree(self.root, repo.tree_of(self.root, head))
        if not files:
            return None
        path = next((p for p in SEED_FIRST if p in files), min(files))
        (data,) = repo.read_blobs(self.root, [files[path][1]])
        log.info("GitHub repository %s is empty; seeding it with %s", self.api.repository, path)
        return self.api.put_file(path, data or b"", "kbsync: start the repository", self.branch)

    def base_tree(self, local_head: str | None, remote: RemoteHead, synced_tree: Callable[[], str | None]) -> str | None:
        """The merge base's tree where the remote's history reaches a commit held here (a clone, a machine that
        synced over git before), as in git mode; else the tree last synced; else None (no common history)."""
        if local_head is None:
            return synced_tree()
        held = remote.commit if remote.parent else None
        tree = synced_tree() if held is None else None
        if held is None and tree is None:
            held = self._held_ancestor(remote.commit)
        base = repo.merge_base(self.root, local_head, held) if held else None
        return repo.tree_of(self.root, base) if base else tree

    def _held_ancestor(self, commit: str) -> str | None:
        """The first commit of the remote's first-parent history that this repository holds (a bounded walk)."""
        for _ in range(BASE_WALK):
            parents = self.api.get_commit(commit).parents
            if not parents:
                return None
            commit = parents[0]
            if repo.is_commit(self.root, commit):
                return commit
        return None

    # ---- push ------------------------------------------------------------------------

    def outgoing(self, local_head: str, remote: RemoteHead | None) -> list[tuple[str, str]]:
        base = remote.tree if remote else repo.EMPTY_TREE
        changes = repo.diff_trees(self.root, base, repo.tree_of(self.root, local_head))
        return [(c.relpath, c.new[1]) for c in changes if c.new and c.new[1] not in self.remote_blobs]

    def push(self, local_head: str, remote: RemoteHead | None) -> RemoteHead | None:
        """See Transport.push. Once a race was lost, the ref is read again before anything is sent: under
        contention a round the remote moved during then costs one request instead of three (tree, commit,
        refused update), and an uncontended sync sends no more than before."""
        local_tree = repo.tree_of(self.root, local_head)
        if remote is not None and remote.tree == local_tree:
            return remote
        if self.contended and remote is not None and self.api.get_ref(self.branch, fresh=True) != remote.commit:
            return None
        tree = self._send_tree(remote, local_tree)
        message = repo.commit_subject(self.root, local_head) + "\n"
        who = {"name": self.author[0], "email": self.author[1]}
        commit = self.api.create_commit(message, tree, [remote.commit] if remote else [], who)
        if not self._move_ref(remote, commit):
            self.contended = True
            return None
        self.trees[commit], self.last = local_tree, commit
        return RemoteHead(commit, local_tree, None)

    def _send_tree(self, remote: RemoteHead | None, local_tree: str, inline: bool = True) -> str:
        """Send the new contents and build the local tree on the remote's; its sha, checked equal to the local
        one. Text goes inside the tree requests (no request a blob); other bytes are sent as blobs first. Should
        GitHub build another tree from the text, the push is made again with blobs only."""
        changes = repo.diff_trees(self.root, remote.tree if remote else repo.EMPTY_TREE, local_tree)
        new = sorted({c.new[1] for c in changes if c.new} - self.remote_blobs)
        texts = self._texts(new) if inline else {}
        for sha, data in zip(new, repo.read_blobs(self.root, new)):
            if sha not in texts:
                self.api.create_blob(data or b"")
                self.remote_blobs.add(sha)
        entries = [TreeEntry(c.relpath, (c.new or c.old or ("100644", ""))[0], c.new[1] if c.new else None,
                             texts.get(c.new[1]) if c.new else None) for c in changes]
        tree = remote.tree if remote else None
        for i in range(0, len(entries), PATHS_PER_TREE):
            tree = self.api.create_tree(tree, entries[i:i + PATHS_PER_TREE])
        if tree != local_tree and texts:
            log.info("GitHub built tree %s from the text sent, not %s; sending blobs instead", tree, local_tree)
            return self._send_tree(remote, local_tree, inline=False)
        if tree != local_tree:
            raise RemoteError(f"GitHub built tree {tree}, but the local tree is {local_tree}; the branch was not "
                              "moved, sync again")
        self.remote_blobs |= set(texts)
        return local_tree

    def _texts(self, shas: list[str]) -> dict[str, str]:
        """The blobs of `shas` that are UTF-8 text of modest size, as text."""
        out = {}
        for sha, data in zip(shas, repo.read_blobs(self.root, shas)):
            try:
                if data is not None and len(data) <= INLINE_MAX:
                    out[sha] = data.decode("utf-8")
            except UnicodeDecodeError:
                pass
        return out

    def _move_ref(self, remote: RemoteHead | None, commit: str) -> bool:
        """Fast-forward the branch to `commit`; False if the remote moved meanwhile."""
        for _ in range(2):
            try:
                if remote is None:
                    return self.api.create_ref(self.branch, commit)
                return self.api.update_ref(self.branch, commit)
            except LostResponseError as exc:
                now = self.api.get_ref(self.branch, fresh=True)
                log.info("%s; the branch is now at %s", exc, now)
                if now == commit:
                    return True
                if now != (remote.commit if remote else None):
                    return False
        raise RemoteError(f"GitHub did not answer the update of {self.where} twice; nothing was lost, sync again")


def changed_entries(files: Mapping[str, tuple[str, str]], changes: Sequence[FileChange]) -> list[Change] | None:
    """The tree entries (path, mode, blob sha, or None to remove) that turn `files` into the compared head,
    None for a change kbsync cannot place (an unknown status or path, a sha that is no sha). A new path takes
    the mode of the path it came from, else a plain file's; a wrong guess shows in the rebuilt tree's sha."""
    entries: list[Change] = []
    for c in changes:
        gone = c.previous if c.status == "renamed" else c.path if c.status == "removed" else None
        origin = files.get(c.previous or c.path) if c.status in ("renamed", "copied") else files.get(c.path)
        if c.status not in KNOWN_STATUS or (gone is not None and gone not in files):
            return None
        if gone is not None:
            entries.append((gone, files[gone][0], None))
        if c.status in ("removed", "unchanged"):
            continue
        if c.sha is None or not SHA.match(c.sha):
            return None
        entries.append((c.path, origin[0] if origin else "100644", c.sha))
    return entries


KNOWN_STATUS = ("added", "removed", "modified", "renamed", "copied", "changed", "unchanged")


def from_config(ws: Workspace, known: Mapping[str, str] | None = None) -> ApiTransport:
    """The transport for `[github]` and `[sync]` of the workspace's configuration."""
    gh, sc = ws.config.github, ws.config.sync
    if not gh.repository or gh.repository.count("/") != 1:
        raise ConfigError("[github] repository must be set to owner/name for mode = \"github-api\"", path=ws.config.source)
    token = os.environ.get(gh.token_env, "")
    if not token:
        raise ConfigError(f"set a GitHub token in the environment variable {gh.token_env} ([github] token_env)")
    api = GitHubApi(requests.Session(), api_url=gh.api_url, repository=gh.repository, token=token,
                    timeout_s=sc.timeout_s, policy=request_policy(sc.max_retries))
    return ApiTransport(ws.root, api, sc.branch, (ws.config.daemon.author_name, ws.config.daemon.author_email), known,
                        sizes=sc)
