"""The workspace's git repository: the only module that uses GitPython.

Commits are built with plumbing on a private index file, from the exact bytes a
caller validated (never re-read from the work tree), and land with a
compare-and-swap on HEAD (`git update-ref HEAD new old`): if HEAD moved, nothing
is written and HeadMovedError says so. git's own `.git/index.lock` held by
another git process means wait; one that stays is reported, never deleted.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path
from typing import Iterator, Sequence

import git
from gitdb import IStream

from kbsync import proc
from kbsync.errors import GitError

log = logging.getLogger(__name__)

ZERO_SHA = "0" * 40
STALE_INDEX_LOCK_S = 60.0


class HeadMovedError(GitError):
    """HEAD changed between reading it and updating it; rebuild the commit on the new HEAD."""


class IndexLockedError(GitError):
    """git's index.lock is held (busy) or was left behind (stale)."""

    def __init__(self, message: str, *, path: str, stale: bool) -> None:
        super().__init__(message, path=path)
        self.stale = stale


@dataclass(frozen=True)
class Staged:
    """One path of a commit: its bytes and mode, or `data=None` for a deletion."""

    relpath: str
    data: bytes | None
    executable: bool = False


@contextlib.contextmanager
def _open(root: Path) -> Iterator[git.Repo]:
    try:
        repo = git.Repo(root)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
        raise GitError("not a git repository; run `kbsync init` here first", path=str(root)) from exc
    try:
        yield repo
    finally:
        repo.close()


def _run(repo: git.Repo, *args: str, env: dict[str, str] | None = None, stdin: bytes | None = None) -> str:
    """One git command in the work tree (through kbsync.proc); GitError naming it when it fails."""
    return proc.run(["git", *args], cwd=str(repo.working_tree_dir), env=env, input=stdin).stdout.decode(
        "utf-8", "surrogateescape")


def is_repo(root: Path) -> bool:
    return (root / ".git").exists()


def head_sha(root: Path) -> str | None:
    """The commit HEAD points to, or None on an unborn branch."""
    with _open(root) as repo:
        try:
            return str(repo.head.commit.hexsha)
        except ValueError:
            return None


def changed_paths(root: Path) -> list[str]:
    """Work-tree paths that differ from HEAD (modified, added, deleted, untracked), sorted.

    Runs `git status` without optional locks, so it never competes with another
    git process for index.lock.
    """
    with _open(root) as repo:
        out = _run(repo, "--no-optional-locks", "status", "--porcelain=v1", "-z",
                   "--untracked-files=all", "--no-renames")
    return sorted({entry[3:] for entry in out.split("\0") if len(entry) > 3})


def head_blob(root: Path, relpath: str) -> bytes | None:
    """A file's bytes as committed at HEAD, or None if HEAD has no such file."""
    with _open(root) as repo:
        try:
            blob = repo.head.commit.tree / relpath
        except (ValueError, KeyError):
            return None
        data: bytes = blob.data_stream.read()
        return data


def index_lock(root: Path) -> Path:
    return root / ".git" / "index.lock"


def wait_index_unlocked(root: Path, wait_s: float, *, now: float | None = None) -> None:
    """Return once git's index.lock is absent; IndexLockedError if it stays `wait_s`.

    A lock older than STALE_INDEX_LOCK_S is reported as stale (a git command
    probably crashed); it is left in place for a person to remove.
    """
    lock = index_lock(root)
    deadline = time.monotonic() + wait_s
    while True:
        try:
            age = (now or time.time()) - lock.stat().st_mtime
        except FileNotFoundError:
            return
        if age > STALE_INDEX_LOCK_S:
            raise IndexLockedError(
                f"stale: left behind {int(age)} s ago; if no git command is running, remove it", path=str(lock),
                stale=True)
        if time.monotonic() >= deadline:
            raise IndexLockedError("busy: another git command holds it; will retry", path=str(lock), stale=False)
        time.sleep(0.05)


def _store_blobs(repo: git.Repo, files: Sequence[Staged]) -> str:
    """Write each file's bytes as a blob; the `--index-info` lines that stage them."""
    lines = []
    for f in files:
        if f.data is None:
            lines.append(f"0 {ZERO_SHA}\t{f.relpath}\n")
            continue
        stored = repo.odb.store(IStream("blob", len(f.data), BytesIO(f.data)))
        mode = "100755" if f.executable else "100644"
        lines.append(f"{mode} {stored.hexsha.decode()}\t{f.relpath}\n")
    return "".join(lines)


def _author_env(name: str, email: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(GIT_AUTHOR_NAME=name, GIT_AUTHOR_EMAIL=email, GIT_COMMITTER_NAME=name, GIT_COMMITTER_EMAIL=email)
    return env


def commit_files(
    root: Path,
    files: Sequence[Staged],
    message: str,
    *,
    expected_head: str | None,
    author: tuple[str, str],
) -> str | None:
    """Commit exactly `files` on top of `expected_head`; the new sha, or None if the tree is unchanged.

    The commit lands only if HEAD is still `expected_head` (HeadMovedError
    otherwise). The real index is then brought in line for the committed paths.
    """
    with _open(root) as repo:
        info = _store_blobs(repo, files)
        tmp_index = Path(repo.git_dir) / f"kbsync-index-{os.getpid()}"
        env = dict(os.environ, GIT_INDEX_FILE=str(tmp_index))
        try:
            _run(repo, "read-tree", *([expected_head] if expected_head else ["--empty"]), env=env)
            _run(repo, "update-index", "--add", "--remove", "--index-info", env=env, stdin=info.encode())
            tree = _run(repo, "write-tree", env=env).strip()
        finally:
            with contextlib.suppress(FileNotFoundError):
                tmp_index.unlink()
        if expected_head and tree == _run(repo, "rev-parse", f"{expected_head}^{{tree}}").strip():
            return None
        parents = ["-p", expected_head] if expected_head else []
        sha = _run(repo, "commit-tree", tree, *parents, env=_author_env(*author), stdin=message.encode()).strip()
        try:
            _run(repo, "update-ref", "-m", f"kbsync: {message.splitlines()[0]}", "HEAD", sha,
                 expected_head or ZERO_SHA)
        except GitError as exc:
            raise HeadMovedError("HEAD moved while committing; the commit was not made", path=str(root)) from exc
        _sync_index(repo, info)
        return sha


def _sync_index(repo: git.Repo, info: str, attempts: int = 20) -> None:
    """Stage the committed blobs in the real index too, so `git status` agrees with HEAD."""
    for _ in range(attempts):
        try:
            _run(repo, "update-index", "--add", "--remove", "--index-info", stdin=info.encode())
            return
        except GitError:
            time.sleep(0.1)
    log.warning("%s: committed, but git's index stayed locked; `git status` may show the committed files as staged",
                repo.working_tree_dir)
