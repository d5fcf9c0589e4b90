"""The pure integration planner: one rule set for both transports."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kbsync.core import board
from kbsync.store import initws
from kbsync.sync.plan import Versions, integrate_path, plan, union

SESSION = "sessions/2025-06-11/1432-a1b2c3d-x.md"


def entry(title: str, summary: str, day: str = "2025-06-11") -> board.Entry:
    return board.Entry(title=title, type="方法", topic="sync", summary=summary, core_content=f"{title} body\n",
                       source="test", source_date=day, scenarios=("tests",), confidence="high")


def board_with(*entries: board.Entry) -> bytes:
    text = board.NEW_BOARD
    for e in entries:
        text = board.upsert(text, e)[0]
    return text.encode()


def test_one_side_changes_are_taken() -> None:
    assert integrate_path(SESSION, Versions(b"a", b"b", b"a")) == (b"b", [])
    assert integrate_path(SESSION, Versions(b"a", b"a", b"c")) == (b"c", [])
    assert integrate_path(SESSION, Versions(b"a", None, b"a")) == (None, [])
    assert integrate_path(SESSION, Versions(None, None, b"new")) == (b"new", [])
    assert integrate_path(SESSION, Versions(b"a", b"same", b"same")) == (b"same", [])


def test_both_sides_changed_keeps_remote_and_copies_local() -> None:
    data, conflicts = integrate_path(SESSION, Versions(b"a", b"mine", b"theirs"))
    assert data == b"theirs"
    assert [(c.relpath, c.local) for c in conflicts] == [(SESSION, b"mine")]
    data, conflicts = integrate_path(SESSION, Versions(b"a", b"mine", None))
    assert data is None and conflicts[0].local == b"mine"
    assert integrate_path(SESSION, Versions(b"a", None, b"theirs")) == (b"theirs", [])


def test_skeleton_yields_to_the_remote() -> None:
    skeleton = initws.FILES["memory/facts.md"].encode()
    assert integrate_path("memory/facts.md", Versions(None, skeleton, b"# facts\n- x\n"), skeleton) == (b"# facts\n- x\n", [])
    assert integrate_path("memory/facts.md", Versions(None, b"mine\n", skeleton), skeleton) == (b"mine\n", [])
    assert integrate_path("memory/facts.md", Versions(None, skeleton, None), skeleton) == (skeleton, [])
    _, conflicts = integrate_path("memory/facts.md", Versions(None, b"edited\n", b"# facts\n- x\n"), skeleton)
    assert conflicts


def test_append_only_files_keep_both_sides_lines() -> None:
    base = b"h\n1\n"
    assert union(base, b"h\n1\nmine\n", b"h\n1\ntheirs\n") == b"h\n1\ntheirs\nmine\n"
    assert union(None, b"h\nmine\n", b"h\ntheirs") == b"h\ntheirs\nmine\n"
    assert union(base, b"h\n1\nsame\n", b"h\n1\nsame\n") == b"h\n1\nsame\n"
    result = plan({"logs/errors.md": Versions(b"", b"a\n", b"b\n"), "index.md": Versions(b"h\n", b"h\nx\n", b"h\ny\n")})
    assert result.merged == {"index.md": b"h\ny\nx\n", "logs/errors.md": b"b\na\n"}
    assert result.conflicts == ()


lines = st.lists(st.text(alphabet="ab|\u4e2d", min_size=1, max_size=4), max_size=6)


@given(lines, lines, lines)
def test_union_loses_no_line(base: list[str], mine: list[str], theirs: list[str]) -> None:
    enc = lambda ls: "".join(x + "\n" for x in ls).encode()  # noqa: E731
    out = union(enc(base), enc(base + mine), enc(base + theirs)).decode().splitlines()
    for line in base + mine + theirs:
        assert line in out
    assert out[: len(base) + len(theirs)] == base + theirs


def test_board_entries_merge_one_by_one() -> None:
    a, b_, c = entry("甲", "one"), entry("乙", "two"), entry("丙", "three")
    base = board_with(a, b_)
    local = board_with(a, b_, c)
    remote = board_with(a, entry("乙", "two, edited"))
    merged, conflicts = integrate_path("LEARNING_BOARD.md", Versions(base, local, remote))
    assert conflicts == [] and merged is not None
    parsed = {e.entry.key: e.entry.summary for e in board.parse_board(merged.decode()).entries()}
    assert parsed == {a.key: "one", b_.key: "two, edited", c.key: "three"}
    assert board.validate_board(merged.decode()) == []


def with_drafts(data: bytes, *drafts: board.Entry) -> bytes:
    """The board with each entry appended as written, even under a key it already holds (upsert would replace)."""
    return data.rstrip(b"\n") + b"".join(b"\n\n" + board.render_entry(d).rstrip("\n").encode() for d in drafts) + b"\n"


def test_board_two_drafts_under_one_key_are_both_kept_and_compared_one_by_one() -> None:
    a = entry("甲", "one")
    base = board_with(a)
    local = with_drafts(base, entry("乙", "first draft"), entry("乙", "second draft"))
    remote = board_with(entry("甲", "one, edited"))
    merged, conflicts = integrate_path("LEARNING_BOARD.md", Versions(base, local, remote))
    assert conflicts == [] and merged is not None
    summaries = [e.entry.summary for e in board.parse_board(merged.decode()).entries()]
    assert summaries == ["one, edited", "first draft", "second draft"]
    both = with_drafts(board_with(entry("乙", "remote's")), entry("乙", "remote's second"))
    merged, conflicts = integrate_path("LEARNING_BOARD.md", Versions(b"", local.replace(b"one", b"x"), both))
    assert merged is not None
    (copy,) = conflicts
    assert [e.entry.summary for e in board.parse_board(copy.local.decode()).entries()] == ["first draft", "second draft"]
    assert "乙" in copy.what and "\x00" not in copy.what


def test_board_same_entry_both_sides_is_a_conflict_copy_of_that_entry() -> None:
    a, b_ = entry("甲", "one"), entry("乙", "two")
    base = board_with(a, b_)
    local = board_with(entry("甲", "mine"), b_)
    remote = board_with(entry("甲", "theirs"), b_)
    merged, conflicts = integrate_path("LEARNING_BOARD.md", Versions(base, local, remote))
    assert merged == remote
    (copy,) = conflicts
    kept = board.parse_board(copy.local.decode())
    assert [e.entry.summary for e in kept.entries()] == ["mine"]
    assert [f for f in board.validate_board(copy.local.decode()) if f.level == "error"] == []


def test_board_unchanged_remote_takes_local_bytes() -> None:
    base = board_with(entry("甲", "one"))
    local = board_with(entry("甲", "one"), entry("乙", "two"))
    assert integrate_path("LEARNING_BOARD.md", Versions(base, local, base)) == (local, [])
    remote = board_with(entry("甲", "one"), entry("丙", "three"))
    merged, _ = integrate_path("LEARNING_BOARD.md", Versions(base, local, remote))
    assert merged is not None
    assert [e.entry.title for e in board.parse_board(merged.decode()).entries()] == ["甲", "丙", "乙"]


# ---- memory entry files: fact by fact -------------------------------------------------------

FACTS = "memory/facts.md"
BASE = b"# F\n\n- a: 1\n- b: 2\n"


def test_facts_added_on_different_machines_are_all_kept_in_a_stable_order() -> None:
    local, remote = BASE + b"- mine: x\n", BASE + b"- theirs: y\n"
    assert integrate_path(FACTS, Versions(BASE, local, remote)) == (BASE + b"- theirs: y\n- mine: x\n", [])


def test_a_fact_deleted_on_one_side_and_untouched_on_the_other_is_deleted() -> None:
    assert integrate_path(FACTS, Versions(BASE, b"# F\n\n- b: 2\n", BASE + b"- c: 3\n")) == (b"# F\n\n- b: 2\n- c: 3\n", [])
    assert integrate_path(FACTS, Versions(BASE, BASE + b"- c: 3\n", b"# F\n\n- a: 1\n")) == (b"# F\n\n- a: 1\n- c: 3\n", [])


def test_a_fact_changed_differently_on_both_sides_gives_a_copy_of_just_those_entries() -> None:
    data, found = integrate_path("memory/entities/acme.md", Versions(BASE, b"# F\n\n- a: mine\n- b: 2\n- n: 1\n",
                                                                     b"# F\n\n- a: theirs\n- b: 2\n"))
    assert data == b"# F\n\n- a: theirs\n- b: 2\n- n: 1\n"
    assert [(c.local, c.what) for c in found] == [(b"# F\n\n- a: mine\n", "entries a changed on both sides")]
    _, found = integrate_path(FACTS, Versions(None, b"# F\n- k: 1\n", b"# F\n- k: 2\n"))
    assert found[0].what == "entries k added on both sides"


def test_added_on_both_sides_is_said_so() -> None:
    assert integrate_path(SESSION, Versions(None, b"mine", b"theirs"))[1][0].what == "added on both sides"


def test_a_conflict_copy_is_never_merged_and_its_copy_is_named_after_the_original() -> None:
    from kbsync.core import protocol

    copy = "memory/facts.conflict-20250611T063207Z-a1b2c3.md"
    _data, found = integrate_path(copy, Versions(None, b"- a: 1\n", b"- a: 2\n"))
    assert [c.relpath for c in found] == [copy]
    assert protocol.conflict_name(copy, "20250612T000000Z", "d4e5f6") == "memory/facts.conflict-20250612T000000Z-d4e5f6.md"
    assert protocol.original_of("memory/facts.conflict-1Z.conflict-20250611T063207Z.md") != FACTS  # not a copy name
    assert protocol.original_of("m/f.conflict-20250611T063207Z-1.conflict-20250611T063208Z-a1b2c3.md") == "m/f.md"
