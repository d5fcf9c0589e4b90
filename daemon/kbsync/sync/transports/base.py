"""What the sync needs from a transport: read the remote's head, send a local head."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol


@dataclass(frozen=True)
class RemoteHead:
    """The remote branch's commit (in the remote's history) and its tree, held in the local repository.

    `parent` is that commit when it also exists locally (git), so a merge can
    name it as a parent; None where only its tree was rebuilt locally (API).
    """

    commit: str
    tree: str
    parent: str | None


class Transport(Protocol):
    mode: str  # "git" or "github-api"
    where: str  # the remote and branch, for messages and for the sync state

    @property
    def requests_sent(self) -> int:
        """HTTP requests sent so far (0 for git)."""

    def pull(self) -> RemoteHead | None:
        """The remote branch's head with its tree in the local repository; None if the branch does not exist."""

    def base_tree(self, local_head: str | None, remote: RemoteHead, synced_tree: Callable[[], str | None]) -> str | None:
        """The tree both sides last agreed on (None: never synced); `synced_tree()` is the tree of the last
        remote commit this workspace integrated from this remote, if still held (asked only where needed)."""

    def outgoing(self, local_head: str, remote: RemoteHead | None) -> list[tuple[str, str]]:
        """(relpath, blob sha) of every file a push of `local_head` would send."""

    def push(self, local_head: str, remote: RemoteHead | None) -> RemoteHead | None:
        """Send `local_head` without force; the new remote head, or None if the remote moved meanwhile.
        Called only after what `outgoing` named passed the secret scan."""
