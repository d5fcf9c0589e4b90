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
from gitdb import IStream, LooseObjectDB

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


def head_blobs(root: Path, relpaths: Sequence[str]) -> dict[str, bytes | None]:
    """Each file's bytes as committed at HEAD (None where HEAD has no such file), from one `git cat-file`."""
    out: dict[str, bytes | None] = dict.fromkeys(relpaths)
    if not relpaths or head_sha(root) is None:
        return out
    query = "".join(f"HEAD:{rel}\n" for rel in relpaths).encode("utf-8")
    data = proc.run(["git", "cat-file", "--batch"], cwd=root, input=query).stdout
    pos = 0
    for rel in relpaths:
        end = data.index(b"\n", pos)
        header = data[pos:end].split()
        pos = end + 1
        if header[-1] == b"missing" or header[1] != b"blob":
            continue
        size = int(header[2])
        out[rel] = data[pos:pos + size]
        pos += size + 1
    return out


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
    loose = LooseObjectDB(os.path.join(repo.git_dir, "objects"))
    lines = []
    for f in files:
        if f.data is None:
            lines.append(f"0 {ZERO_SHA}\t{f.relpath}\n")
            continue
        stored = loose.store(IStream("blob", len(f.data), BytesIO(f.data)))
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
            _run(repo, "update-index", "-q", "--refresh")  # record stat data, so the next status need not re-hash
            return
        except GitError:
            time.sleep(0.1)
    log.warning("%s: committed, but git's index stayed locked; `git status` may show the committed files as staged",
                repo.working_tree_dir)


# ---- sync: remotes, trees and merges (used by kbsync.syncer and kbsync.remotes) ---------------

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


@dataclass(frozen=True)
class TreeChange:
    """One path that differs between two trees: its (mode, sha) on each side, None where absent."""

    relpath: str
    old: tuple[str, str] | None
    new: tuple[str, str] | None


def _bytes(repo: git.Repo, *args: str, stdin: bytes | None = None, env: dict[str, str] | None = None) -> bytes:
    return proc.run(["git", *args], cwd=str(repo.working_tree_dir), input=stdin, env=env).stdout


def fetch(root: Path, remote: str, branch: str) -> str | None:
    """Fetch `branch` from `remote` into its remote-tracking ref; its commit, or None if the remote has no such branch."""
    tracking = f"refs/remotes/{remote}/{branch}"
    with _open(root) as repo:
        done = proc.run(["git", "fetch", "--quiet", "--no-tags", remote, f"+refs/heads/{branch}:{tracking}"],
                        cwd=str(repo.working_tree_dir), check=False)
        if done.returncode != 0:
            err = done.stderr.decode("utf-8", "replace")
            if "couldn't find remote ref" in err:
                return None
            raise GitError(f"git fetch {remote} failed: {err.strip().splitlines()[-1] if err.strip() else done.returncode}; "
                           "check the remote and the network, then sync again")
        return _run(repo, "rev-parse", "--verify", f"{tracking}^{{commit}}").strip()


def push(root: Path, remote: str, branch: str, sha: str) -> bool:
    """Push commit `sha` to `branch` without force; False when the remote refused it as not a fast forward."""
    with _open(root) as repo:
        done = proc.run(["git", "push", "--porcelain", remote, f"{sha}:refs/heads/{branch}"],
                        cwd=str(repo.working_tree_dir), check=False)
    if done.returncode == 0:
        return True
    out = (done.stdout + done.stderr).decode("utf-8", "replace")
    if "[rejected]" in out or "[remote rejected]" in out and "cannot lock ref" in out:
        return False
    last = out.strip().splitlines()[-1] if out.strip() else f"exit {done.returncode}"
    raise GitError(f"git push {remote} failed: {last}; check the remote and its credentials, then sync again")


def is_ancestor(root: Path, old: str, new: str) -> bool:
    with _open(root) as repo:
        return proc.run(["git", "merge-base", "--is-ancestor", old, new], cwd=str(repo.working_tree_dir),
                        check=False).returncode == 0


def merge_base(root: Path, a: str, b: str) -> str | None:
    with _open(root) as repo:
        done = proc.run(["git", "merge-base", a, b], cwd=str(repo.working_tree_dir), check=False)
    return done.stdout.decode().strip() or None


def tree_of(root: Path, commit: str | None) -> str:
    """The tree of `commit`; the empty tree for None."""
    if commit is None:
        return EMPTY_TREE
    with _open(root) as repo:
        return _run(repo, "rev-parse", f"{commit}^{{tree}}").strip()


def has_object(root: Path, sha: str) -> bool:
    with _open(root) as repo:
        return proc.run(["git", "cat-file", "-e", sha], cwd=str(repo.working_tree_dir), check=False).returncode == 0


def missing_objects(root: Path, shas: Sequence[str]) -> set[str]:
    """Which of `shas` the repository does not hold."""
    if not shas:
        return set()
    with _open(root) as repo:
        out = _bytes(repo, "cat-file", "--batch-check", stdin="".join(f"{s}\n" for s in shas).encode())
    return {line.split()[0] for line in out.decode().splitlines() if line.endswith(" missing")}


