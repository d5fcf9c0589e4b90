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
from pathlib import Path
from typing import Callable, Mapping

import requests

from kbsync.git import repo as gitrepo
from kbsync.errors import ConfigError, RemoteError
from kbsync.sync.transports.base import RemoteHead
from kbsync.sync.transports.githubclient import EmptyRepositoryError, GitHubApi, LostResponseError, RetryPolicy, TreeEntry
from kbsync.store.workspace import Workspace

log = logging.getLogger(__name__)

PATHS_PER_TREE = 100
SEED_FIRST = (".gitattributes", ".gitignore")


class ApiTransport:
    mode = "github-api"

    def __init__(self, root: Path, api: GitHubApi, branch: str, author: tuple[str, str],
                 known: Mapping[str, str] | None = None) -> None:
        self.root, self.api, self.branch, self.author = root, api, branch, author
        self.where = f"{api.repository}/{branch}"
        self.trees: dict[str, str] = dict(known or {})  # remote commit -> its tree, held locally
        self.remote_blobs: set[str] = set()  # blob shas the remote is known to hold

    # ---- pull ------------------------------------------------------------------------

    def pull(self) -> RemoteHead | None:
        try:
            sha = self.api.get_ref(self.branch, fresh=True)
        except EmptyRepositoryError:
            sha = self._seed()
        if sha is None:
            return None
        if sha in self.trees and gitrepo.has_object(self.root, self.trees[sha]):
            return RemoteHead(sha, self.trees[sha], None)
        commit = self.api.get_commit(sha)
        files = self.api.get_tree(commit.tree)
        for blob in sorted(gitrepo.missing_objects(self.root, [s for _m, s in files.values()])):
            if gitrepo.write_blob(self.root, self.api.get_blob(blob)) != blob:
                raise RemoteError(f"blob {blob} from GitHub was stored under another sha; sync again")
        tree = gitrepo.build_tree(self.root, None, [(p, mode, s) for p, (mode, s) in files.items()])
        if tree != commit.tree:
            raise RemoteError(f"the remote tree {commit.tree} rebuilt locally as {tree}; it holds entries kbsync "
                              "cannot sync (submodules or links), use mode = \"git\"")
        self.remote_blobs |= {s for _m, s in files.values()}
        self.trees[sha] = tree
        return RemoteHead(sha, tree, None)

    def _seed(self) -> str | None:
        """An empty repository gets its first commit through the contents API: one file of the local head."""
        head = gitrepo.head_sha(self.root)
        if head is None:
            return None
        files = gitrepo.list_tree(self.root, gitrepo.tree_of(self.root, head))
        if not files:
            return None
        path = next((p for p in SEED_FIRST if p in files), min(files))
        (data,) = gitrepo.read_blobs(self.root, [files[path][1]])
        log.info("GitHub repository %s is empty; seeding it with %s", self.api.repository, path)
        return self.api.put_file(path, data or b"", "kbsync: start the repository", self.branch)

    def base_tree(self, local_head: str | None, remote: RemoteHead, synced_tree: Callable[[], str | None]) -> str | None:
        return synced_tree()

    # ---- push ------------------------------------------------------------------------

    def outgoing(self, local_head: str, remote: RemoteHead | None) -> list[tuple[str, str]]:
        base = remote.tree if remote else gitrepo.EMPTY_TREE
        changes = gitrepo.diff_trees(self.root, base, gitrepo.tree_of(self.root, local_head))
        return [(c.relpath, c.new[1]) for c in changes if c.new and c.new[1] not in self.remote_blobs]

    def push(self, local_head: str, remote: RemoteHead | None) -> RemoteHead | None:
        local_tree = gitrepo.tree_of(self.root, local_head)
        if remote is not None and remote.tree == local_tree:
            return remote
        tree = self._send_tree(remote, local_tree)
        message = gitrepo.commit_subject(self.root, local_head) + "\n"
        who = {"name": self.author[0], "email": self.author[1]}
        commit = self.api.create_commit(message, tree, [remote.commit] if remote else [], who)
        if not self._move_ref(remote, commit):
            return None
        self.trees[commit] = local_tree
        return RemoteHead(commit, local_tree, None)

    def _send_tree(self, remote: RemoteHead | None, local_tree: str) -> str:
        """Upload the new blobs and build the local tree on the remote's; its sha, checked equal to the local one."""
        changes = gitrepo.diff_trees(self.root, remote.tree if remote else gitrepo.EMPTY_TREE, local_tree)
        new = sorted({c.new[1] for c in changes if c.new} - self.remote_blobs)
        for sha, data in zip(new, gitrepo.read_blobs(self.root, new)):
            self.api.create_blob(data or b"")
            self.remote_blobs.add(sha)
        entries = [TreeEntry(c.relpath, (c.new or c.old or ("100644", ""))[0], c.new[1] if c.new else None)
                   for c in changes]
        tree = remote.tree if remote else None
        for i in range(0, len(entries), PATHS_PER_TREE):
            tree = self.api.create_tree(tree, entries[i:i + PATHS_PER_TREE])
        if tree != local_tree:
            raise RemoteError(f"GitHub built tree {tree}, but the local tree is {local_tree}; the branch was not "
                              "moved, sync again")
        return local_tree

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


def from_config(ws: Workspace, known: Mapping[str, str] | None = None) -> ApiTransport:
    """The transport for `[github]` and `[sync]` of the workspace's configuration."""
    gh, sc = ws.config.github, ws.config.sync
    if not gh.repository or gh.repository.count("/") != 1:
        raise ConfigError("[github] repository must be set to owner/name for mode = \"github-api\"", path=ws.config.source)
    token = os.environ.get(gh.token_env, "")
    if not token:
        raise ConfigError(f"set a GitHub token in the environment variable {gh.token_env} ([github] token_env)")
    api = GitHubApi(requests.Session(), api_url=gh.api_url, repository=gh.repository, token=token,
                    timeout_s=sc.timeout_s, policy=RetryPolicy(max_retries=sc.max_retries))
    return ApiTransport(ws.root, api, sc.branch, (ws.config.daemon.author_name, ws.config.daemon.author_email), known)
