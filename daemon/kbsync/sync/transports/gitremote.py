"""The git transport: fetch the branch from the workspace's git remote, push without force; each within
`[sync] timeout_s`."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from kbsync.git import repo
from kbsync.sync.transports.base import RemoteHead


class GitTransport:
    mode = "git"

    def __init__(self, root: Path, remote: str, branch: str, timeout_s: float) -> None:
        self.root, self.remote, self.branch, self.timeout_s = root, remote, branch, timeout_s
        self.where = f"{remote}/{branch}"

    @property
    def requests_sent(self) -> int:
        return 0

    def pull(self) -> RemoteHead | None:
        fetched = repo.fetch(self.root, self.remote, self.branch, timeout_s=self.timeout_s)
        return None if fetched is None else RemoteHead(fetched[0], fetched[1], fetched[0])

    def base_tree(self, local_head: str | None, remote: RemoteHead, synced_tree: Callable[[], str | None]) -> str | None:
        base = repo.merge_base(self.root, local_head, remote.commit) if local_head else None
        return None if base is None else repo.tree_of(self.root, base)

    def outgoing(self, local_head: str, remote: RemoteHead | None) -> list[tuple[str, str]]:
        return repo.outgoing_blobs(self.root, local_head, remote.commit if remote else None)

    def push(self, local_head: str, remote: RemoteHead | None) -> RemoteHead | None:
        if remote is not None and remote.commit == local_head:
            return remote
        if not repo.push(self.root, self.remote, self.branch, local_head, scanned=True,
                            timeout_s=self.timeout_s):  # check_outgoing ran
            return None
        return RemoteHead(local_head, repo.tree_of(self.root, local_head), local_head)
