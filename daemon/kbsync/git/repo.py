"""The workspace's git repository: git plumbing through kbsync.proc, objects written directly.

Commits are built from the exact bytes a caller validated (never re-read from
the work tree): blobs and the trees on the changed paths are written as loose
objects (kbsync.git.objects holds the formats), the commit with `git
commit-tree`, and it lands with a compare-and-swap on HEAD (`git update-ref
HEAD new old`): if HEAD moved, nothing is written and HeadMovedError says so.
git's own `.git/index.lock` held by another git process means wait; one that
stays is reported, never deleted.

No GitPython: kbsync's commands are short-lived processes, and GitPython's
import and its `git version` probes cost more than the git work of a small
commit. Every git call goes through kbsync.proc.
"""

from __future__ import annotations

import functools
import logging
import os
import stat
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Collection, Sequence

from kbsync import proc
from kbsync.core import protocol
from kbsync.errors import ConfigError, GitError
from kbsync.git import objects
from kbsync.store import fsio

log = logging.getLogger(__name__)

ZERO_SHA = "0" * 40
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
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


def is_repo(root: Path) -> bool:
    return (root / ".git").exists()


def init_repository(root: Path) -> None:
    """`git init` with the branch main, in an existing folder."""
    proc.git(["init", "-q", "-b", "main"], cwd=root)


def _exec(root: Path, args: Sequence[str], *, stdin: bytes | None = None, env: dict[str, str] | None = None,
          check: bool = True, timeout: float | None = None) -> subprocess.CompletedProcess[bytes]:
    """`git ARGS` in the work tree; a failure outside a repository says so and how to fix it."""
    try:
        done = proc.run(["git", *args], cwd=root, input=stdin, env=env, check=check, timeout=timeout)
    except GitError:
        _require_repo(root)
        raise
    if done.returncode != 0:
        _require_repo(root)
    return done


def _require_repo(root: Path) -> None:
    if not is_repo(root):
        raise GitError("not a git repository; run `kbsync init` here first", path=str(root))


def _bytes(root: Path, *args: str, stdin: bytes | None = None, env: dict[str, str] | None = None) -> bytes:
    return _exec(root, args, stdin=stdin, env=env).stdout


def _run(root: Path, *args: str, stdin: bytes | None = None, env: dict[str, str] | None = None) -> str:
    """One git command's standard output as text (file names kept byte for byte)."""
    return _bytes(root, *args, stdin=stdin, env=env).decode("utf-8", "surrogateescape")


def head_sha(root: Path) -> str | None:
    """The commit HEAD points to, or None on an unborn branch."""
    done = _exec(root, ["rev-parse", "-q", "--verify", "HEAD^{commit}"], check=False)
    return done.stdout.decode().strip() if done.returncode == 0 else None


def changed_paths(root: Path) -> list[str]:
    """Work-tree paths whose bytes differ from HEAD (modified, added, deleted, untracked), sorted; the protocol's
    files among them whatever .gitignore says.

    One `git status`, without optional locks, so it never competes with another git process for index.lock.
    git's view of a file is what its attributes make of it (`working-tree-encoding`, `eol`, `ident`, a filter),
    so a file git calls modified is kept only where its bytes (or mode) differ from HEAD's: kbsync commits bytes,
    and a file whose bytes are committed is not waiting. git leaves out what its ignore rules cover; a protocol
    file among those is added, since a `.gitignore` line from anywhere (a remote's) must not silently keep
    sessions, the board or memory out of every commit.
    """
    out = _run(root, "--no-optional-locks", "status", "--porcelain=v2", "-z", "--untracked-files=all",
               "--no-renames", "--ignored=matching")
    changed: set[str] = set()
    ignored: list[str] = []
    for entry in filter(None, out.split("\0")):
        kind, _, rest = entry.partition(" ")
        if kind == "1":  # XY sub mH mI mW hH hI path
            xy, _sub, head_mode, _mi, disk_mode, head_blob, _hi, path = rest.split(" ", 7)
            if not (head_mode == disk_mode == "100644" or head_mode == disk_mode == "100755") or "D" in xy \
                    or not _same_bytes(root / path, head_blob):
                changed.add(path)
        elif kind == "u":  # XY sub m1 m2 m3 mW h1 h2 h3 path
            changed.add(rest.split(" ", 9)[9])
        elif kind == "?":
            changed.add(rest)
        elif kind == "!":
            ignored.append(rest)
    return sorted(changed | set(ignored_protocol_files(root, ignored)))


