"""A workspace on disk: its root, its configuration, safe path handling and file walking."""

from __future__ import annotations

import contextlib
import functools
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import BinaryIO, Iterator

from kbsync.config import Config
from kbsync.core import protocol
from kbsync.errors import InputError
from kbsync.store import fsio


@dataclass(frozen=True)
class Workspace:
    root: Path
    config: Config = field(default_factory=Config)

    def __post_init__(self) -> None:
        protocol.synonyms_table(self.config)  # a synonym of an unknown heading is reported on opening

    @property
    def state_dir(self) -> Path:
        return self.root / protocol.STATE_DIR

    @property
    def backup_dir(self) -> Path:
        return self.root / protocol.BACKUP_DIR

    def path(self, relpath: str) -> Path:
        return self.root / relpath

    def synonyms(self) -> dict[str, str]:
        return protocol.synonyms_table(self.config)

    def relpath(self, given: str | Path) -> str:
        """The workspace-relative path of `given`; InputError if it lies outside.

        `given` may be absolute, or relative: to the current folder when that lies in the
        workspace, else to the workspace root. A symlink that points out of the workspace
        is refused too.
        """
        p = Path(given)
        cwd = Path.cwd().resolve()
        base = cwd if cwd == self.real_root or self.real_root in cwd.parents else self.root
        absolute = p if p.is_absolute() else base / p
        root = self.real_root
        lexical = Path(os.path.normpath(absolute))
        try:
            rel = lexical.relative_to(root)
        except ValueError:
            try:
                rel = lexical.relative_to(Path(os.path.normpath(self.root.absolute())))
            except ValueError:
                raise InputError(f"outside the workspace {self.root}; give a path inside it", path=str(given)) from None
        real = lexical.resolve()
        if real != root and root not in real.parents:
            raise InputError(f"a symlink out of the workspace ({real}); kbsync only touches files inside it", path=str(given))
        return rel.as_posix()

    @functools.cached_property
    def real_root(self) -> Path:
        return self.root.resolve()

    def checked_path(self, relpath: str) -> Path:
        """The path of a workspace file kbsync may read: regular (never a symlink, which is not followed),
        not oversize."""
        return Path(self._checked(relpath)[0])

    def _checked(self, relpath: str) -> tuple[str, os.stat_result]:
        """`checked_path` as a string, with the lstat that checked it."""
        p = os.path.join(self.root, relpath)
        try:
            st = os.lstat(p)
        except FileNotFoundError as exc:
            raise InputError("no such file", path=relpath) from exc
        why = left_out_reason(st)
        if why:
            raise InputError(f"left out: {why}", path=relpath)
        if not stat.S_ISREG(st.st_mode):
            raise InputError(f"unreadable: {fsio.not_regular(st.st_mode)}, not a regular file", path=relpath)
        if st.st_size > protocol.max_bytes(relpath):
            limit = protocol.max_bytes(relpath) // (1024 * 1024)
            raise InputError(f"file is {st.st_size // 1024} KB, over the {limit} MB limit; split it", path=relpath)
        return p, st

    def read_text(self, relpath: str) -> str:
        """A workspace file as text, refusing what is not a protocol file's content."""
        path, st = self._checked(relpath)
        with _Reading(relpath):
            data = fsio.read_regular(path, st)[0]
        return decode(data, relpath)

    @contextlib.contextmanager
    def open_checked(self, relpath: str) -> Iterator[tuple[BinaryIO, Path]]:
        """A workspace file open for reading (and its path), refused as `read_text` refuses it, for a reader
        that takes it in slices; the reads' failures are InputErrors naming the file too."""
        path = self.checked_path(relpath)
        with _Reading(relpath), fsio.open_regular(path) as (fh, _st):
            yield fh, path

    def expand(self, given: list[str]) -> list[str]:
        """Workspace-relative paths for command-line arguments; a folder stands for its Markdown files."""
        out: list[str] = []
        for g in given:
            rel = self.relpath(g)
            out += list(self.iter_files(rel)) if self.path(rel).is_dir() else [rel]
        return out

    def iter_files(self, under: str = "", suffix: str | tuple[str, ...] = ".md") -> Iterator[str]:
        """Every Markdown file (or file ending in `suffix`, or one of them) of the workspace or of folder `under`,
        workspace-relative, sorted; skips .git and .kbsync. A walk in that order, one folder's listing at a
        time: a folder's files and subfolders are sorted by name, a subfolder's with its `/` (so that, as in
        the sorted full paths, `a-b` comes before `a/b` and `a/z` before `a0`)."""
        stack: list[Iterator[str | tuple[str, str]]] = [iter([self._top(under)])]
        while stack:
            item = next(stack[-1], None)
            if item is None:
                stack.pop()
            elif isinstance(item, str):
                yield item
            else:
                files, folders = _listing(*item, suffix)
                keyed: list[tuple[str, str | tuple[str, str]]] = [(rel, rel) for rel, _ in files]
                keyed += [(rel_dir, (rel_dir, path)) for rel_dir, path in folders]
                stack.append(value for _, value in sorted(keyed, key=lambda kv: kv[0]))

    def scan(self, under: str = "", suffix: str | tuple[str, ...] = ".md") -> Iterator[tuple[str, os.DirEntry[str]]]:
        """What `iter_files` lists, unsorted, each with its directory entry (whose `stat(follow_symlinks=False)`
        is the file's lstat, without building its path again)."""
        stack = [self._top(under)]
        while stack:
            files, folders = _listing(*stack.pop(), suffix)
            stack += folders
            yield from files

    def _top(self, under: str) -> tuple[str, str]:
        """The folder a walk of `under` starts at: its workspace-relative prefix ("" or ending in `/`), its path."""
        top = self.path(under) if under not in ("", ".") else self.root
        rel_top = os.path.relpath(top, self.root).replace(os.sep, "/")
        return ("" if rel_top == "." else rel_top + "/", str(top))


