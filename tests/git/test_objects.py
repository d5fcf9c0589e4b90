"""kbsync.gitobjects and the trees kbsync.gitrepo writes, checked against git itself on real repositories."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kbsync.errors import GitError
from kbsync.git import objects, repo

# Names that sort differently as files and as folders in git's tree order ("a" as a folder sorts as "a/").
NAMES = ["a", "a.md", "a-b", "a0", "b", "状态.md", "x y"]


def git(root: Path, *args: str, stdin: bytes | None = None) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, input=stdin).stdout.decode()


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("objects") / "ws"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    return root


def git_tree(root: Path, base: str | None, entries: list[tuple[str, str, str | None]]) -> str:
    """The same tree built by git's own read-tree, update-index and write-tree on a private index."""
    index = root / ".git" / "oracle-index"
    env = {"GIT_INDEX_FILE": str(index), "PATH": "/usr/bin:/bin"}

    def run(*args: str, stdin: bytes | None = None) -> str:
        return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=env,
                              input=stdin).stdout.decode()

    run("read-tree", *([base] if base else ["--empty"]))
    info = "".join(f"{m} {s}\t{p}\n" if s else f"0 {repo.ZERO_SHA}\t{p}\n" for p, m, s in entries)
    run("update-index", "--add", "--remove", "--index-info", stdin=info.encode())
    tree = run("write-tree").strip()
    index.unlink()
    return tree


def test_object_ids_match_git(work: Path) -> None:
    for data in (b"", b"a\n", "状态\n".encode(), bytes(range(256))):
        assert objects.object_id("blob", data) == git(work, "hash-object", "--stdin", stdin=data).strip()


def test_stored_objects_are_read_back_by_git(work: Path) -> None:
    sha = repo.write_blob(work, b"stored by kbsync\n")
    assert git(work, "cat-file", "-p", sha) == "stored by kbsync\n"
    assert repo.write_blob(work, b"stored by kbsync\n") == sha  # already there: not written again
    assert not list((work / ".git" / "objects" / sha[:2]).glob("tmp_obj_*"))


def test_tree_bytes_round_trip_in_gits_order(work: Path) -> None:
    blob = repo.write_blob(work, b"x")
    entries = [(f"{n}/f" if i % 2 else n, "100644", blob) for i, n in enumerate(NAMES)]
    tree = repo.build_tree(work, None, entries)
    assert tree == git_tree(work, None, entries)
    raw = subprocess.run(["git", "-C", str(work), "cat-file", "tree", tree], check=True, capture_output=True).stdout
    assert objects.tree_bytes(objects.parse_tree(raw)) == raw
    git(work, "fsck", "--no-dangling")


def test_an_emptied_folder_disappears_and_no_change_keeps_the_tree(work: Path) -> None:
    blob = repo.write_blob(work, b"y")
    base = repo.build_tree(work, None, [("d/e/f.md", "100644", blob), ("g.md", "100644", blob)])
    assert repo.build_tree(work, base, [("d/e/f.md", "100644", None)]) == git_tree(work, None, [("g.md", "100644", blob)])
    assert repo.build_tree(work, base, []) == base
    assert repo.build_tree(work, base, [("g.md", "100644", blob)]) == base


def test_a_base_that_is_not_a_tree_is_refused(work: Path) -> None:
    with pytest.raises(GitError, match="not a tree or commit"):
        repo.build_tree(work, "0" * 40, [("a.md", "100644", repo.write_blob(work, b"z"))])


paths = st.lists(st.sampled_from(NAMES), min_size=1, max_size=3).map("/".join)
change = st.tuples(paths, st.sampled_from(["100644", "100755", None]), st.binary(max_size=8))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(start=st.lists(change, max_size=8), changes=st.lists(change, min_size=1, max_size=6))
def test_rewriting_a_few_paths_gives_the_tree_git_would_write(work: Path, start: list, changes: list) -> None:
    def entries(items: list) -> list[tuple[str, str, str | None]]:
        out: dict[str, tuple[str, str | None]] = {}
        for path, mode, data in items:
            if any(p.startswith(path + "/") or path.startswith(p + "/") for p in out):
                continue  # a path cannot be a file and a folder at once, in git or in a work tree
            out[path] = ("100644", None) if mode is None else (mode, repo.write_blob(work, data))
        return [(p, m, s) for p, (m, s) in out.items()]

    base_entries = [e for e in entries(start) if e[2]]
    base = git_tree(work, None, base_entries) if base_entries else None
    todo = [e for e in entries(changes)
            if not any(b[0].startswith(e[0] + "/") or e[0].startswith(b[0] + "/") for b in base_entries)]
    assert repo.build_tree(work, base, todo) == git_tree(work, base, todo)


def test_objects_go_where_git_looks_in_a_linked_worktree(work: Path, tmp_path: Path) -> None:
    git(work, "-c", "user.name=k", "-c", "user.email=k@x", "commit", "-q", "--allow-empty", "-m", "start")
    linked = tmp_path / "linked"
    git(work, "worktree", "add", "-q", "--detach", str(linked))
    sha = repo.write_blob(linked, b"from a linked worktree\n")
    assert git(work, "cat-file", "-p", sha) == "from a linked worktree\n"


def test_a_sha256_repository_is_refused_with_a_clear_error(tmp_path: Path) -> None:
    root = tmp_path / "sha256"
    subprocess.run(["git", "init", "-q", "--object-format=sha256", str(root)], check=True)
    git(root, "-c", "user.name=k", "-c", "user.email=k@x", "commit", "-q", "--allow-empty", "-m", "start")
    head = repo.head_sha(root)
    with pytest.raises(GitError, match="SHA-256"):
        repo.commit_files(root, [repo.Staged("a.md", b"a")], "m", expected_head=head, author=("k", "k@x"))
    assert repo.head_sha(root) == head
    assert not [p for p in (root / ".git" / "objects").glob("??/*") if len(p.name) == 38]  # no SHA-1 object written