def _same_bytes(path: Path, blob: str) -> bool:
    """Whether the regular file at `path` holds exactly the bytes of `blob` (no attribute applied)."""
    try:
        if not stat.S_ISREG(path.lstat().st_mode):
            return False
        return objects.object_id("blob", path.read_bytes()) == blob
    except OSError:
        return False


def ignored_protocol_files(root: Path, ignored: Sequence[str]) -> list[str]:
    """The protocol's files among `ignored` (what `git status --ignored=matching` lists: files, and folders that
    an ignore rule covers whole, which are listed file by file where the protocol's files live)."""
    files = [p for p in ignored if not p.endswith("/") and protocol.is_protocol_file(p)]
    folders = [p for p in ignored if p.endswith("/") and p.split("/", 1)[0] in protocol.PROTOCOL_PATHSPECS]
    if folders:
        out = _run(root, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--",
                   *(f":(literal){p}" for p in folders))
        files += [p for p in out.split("\0") if p and protocol.is_protocol_file(p)]
    return files


def ignore_rules(root: Path, relpaths: Sequence[str]) -> dict[str, str]:
    """Which of `relpaths` git's ignore rules cover, tracked or not, each with the rule (`.gitignore:3: sessions/`)."""
    named = [p for p in relpaths if "\n" not in p]
    if not named:
        return {}
    done = _exec(root, ["check-ignore", "--no-index", "-v", "-z", "--stdin"],
                 stdin="".join(f"{p}\0" for p in named).encode("utf-8", "surrogateescape"), check=False)
    if done.returncode not in (0, 1):
        raise GitError(f"git check-ignore failed: {proc.last_line(done)}", path=str(root))
    fields = done.stdout.decode("utf-8", "surrogateescape").split("\0")
    return {path: f"{source}:{line}: {pattern}"
            for source, line, pattern, path in zip(fields[0::4], fields[1::4], fields[2::4], fields[3::4])
            if path and not pattern.startswith("!")}


# ---- objects --------------------------------------------------------------------------

Object = tuple[str, str, bytes]  # (sha, kind, content)


def read_objects(root: Path, specs: Sequence[str]) -> list[Object | None]:
    """Each object named in `specs` (`<sha>`, `<rev>^{tree}`, `<tree-ish>:<path>`), None where none exists,
    from one `git cat-file --batch`."""
    if not specs:
        return []
    if any("\n" in spec for spec in specs):
        raise GitError("a path holds a line break, which `git cat-file --batch` cannot name; rename it", path=str(root))
    out = _bytes(root, "cat-file", "--batch", stdin="".join(f"{s}\n" for s in specs).encode("utf-8", "surrogateescape"))
    result: list[Object | None] = []
    pos = 0
    for _ in specs:
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        pos = end + 1
        if header[-1] == b"missing" or header[-1] == b"ambiguous":
            result.append(None)
            continue
        size = int(header[2])
        result.append((header[0].decode(), header[1].decode(), out[pos:pos + size]))
        pos += size + 1
    return result


def read_blobs(root: Path, specs: Sequence[str]) -> list[bytes | None]:
    """The bytes of each blob named in `specs` (`<sha>` or `<tree>:<path>`), None where there is none."""
    return [obj[2] if obj and obj[1] == "blob" else None for obj in read_objects(root, specs)]


def blobs_at(root: Path, commit: str | None, relpaths: Sequence[str]) -> dict[str, bytes | None]:
    """Each file's bytes as committed in `commit` (None where it has no such file, or commit is None)."""
    if not relpaths or commit is None:
        return dict.fromkeys(relpaths)
    return dict(zip(relpaths, read_blobs(root, [f"{commit}:{rel}" for rel in relpaths])))


@functools.lru_cache(maxsize=64)
def _objects_dir(root: Path) -> Path:
    """Where loose objects go: `.git/objects` in a plain repository; git says where otherwise (worktrees)."""
    if (root / ".git").is_dir() and "GIT_OBJECT_DIRECTORY" not in os.environ:
        return root / ".git" / "objects"
    return root / _run(root, "rev-parse", "--git-path", "objects").strip()


def store_objects(root: Path, loose: Sequence[tuple[str, bytes]], held: Collection[str] = ()) -> list[str]:
    """Write each (kind, content) as a loose object unless the repository has it (loose, or among `held`:
    shas the caller knows it holds, packed ones included); their shas.

    Like git: a temporary `tmp_obj_*` file in the object's folder (git's own gc
    removes leftovers), then a rename. Unlike git's default, each file and folder
    is fsynced first (kbsync.store.fsio.atomic_write_all), so a ref never outlives its objects.
    """
    shas = [objects.object_id(kind, data) for kind, data in loose]
    folder = _objects_dir(root)
    new = {folder / sha[:2] / sha[2:]: (kind, data) for sha, (kind, data) in zip(shas, loose) if sha not in held}
    fsio.atomic_write_all({path: objects.loose(kind, data) for path, (kind, data) in new.items() if not path.exists()},
                          temp=lambda path: path.with_name(f"tmp_obj_{os.urandom(6).hex()}"), mode=0o444)
    return shas


