"""What a commit would record (the staged entries) or a push would publish, and their blobs.

Two git processes whatever the number of files: `git diff --cached --raw` lists
the staged additions and modifications (a rename shows as its new path; deletions
carry no content and are left out) and one `git cat-file --batch` reads every blob.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from kbsync.errors import GitError
from kbsync.git import repo
from kbsync.proc import git

GITLINK = "160000"  # a submodule entry: no blob to read
SYMLINK = "120000"


@dataclass(frozen=True)
class StagedFile:
    path: str  # relative to the repository's top level, "/"-separated
    mode: str  # "100644", "100755", "120000", "160000"
    blob: str  # object id in the index


def top_level(folder: Path) -> tuple[Path, str]:
    """The repository's top level and `folder`'s prefix inside it ("" or "sub/dir/")."""
    out = git(["rev-parse", "--show-toplevel", "--show-prefix"], cwd=folder).split("\n")
    if len(out) < 2:
        raise GitError("not inside a git working tree; run this in the workspace's repository", path=str(folder))
    return Path(out[0]), out[1]


_RAW = ["--raw", "-z", "--no-renames", "--diff-filter=d", "--no-abbrev"]


def _parse_raw(raw: str) -> list[StagedFile]:
    """Entries of git's `--raw -z` output (`:<modes> <ids> <status>` NUL `<path>` NUL, repeated)."""
    fields = iter(f for f in raw.split("\0") if f)
    out: list[StagedFile] = []
    for meta in fields:
        _old_mode, mode, _old_blob, blob, _status = meta.lstrip(":").split(" ")
        out.append(StagedFile(next(fields), mode, blob))
    return out


def staged_files(top: Path) -> list[StagedFile]:
    """Staged additions and modifications (renames appear under their new path)."""
    return _parse_raw(git(["diff", "--cached", *_RAW], cwd=top))


def outgoing_files(top: Path, head: str, exclude: Sequence[str]) -> list[StagedFile]:
    """Every file version that the commits reachable from `head` but not from `exclude` (revisions,
    or options such as `--remotes`; unknown ones ignored) add or change: each version once,
    intermediate ones included, since a push publishes them all."""
    raw = git(["log", *_RAW, "--format=", "--ignore-missing", head, "--not", *exclude, "--"], cwd=top)
    return list(dict.fromkeys(_parse_raw(raw)))


def read_objects(top: Path, names: list[str]) -> dict[str, bytes | None]:
    """The content of each object name (`<sha>`, or `:<path>` for an index entry); None if missing."""
    return dict(zip(names, repo.read_blobs(top, names)))


def stage_bytes(top: Path, entry: StagedFile, data: bytes) -> None:
    """Put exactly `data` in the index for `entry.path`, whatever the working tree holds."""
    blob = repo.write_blob(top, data)
    git(["update-index", "--cacheinfo", f"{entry.mode},{blob},{entry.path}"], cwd=top)
