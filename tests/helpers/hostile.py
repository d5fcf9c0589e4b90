"""Hostile remote trees, built with git plumbing (`git mktree`, `git commit-tree`) in a bare repository.

A tree entry's name may be anything git's tree format holds ("..", ".git", ".g\u200cit", "git~1"), which
`git add` would never let through; these helpers write such trees directly, on top of the branch's head.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

Additions = dict[tuple[str, ...], tuple[str, bytes]]  # path components -> (mode, blob bytes or a commit sha)

SUBMODULE_COMMIT = "1" * 40


def _git(repo: Path, *args: str, data: bytes | None = None) -> bytes:
    done = subprocess.run(["git", "-C", str(repo), *args], input=data, capture_output=True)
    if done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)}: {done.stderr.decode()}")
    return done.stdout.strip()


def _entries(repo: Path, tree: str | None) -> dict[bytes, tuple[str, str, str]]:
    if tree is None:
        return {}
    out: dict[bytes, tuple[str, str, str]] = {}
    for item in _git(repo, "ls-tree", "-z", tree).split(b"\0"):
        if item:
            meta, name = item.split(b"\t", 1)
            mode, kind, sha = meta.decode().split()
            out[name] = (mode, kind, sha)
    return out


def build_tree(repo: Path, base: str | None, additions: Additions) -> str:
    """`base` (a tree sha, or None) with each addition set, folders created on the way."""
    entries = _entries(repo, base)
    nested: dict[str, Additions] = {}
    for parts, (mode, data) in additions.items():
        if len(parts) > 1:
            nested.setdefault(parts[0], {})[parts[1:]] = (mode, data)
        elif mode == "160000":
            entries[parts[0].encode()] = (mode, "commit", data.decode())
        else:
            entries[parts[0].encode()] = (mode, "blob", _git(repo, "hash-object", "-w", "--stdin", data=data).decode())
    for name, sub in nested.items():
        old = entries.get(name.encode())
        entries[name.encode()] = ("040000", "tree", build_tree(repo, old[2] if old and old[1] == "tree" else None, sub))
    listing = b"".join(f"{m} {k} {s}\t".encode() + n + b"\0" for n, (m, k, s) in entries.items())
    return _git(repo, "mktree", "-z", "--missing", data=listing).decode()


def push_hostile(bare: Path, additions: Additions, branch: str = "main", message: str = "hostile") -> str:
    """A commit on top of `branch` of `bare` whose tree is the head's plus `additions`; its sha (the branch
    is moved to it)."""
    head = _git(bare, "rev-parse", f"refs/heads/{branch}").decode()
    tree = build_tree(bare, f"{head}^{{tree}}", additions)
    commit = _git(bare, "commit-tree", tree, "-p", head, data=message.encode()).decode()
    _git(bare, "update-ref", f"refs/heads/{branch}", commit)
    return commit


def file_add(path: str, data: bytes = b"pwned\n", mode: str = "100644") -> Additions:
    """One addition at `path` split at "/" (so "a/../../x" is the folders "a" and "..", then "x")."""
    return {tuple(path.split("/")): (mode, data)}


def disk_state(root: Path) -> dict[str, bytes]:
    """Every regular file and symlink under `root` except git's object store and refs, with its bytes
    (a link's target): what a refused sync must leave exactly as it was."""
    out: dict[str, bytes] = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if rel.startswith((".git/objects", ".git/refs/remotes", ".git/FETCH_HEAD", ".git/logs/refs/remotes")):
            continue
        if p.is_symlink():
            out[rel] = b"-> " + str(p.readlink()).encode()
        elif p.is_file():
            out[rel] = p.read_bytes()
    return out