def write_blob(root: Path, data: bytes) -> str:
    (sha,) = store_objects(root, [("blob", data)])
    return sha


def build_tree(root: Path, base: str | None, entries: Sequence[objects.Change]) -> str:
    """A tree: `base` (a tree or commit; None for empty) with each (relpath, mode, sha) set, or removed
    where sha is None. Reads and writes only the trees on those paths."""
    return _rewrite(root, base, entries)[0]


def _require_sha1(root: Path, sha: str) -> None:
    if len(sha) != 40:
        raise GitError("this repository names objects with SHA-256; kbsync writes SHA-1 repositories (git's default, "
                       "and GitHub's): sync it into a repository made by `git init` or `kbsync init`", path=str(root))


def tree_id(root: Path, base: str | None, entries: Sequence[objects.Change]) -> str:
    """The sha build_tree would give, with nothing written (a remote's tree is checked before any of it is)."""
    return _plan(root, base, entries)[0].tree


def _rewrite(root: Path, base: str | None, entries: Sequence[objects.Change]) -> tuple[str, str]:
    """(new tree, base tree) for build_tree."""
    new, base_tree = _plan(root, base, entries)
    store_objects(root, [("tree", data) for _sha, data in new.objects])
    return new.tree, base_tree


def _plan(root: Path, base: str | None, entries: Sequence[objects.Change]) -> tuple[objects.Rewritten, str]:
    dirs = objects.dirs_to_read(p for p, _m, _s in entries)
    found = read_objects(root, [f"{base}^{{tree}}" if d == "" else f"{base}:{d}" for d in dirs]) if base else []
    if base and not found[0]:
        raise GitError(f"{base} is not a tree or commit in this repository", path=str(root))
    if found and found[0]:
        _require_sha1(root, found[0][0])
    trees = {d: objects.parse_tree(obj[2]) for d, obj in zip(dirs, found) if obj and obj[1] == "tree"}
    base_tree = found[0][0] if found and found[0] else EMPTY_TREE
    return objects.rewrite(trees, entries), base_tree


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
    if expected_head:
        _require_sha1(root, expected_head)
    shas = store_objects(root, [("blob", f.data) for f in files if f.data is not None])
    blob = iter(shas)
    entries = [(f.relpath, "100755" if f.executable else "100644", None if f.data is None else next(blob))
               for f in files]
    tree, base_tree = _rewrite(root, expected_head, entries)
    if expected_head and tree == base_tree:
        return None
    sha = commit_tree(root, tree, [expected_head] if expected_head else [], message, author)
    update_head(root, sha, expected_head, f"kbsync: {message.splitlines()[0]}", entries)
    return sha


def commit_tree(root: Path, tree: str, parents: Sequence[str], message: str, author: tuple[str, str]) -> str:
    args = [x for p in parents for x in ("-p", p)]
    sha = _run(root, "commit-tree", tree, *args, env=_author_env(*author), stdin=message.encode()).strip()
    _remember(root, "tree", sha, "", tree)
    return sha


def update_head(root: Path, new: str, old: str | None, reflog: str, entries: Sequence[objects.Change]) -> None:
    """Move HEAD from `old` to `new` (compare-and-swap; HeadMovedError if it moved) and stage `entries`,
    the paths that changed, in git's index so that `git status` agrees with HEAD."""
    done = _exec(root, ["update-ref", "-m", reflog, "HEAD", new, old or ZERO_SHA], check=False)
    if done.returncode != 0:
        raise HeadMovedError("HEAD moved meanwhile; nothing was lost, the change was not made", path=str(root))
    if entries:
        _sync_index(root, entries)


INDEX_BATCH = 1000  # paths per `git update-index` (its command line must stay within the system's limit)


