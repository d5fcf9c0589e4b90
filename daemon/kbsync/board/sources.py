"""What changed in a scan source since its watermark: folders (mtime, size, SHA-256) and git (commits).

I/O only: reads the files or runs git; never writes. Only regular files are opened (lstat first, then
kbsync.store.fsio.read_regular), so a FIFO, socket, device or symlink in a source can neither block the
scan nor lead it elsewhere; such files, and binary ones (NUL bytes), are left out with a reason in
`Counts.left_out`, and proposed once they are fixed.
"""

from __future__ import annotations

import datetime as dt
import glob
import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Iterable, Iterator

from kbsync.core import protocol
from kbsync.errors import InputError
from kbsync.git import history
from kbsync.store import fsio
from kbsync.store.workspace import Workspace, left_out

TEXT_SUFFIXES: Final = (".md", ".markdown", ".txt")
_GLOB_CHARS: Final = re.compile(r"[*?\[]")


@dataclass(frozen=True)
class Found:
    path: str  # inside the source, with /
    data: bytes
    sha256: str
    date: str  # YYYY-MM-DD
    kind: str  # "new" or "changed"


@dataclass
class Counts:
    new: int = 0
    changed: int = 0
    unchanged: int = 0
    renamed: int = 0
    deleted: int = 0
    proposed_before: int = 0
    left_out: dict[str, str] = field(default_factory=dict)  # path in the source -> why it was not read


def resolve_path(ws: Workspace, text: str) -> Path:
    p = Path(text).expanduser()
    return p if p.is_absolute() else ws.root / p


# ---- folders ---------------------------------------------------------------------

def folder_files(ws: Workspace, spec: str) -> tuple[Path, list[str]]:
    """The base folder and the files (relative to it) that a folder or glob source names."""
    if _GLOB_CHARS.search(spec):
        pattern = str(resolve_path(ws, spec))
        first = _GLOB_CHARS.search(pattern)
        base = Path(pattern[: first.start() if first else len(pattern)].rsplit("/", 1)[0] or "/")
        files = [p for p in glob.glob(pattern, recursive=True) if not os.path.isdir(p)]  # FIFOs too: said why
        return base, sorted(os.path.relpath(p, base).replace(os.sep, "/") for p in files)
    base = resolve_path(ws, spec)
    if not base.is_dir():
        raise InputError("scan source folder not found; fix its path in the config", path=str(base))
    return base, sorted(_walk(base, ws))


def _walk(base: Path, ws: Workspace) -> Iterator[str]:
    skip = {str((ws.root / protocol.CANDIDATES_DIR).resolve()), str(ws.state_dir.resolve())}
    for dirpath, dirnames, filenames in os.walk(base.resolve()):
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and os.path.join(dirpath, d) not in skip]
        rel = os.path.relpath(dirpath, base).replace(os.sep, "/")
        for name in filenames:
            if name.endswith(TEXT_SUFFIXES) and not name.startswith("."):
                yield name if rel == "." else f"{rel}/{name}"


@dataclass
class Changes:
    """What changed in a source since its watermark. `found` is read as it is used: a folder's changed files
    are read and hashed as the scan takes them, beside the work on those before; `mark` (the next watermark)
    and `counts` are complete once `found` is used up."""

    found: Iterable[Found]
    mark: dict[str, Any]
    counts: Counts
    total: int  # the most files `found` may hold


def folder_changes(base: Path, files: list[str], mark: dict[str, list[Any]], tz: dt.tzinfo) -> Changes:
    """Files new or changed since `mark` ({path: [mtime_ns, size, sha256]}), and the next mark. What the stat
    of each file tells is settled here; the files it does not settle are read as `found` is used."""
    present = set(files)
    counts = Counts(deleted=sum(1 for p in mark if p not in present))
    new_mark: dict[str, list[Any]] = {}
    unsettled: list[tuple[str, str, list[Any] | None]] = []
    root = str(base)
    for rel in files:
        full = os.path.join(root, rel)
        why = left_out(Path(full))
        if why:
            counts.left_out[rel] = why
            continue
        try:
            st = os.lstat(full)
        except FileNotFoundError:
            continue
        old = mark.get(rel)
        if old and old[0] == st.st_mtime_ns and old[1] == st.st_size and fsio.not_regular(st.st_mode) is None:
            new_mark[rel] = old
            counts.unchanged += 1
            continue
        unsettled.append((rel, full, old))
    known = {m[2] for m in mark.values()}
    return Changes(_read_changed(unsettled, known, files, new_mark, counts, tz), new_mark, counts, len(unsettled))


