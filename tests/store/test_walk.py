"""The walk of the workspace's files: in the order of their sorted paths, one folder at a time."""

from __future__ import annotations

import os
import tempfile
import tracemalloc
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from kbsync.store.workspace import Workspace

# Names whose folder-by-folder order differs from a plain sort of the names: `-` (0x2d), `.` (0x2e) and `0`
# (0x30) sort around `/` (0x2f); a file beside a folder that starts with its name; non-ASCII; a space.
TRICKY = ["a/b.md", "a-b/x.md", "a.md", "a0.md", "a/z.md", "a.b/c.md", "a b/c.md", "ab.md", "a/a-b/c.md",
          "a/a/c.md", "a/a.md", "A.md", "合同/评审.md", "合同-旧/x.md", "z.md", ".hidden/x.md", "x.txt"]


def make(root: Path, rels: list[str]) -> Workspace:
    for rel in rels:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x\n", encoding="utf-8")
    return Workspace(root)


def test_the_walk_gives_the_sorted_paths_where_a_sort_of_each_folder_would_not(tmp_path: Path) -> None:
    ws = make(tmp_path, TRICKY)
    walked = list(ws.iter_files())
    assert walked == sorted(rel for rel in TRICKY if rel.endswith(".md"))
    assert walked.index("a-b/x.md") < walked.index("a.md") < walked.index("a/b.md") < walked.index("a0.md")
    assert list(ws.iter_files("a")) == ["a/a-b/c.md", "a/a.md", "a/a/c.md", "a/b.md", "a/z.md"]
    assert list(ws.iter_files(suffix=(".md", ".txt")))[-1] == "合同/评审.md" and "x.txt" in ws.iter_files(suffix=".txt")


def test_the_walk_leaves_out_what_the_unsorted_scan_leaves_out(tmp_path: Path) -> None:
    ws = make(tmp_path, ["a/b.md", ".git/x.md", ".kbsync/y.md", "deep/.git/z.md", "real/r.md"])
    os.symlink(tmp_path / "real", tmp_path / "link")  # a link to a folder is neither entered nor listed
    os.symlink(tmp_path / "a" / "b.md", tmp_path / "l.md")  # a link to a file is listed (and refused when read)
    assert list(ws.iter_files()) == sorted(rel for rel, _ in ws.scan())
    assert list(ws.iter_files()) == ["a/b.md", "deep/.git/z.md", "l.md", "real/r.md"]


name = st.text(st.sampled_from("ab-.0 _é合"), min_size=1, max_size=4).filter(lambda s: s not in (".", ".."))


@given(st.lists(st.lists(name, min_size=1, max_size=3).map("/".join), min_size=1, max_size=12))
@settings(max_examples=60, deadline=None)
def test_any_tree_is_walked_in_the_order_of_its_sorted_paths(paths: list[str]) -> None:
    with tempfile.TemporaryDirectory() as td:
        root = Path(td)
        made: set[str] = set()
        for rel in paths:
            target = root / (rel + ".md")
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text("x\n", encoding="utf-8")
            except (FileExistsError, NotADirectoryError, IsADirectoryError):
                continue  # a name taken by a folder and a file at once
            made.add(rel + ".md")
        walked = list(Workspace(root).iter_files())
        assert walked == sorted(made)


def test_the_walk_holds_one_folder_at_a_time(tmp_path: Path) -> None:
    """Walking 100 folders of 40 files costs about what one folder's listing costs, not the whole list's."""
    ws = make(tmp_path, [f"d{d:03}/{'n' * 60}{f:03}.md" for d in range(100) for f in range(40)])
    walk = ws.iter_files()
    tracemalloc.start()
    first = next(walk)
    held, _ = tracemalloc.get_traced_memory()
    tracemalloc.reset_peak()
    count = 1 + sum(1 for _ in walk)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    whole = sum(len(r) + 49 for r in sorted(r for r, _ in ws.scan()))  # a list of every path, as str objects
    assert first == f"d000/{'n' * 60}000.md" and count == 4000
    assert peak < whole / 4, (held, peak, whole)