def _sync_index(root: Path, entries: Sequence[objects.Change], attempts: int = 20) -> None:
    """Stage each (relpath, mode, sha) in the real index, or remove it where sha is None, and refresh the
    index's stat data so that the next `git status` need not re-hash those files."""
    for _ in range(attempts):
        try:
            for start in range(0, len(entries), INDEX_BATCH):
                chunk = entries[start:start + INDEX_BATCH]
                added = [x for p, mode, sha in chunk if sha for x in ("--cacheinfo", f"{mode},{sha},{p}")]
                removed = [p for p, _mode, sha in chunk if not sha]
                last = ["--refresh"] if start + INDEX_BATCH >= len(entries) else []
                _run(root, "update-index", "-q", "--add", *added, *last,
                     *(["--force-remove", "--", *removed] if removed else []))
            return
        except GitError:
            time.sleep(0.1)
    log.warning("%s: committed, but git's index stayed locked; `git status` may show the committed files as staged",
                root)


# ---- sync: remotes, trees and merges (used by kbsync.sync.syncer and kbsync.sync.transports) ---------------

Side = tuple[str, str] | None  # a path's (mode, blob sha) in one tree; None where the tree has no such file


@dataclass(frozen=True)
class TreeChange:
    """One path that differs between two trees: its (mode, sha) on each side, None where absent."""

    relpath: str
    old: Side
    new: Side