def diff_trees(root: Path, old: str, new: str) -> list[TreeChange]:
    """Every file path whose blob or mode differs between trees `old` and `new` (no rename detection)."""
    with _open(root) as repo:
        out = _bytes(repo, "diff-tree", "-r", "-z", "--no-renames", old, new).decode("utf-8", "surrogateescape")
    fields = out.split("\0")
    changes = []
    for meta, relpath in zip(fields[0::2], fields[1::2]):
        omode, nmode, osha, nsha, _status = meta.lstrip(":").split()
        changes.append(TreeChange(relpath, None if omode == "000000" else (omode, osha),
                                  None if nmode == "000000" else (nmode, nsha)))
    return changes


def read_blobs(root: Path, specs: Sequence[str]) -> list[bytes | None]:
    """The bytes of each object named in `specs` (`<sha>` or `<tree>:<path>`), None where it does not exist."""
    if not specs:
        return []
    with _open(root) as repo:
        out = _bytes(repo, "cat-file", "--batch", stdin="".join(f"{s}\n" for s in specs).encode())
    result: list[bytes | None] = []
    pos = 0
    for _ in specs:
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        if header[-1] == b"missing" or header[1] != b"blob":
            result.append(None)
            pos = end + 1
            if header[-1] != b"missing":
                pos += int(header[2]) + 1
            continue
        size = int(header[2])
        result.append(out[end + 1:end + 1 + size])
        pos = end + 1 + size + 1
    return result


def write_blob(root: Path, data: bytes) -> str:
    with _open(root) as repo:
        return str(repo.odb.store(IStream("blob", len(data), BytesIO(data))).hexsha.decode())


def list_tree(root: Path, tree: str) -> dict[str, tuple[str, str]]:
    """Every file of `tree`: relpath -> (mode, blob sha)."""
    with _open(root) as repo:
        out = _bytes(repo, "ls-tree", "-r", "-z", tree).decode("utf-8", "surrogateescape")
    files = {}
    for item in filter(None, out.split("\0")):
        meta, relpath = item.split("\t", 1)
        mode, _kind, sha = meta.split()
        files[relpath] = (mode, sha)
    return files


def build_tree(root: Path, base: str | None, entries: Sequence[tuple[str, str, str | None]]) -> str:
    """A tree: `base` (or empty) with each (relpath, mode, sha) set, or removed where sha is None."""
    info = "".join(f"{mode} {sha}\t{p}\n" if sha else f"0 {ZERO_SHA}\t{p}\n" for p, mode, sha in entries)
    with _open(root) as repo:
        tmp_index = Path(repo.git_dir) / f"kbsync-sync-index-{os.getpid()}"
        env = dict(os.environ, GIT_INDEX_FILE=str(tmp_index))
        try:
            _run(repo, "read-tree", *([base] if base else ["--empty"]), env=env)
            _run(repo, "update-index", "--add", "--remove", "--index-info", env=env, stdin=info.encode())
            return _run(repo, "write-tree", env=env).strip()
        finally:
            with contextlib.suppress(FileNotFoundError):
                tmp_index.unlink()


def commit_tree(root: Path, tree: str, parents: Sequence[str], message: str, author: tuple[str, str]) -> str:
    args = [x for p in parents for x in ("-p", p)]
    with _open(root) as repo:
        return _run(repo, "commit-tree", tree, *args, env=_author_env(*author), stdin=message.encode()).strip()


def move_head(root: Path, new: str, old: str | None, changed: Sequence[TreeChange], reason: str) -> None:
    """Move HEAD from `old` to `new` (compare-and-swap) and stage `changed` (old -> new tree) in git's index."""
    with _open(root) as repo:
        try:
            _run(repo, "update-ref", "-m", f"kbsync: {reason}", "HEAD", new, old or ZERO_SHA)
        except GitError as exc:
            raise HeadMovedError("HEAD moved while syncing; nothing was lost, sync again", path=str(root)) from exc
        info = "".join(f"{c.new[0]} {c.new[1]}\t{c.relpath}\n" if c.new else f"0 {ZERO_SHA}\t{c.relpath}\n"
                       for c in changed)
        if info:
            _sync_index(repo, info)


def commit_subject(root: Path, commit: str) -> str:
    with _open(root) as repo:
        return _run(repo, "log", "-1", "--format=%s", commit).strip()


def outgoing_blobs(root: Path, head: str, remote_head: str | None) -> list[tuple[str, str]]:
    """(relpath, sha) of every blob reachable from `head` but not from `remote_head`: what a push would send."""
    with _open(root) as repo:
        args = ["rev-list", "--objects", head] + (["--not", remote_head] if remote_head else [])
        listed = [ln.split(" ", 1) for ln in _run(repo, *args).splitlines()]
        named = {parts[0]: parts[1] for parts in listed if len(parts) == 2}
        if not named:
            return []
        kinds = _bytes(repo, "cat-file", "--batch-check", stdin="".join(f"{s}\n" for s in named).encode())
    return [(named[sha], sha) for sha, kind, *_ in (ln.split() for ln in kinds.decode().splitlines()) if kind == "blob"]


def has_remote(root: Path, name: str) -> bool:
    """True if the repository has a remote called `name`."""
    with _open(root) as repo:
        return name in [r.name for r in repo.remotes]