def _read_changed(unsettled: list[tuple[str, str, list[Any] | None]], known: set[str], files: list[str],
                  new_mark: dict[str, list[Any]], counts: Counts, tz: dt.tzinfo) -> Iterator[Found]:
    """Each unsettled file read and hashed: a Found when its content is new or changed; the mark and counts
    filled in, in the order of `files` at the end (as a walk that read each file in turn fills them)."""
    for rel, full, old in unsettled:
        read = _read_text_file(full, rel, counts)
        if read is None:
            continue
        data, st = read
        digest = hashlib.sha256(data).hexdigest()
        new_mark[rel] = [st.st_mtime_ns, st.st_size, digest]
        if (old and old[2] == digest) or (not old and digest in known):
            counts.unchanged += bool(old)
            counts.renamed += not old
            continue
        day = dt.datetime.fromtimestamp(st.st_mtime_ns / 1e9, tz).date().isoformat()
        counts.changed += bool(old)
        counts.new += not old
        yield Found(rel, data, digest, day, "changed" if old else "new")
    _in_order(new_mark, files)
    _in_order(counts.left_out, files)


def _in_order(d: dict[str, Any], files: list[str]) -> None:
    ordered = {rel: d[rel] for rel in files if rel in d}
    d.clear()
    d.update(ordered)


def _read_text_file(full: str, rel: str, counts: Counts) -> tuple[bytes, os.stat_result] | None:
    """A source file's bytes and stat, or None with the reason in `counts.left_out` (gone: no reason)."""
    try:
        data, st = fsio.read_regular(Path(full))
    except FileNotFoundError:
        return None
    except fsio.UnreadableError as exc:
        counts.left_out[rel] = exc.message
        return None
    if is_binary(data, rel, counts):
        return None
    return data, st


def is_binary(data: bytes, rel: str, counts: Counts) -> bool:
    """True (with the reason in `counts.left_out`) when `data` holds a NUL byte: not a text file."""
    if b"\0" not in data:
        return False
    counts.left_out[rel] = "binary (it holds NUL bytes), not a text file"
    return True


# ---- git repositories --------------------------------------------------------------

def git_changes(repo: Path, branch: str, last: str | None) -> tuple[list[Found], str, Counts]:
    """Text files added or changed on `branch` since commit `last` (all of them when None)."""
    head = history.resolve_commit(repo, branch)
    counts = Counts()
    if head == last:
        return [], head, counts
    if last and history.has_commit(repo, last):
        paths = _diff(repo, last, head, counts)
    else:
        paths = {p: "new" for p in history.tree_paths(repo, head)}
    paths = {p: k for p, k in paths.items() if p.endswith(TEXT_SUFFIXES)}
    day = history.commit_date(repo, head)[:10]
    blobs = history.files_at(repo, head, sorted(paths))
    found = [Found(p, data, hashlib.sha256(data).hexdigest(), day, paths[p]) for p, data in blobs
             if not is_binary(data, p, counts)]
    counts.new = sum(f.kind == "new" for f in found)
    counts.changed = len(found) - counts.new
    return found, head, counts


def _diff(repo: Path, old: str, new: str, counts: Counts) -> dict[str, str]:
    tokens = history.name_status(repo, old, new)
    out: dict[str, str] = {}
    i = 0
    while i < len(tokens) - 1:
        status = tokens[i]
        if status[:1] in "RC":
            if status[1:] != "100":
                out[tokens[i + 2]] = "changed"
            counts.renamed += status[1:] == "100"
            i += 3
            continue
        if status == "D":
            counts.deleted += 1
        elif status[:1] in "AM":
            out[tokens[i + 1]] = "new" if status == "A" else "changed"
        i += 2
    return out