def network_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a git command that talks to a remote: no prompt for credentials on a terminal
    (nobody may be there to answer it; the command's time-out is the other bound)."""
    return {**os.environ, "GIT_TERMINAL_PROMPT": "0", **(extra or {})}


# A fetched blob larger than this is streamed to the pack by git's index-pack, never held whole in its memory:
# a remote can send 200 MB of zeros in 200 KB, and git's default (512 MB) would inflate them all at once.
FETCH_STREAM_BYTES = 1024 * 1024


def fetch(root: Path, remote: str, branch: str, *, timeout_s: float) -> tuple[str, str] | None:
    """Fetch `branch` from `remote` into its remote-tracking ref; (its commit, its tree), or None if the
    remote has no such branch. TimedOutError if the remote does not finish within `timeout_s`."""
    tracking = f"refs/remotes/{remote}/{branch}"
    done = _exec(root, ["-c", f"core.bigFileThreshold={FETCH_STREAM_BYTES}", "fetch", "--quiet", "--no-tags", remote,
                        f"+refs/heads/{branch}:{tracking}"], check=False, env=network_env(), timeout=timeout_s)
    if done.returncode != 0:
        err = done.stderr.decode("utf-8", "replace")
        if "couldn't find remote ref" in err:
            return None
        if not has_remote(root, remote):
            raise ConfigError(f"the workspace's git repository has no remote {remote!r}; add it with "
                              f"`git remote add {remote} URL` or set [sync] remote", path=str(root))
        raise GitError(f"git fetch {remote} failed (exit {done.returncode}); check the remote and the network, "
                       f"then sync again{said(err)}")
    commit, tree = _run(root, "rev-parse", f"{tracking}^{{commit}}", f"{tracking}^{{tree}}").split()
    _remember(root, "tree", commit, "", tree)
    return commit, tree


def push(root: Path, remote: str, branch: str, sha: str, *, scanned: bool, timeout_s: float) -> bool:
    """Push commit `sha` to `branch` without force; False when the remote refused it as not a fast forward.

    `scanned`: the caller has secret-scanned every blob the push can send; kbsync's pre-push hook then
    skips its own scan of the same objects (other hooks it chains still run). TimedOutError if the
    remote does not finish within `timeout_s`.
    """
    env = network_env({"KBSYNC_SCANNED": sha} if scanned else None)
    done = _exec(root, ["push", "--porcelain", remote, f"{sha}:refs/heads/{branch}"], env=env, check=False,
                 timeout=timeout_s)
    if done.returncode == 0:
        return True
    out = (done.stdout + done.stderr).decode("utf-8", "replace")
    if "[rejected]" in out or "[remote rejected]" in out and "cannot lock ref" in out:
        return False
    raise GitError(f"git push {remote} failed (exit {done.returncode}); check the remote and its credentials, "
                   f"then sync again{said(out)}")


def said(output: str) -> str:
    """git's whole message, one indented line per line of it, for the end of an error message."""
    lines = [ln.rstrip() for ln in output.strip("\n").splitlines()]
    return "".join(f"\n  {ln}" if ln else "\n" for ln in lines)


# Facts about commits never change (a commit's tree, two commits' merge base), so a sync asks git once.
_FACTS_MAX = 4096
_facts: dict[tuple[Path, str, str, str], str | None] = {}


def _is_sha(name: str) -> bool:
    return len(name) == 40 and all(c in "0123456789abcdef" for c in name)


def _remember(root: Path, question: str, a: str, b: str, answer: str | None) -> None:
    if _is_sha(a) and _is_sha(b or a):
        if len(_facts) >= _FACTS_MAX:
            _facts.clear()
        _facts[(root, question, a, b)] = answer


def merge_base(root: Path, a: str, b: str) -> str | None:
    """The best common ancestor of commits `a` and `b`; None if they share no history."""
    a, b = sorted((a, b))
    if (root, "base", a, b) in _facts:
        return _facts[(root, "base", a, b)]
    done = _exec(root, ["merge-base", a, b], check=False)
    if done.returncode not in (0, 1):
        raise GitError(f"git merge-base failed: {proc.last_line(done)}", path=str(root))
    base = done.stdout.decode().strip() or None
    _remember(root, "base", a, b, base)
    return base


def is_ancestor(root: Path, old: str, new: str) -> bool:
    """Whether commit `old` is `new` or in its history."""
    return old == new or merge_base(root, old, new) == old


def tree_of(root: Path, commit: str | None) -> str:
    """The tree of `commit`; the empty tree for None."""
    if commit is None:
        return EMPTY_TREE
    known = _facts.get((root, "tree", commit, ""))
    if known is None:
        known = _run(root, "rev-parse", f"{commit}^{{tree}}").strip()
        _remember(root, "tree", commit, "", known)
    return known


def has_object(root: Path, sha: str) -> bool:
    return _exec(root, ["cat-file", "-e", sha], check=False).returncode == 0


def missing_objects(root: Path, shas: Sequence[str]) -> set[str]:
    """Which of `shas` the repository does not hold."""
    return {sha for sha, size in object_sizes(root, shas).items() if size is None}


def object_sizes(root: Path, shas: Sequence[str]) -> dict[str, int | None]:
    """The size in bytes of each object of `shas` (None: not held), from its header alone (`git cat-file
    --batch-check`): nothing of its content is read."""
    if not shas:
        return {}
    out = _bytes(root, "cat-file", "--batch-check", stdin="".join(f"{s}\n" for s in shas).encode())
    sizes: dict[str, int | None] = {}
    for line in out.decode().splitlines():
        parts = line.split()
        sizes[parts[0]] = None if parts[-1] == "missing" else int(parts[2])
    return sizes


def diff_trees(root: Path, old: str, new: str) -> list[TreeChange]:
    """Every file path whose blob or mode differs between trees `old` and `new` (no rename detection)."""
    out = _run(root, "diff-tree", "-r", "-z", "--no-renames", old, new)
    fields = out.split("\0")
    changes = []
    for meta, relpath in zip(fields[0::2], fields[1::2]):
        omode, nmode, osha, nsha, _status = meta.lstrip(":").split()
        changes.append(TreeChange(relpath, None if omode == "000000" else (omode, osha),
                                  None if nmode == "000000" else (nmode, nsha)))
    return changes


def list_tree(root: Path, tree: str) -> dict[str, tuple[str, str]]:
    """Every file of `tree`: relpath -> (mode, blob sha)."""
    out = _run(root, "ls-tree", "-r", "-z", tree)
    files = {}
    for item in filter(None, out.split("\0")):
        meta, relpath = item.split("\t", 1)
        mode, _kind, sha = meta.split()
        files[relpath] = (mode, sha)
    return files


def commit_subject(root: Path, commit: str) -> str:
    return _run(root, "log", "-1", "--format=%s", commit).strip()


def outgoing_blobs(root: Path, head: str, remote_head: str | None) -> list[tuple[str, str]]:
    """(relpath, sha) of every blob reachable from `head` but not from `remote_head`: what a push would send."""
    args = ["rev-list", "--objects", "--filter=object:type=blob", head] + (["--not", remote_head] if remote_head else [])
    listed = (line.split(" ", 1) for line in _run(root, *args).splitlines())
    return [(parts[1], parts[0]) for parts in listed if len(parts) == 2]  # git cuts a name at a line break


def is_tracked(root: Path, relpath: str) -> bool:
    """Whether `relpath` is in git's index (tracked, so a commit or a sync may have written it)."""
    if not is_repo(root):
        return False
    return _exec(root, ["ls-files", "--error-unmatch", "--", relpath], check=False).returncode == 0


def has_remote(root: Path, name: str) -> bool:
    """True if the repository has a remote called `name`."""
    return name in _run(root, "remote").split()


def is_commit(root: Path, sha: str) -> bool:
    """Whether the repository holds `sha` (40 hex digits, else False) as a commit."""
    if not _is_sha(sha):
        return False
    done = _exec(root, ["cat-file", "-t", sha], check=False)
    return done.returncode == 0 and done.stdout.strip() == b"commit"