def _listing(rel_dir: str, folder: str, suffix: str | tuple[str, ...]) -> tuple[list[tuple[str, os.DirEntry[str]]],
                                                                             list[tuple[str, str]]]:
    """One folder of a walk: its files ending in `suffix` (relative path, entry) and the subfolders to enter
    (relative prefix, path); a link to a folder is neither entered nor listed, as with os.walk, and nor is
    .git or .kbsync at the top."""
    try:
        entries = list(os.scandir(folder))
    except OSError:  # gone or unreadable meanwhile: os.walk skips it too
        return [], []
    files, folders = [], []
    for entry in entries:
        if entry.is_dir():
            if not (entry.is_symlink() or (rel_dir == "" and entry.name in protocol.IGNORED_DIRS)):
                folders.append((rel_dir + entry.name + "/", entry.path))
        elif entry.name.endswith(suffix):
            files.append((rel_dir + entry.name, entry))
    return files, folders


class _Reading:
    """Around the reading of the workspace file `relpath`: what reading can raise, as an InputError naming it."""

    def __init__(self, relpath: str) -> None:
        self.relpath = relpath

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if isinstance(exc, FileNotFoundError):
            raise InputError("no such file (it went away while being read)", path=self.relpath) from exc
        if isinstance(exc, fsio.UnreadableError):
            raise InputError(exc.message, path=self.relpath) from None


SYMLINK = "symlink (kbsync never follows a link in the workspace; commit one by hand with git if it belongs there)"


def left_out_reason(st: os.stat_result) -> str | None:
    """Why kbsync leaves a workspace path out rather than read it, judged by its lstat; None to read it."""
    if stat.S_ISLNK(st.st_mode):
        return SYMLINK
    return None


def left_out(path: Path) -> str | None:
    """`left_out_reason` of the path itself (a link is not followed); None when it does not exist."""
    try:
        return left_out_reason(path.lstat())
    except FileNotFoundError:
        return None


BINARY = "binary content (NUL bytes); not a Markdown file"
NOT_UTF8 = "not UTF-8; convert the file to UTF-8"
BOM = "\ufeff"  # left out of a file's text


def decode(data: bytes, where: str) -> str:
    """UTF-8 text of a file, or InputError saying why it cannot be read as such."""
    if b"\x00" in data:
        raise InputError(BINARY, path=where)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(NOT_UTF8, path=where, line=line) from exc
    return text[1:] if text.startswith(BOM) else text
