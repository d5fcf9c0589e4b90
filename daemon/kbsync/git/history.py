"""What a repository's history says: for the board's weekly review (the workspace) and for the watermark
scan of a git knowledge source (any repository). Reads only; every git process goes through kbsync.proc."""

from __future__ import annotations

from pathlib import Path

from kbsync import proc
from kbsync.errors import GitError
from kbsync.git import repo

MACHINE_TRAILER = "Kbsync-Machine"


def last_change(root: Path, relpath: str) -> tuple[str, str | None] | None:
    """(author time ISO 8601, machine id from its `Kbsync-Machine` trailer or None) of the last commit that
    touched `relpath`; None when none did (or there is no repository)."""
    fmt = f"--format=%aI%x00%(trailers:key={MACHINE_TRAILER},valueonly,separator=%x2C)"
    try:
        out = proc.git(["log", "-1", fmt, "--", relpath], root).strip()
    except GitError:
        return None
    if not out:
        return None
    when, _, machine = out.partition("\0")
    return when, machine.strip().split(",")[0] or None


def last_commit_before(root: Path, relpath: str, when: str) -> str | None:
    """The last commit before `when` that touched `relpath`, or None."""
    sha = proc.git(["log", "-1", f"--before={when}", "--format=%H", "--", relpath], root).strip()
    return sha or None


def file_at(root: Path, commit: str, relpath: str) -> str:
    """`relpath` as committed in `commit`, as text."""
    return proc.git(["show", f"{commit}:{relpath}"], root)


def log_lines(root: Path, relpath: str, since: str) -> list[str]:
    """`<short id> <date> <subject>` of each commit that touched `relpath` since `since`."""
    out = proc.git(["log", f"--since={since}", "--format=%h %cs %s", "--", relpath], root)
    return [line for line in out.splitlines() if line.strip()]


def resolve_commit(root: Path, rev: str) -> str:
    """The commit id `rev` names (GitError if it names none)."""
    return proc.git(["rev-parse", "--verify", f"{rev}^{{commit}}"], root).strip()


def has_commit(root: Path, sha: str) -> bool:
    return proc.run(["git", "cat-file", "-e", f"{sha}^{{commit}}"], cwd=str(root), check=False).returncode == 0


def tree_paths(root: Path, commit: str) -> list[str]:
    """Every file path in `commit`'s tree."""
    return [p for p in proc.git(["ls-tree", "-r", "-z", "--name-only", commit], root).split("\0") if p]


def commit_date(root: Path, commit: str) -> str:
    """The committer date of `commit`, ISO 8601."""
    return proc.git(["log", "-1", "--format=%cI", commit], root).strip()


def name_status(root: Path, old: str, new: str) -> list[str]:
    """`git diff --name-status -z -M` between two commits, as its NUL-separated tokens."""
    return proc.git(["diff", "--name-status", "-z", "-M", "--no-ext-diff", old, new], root).split("\0")


def files_at(root: Path, commit: str, relpaths: list[str]) -> list[tuple[str, bytes]]:
    """The bytes of each of `relpaths` that is a file in `commit` (one `git cat-file --batch`)."""
    blobs = repo.read_blobs(root, [f"{commit}:{p}" for p in relpaths])
    return [(p, data) for p, data in zip(relpaths, blobs) if data is not None]


def head_commit(root: Path) -> dict[str, str] | None:
    """HEAD's `sha`, committer `time` (ISO 8601), `message` (its subject) and `author`; None before the first
    commit or outside a repository. Whoever made it: the daemon, `kbsync commit`, a sync, or plain git."""
    done = proc.run(["git", "log", "-1", "--format=%H%x00%cI%x00%an%x00%s", "HEAD"], cwd=str(root), check=False)
    fields = done.stdout.decode("utf-8", "replace").rstrip("\n").split("\0")
    if done.returncode != 0 or len(fields) != 4:
        return None
    sha, when, author, subject = fields
    return {"sha": sha, "time": when, "author": author, "message": subject}


def files_matching(root: Path, pattern: str, under: str) -> list[str]:
    """Work-tree files under `under` (tracked or not, ignored ones left out) with a line matching the extended
    regular expression `pattern`, from one `git grep`; [] outside a repository."""
    done = proc.run(["git", "-c", "core.quotePath=false", "grep", "-l", "-z", "-I", "-E", "--untracked", "-e", pattern,
                     "--", under], cwd=str(root), check=False)
    return sorted(p for p in done.stdout.decode("utf-8", "surrogateescape").split("\0") if p)
