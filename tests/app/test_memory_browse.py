"""app.memory.browse: the facts of every memory file searched and filtered by file before paging, the count of
what matches and of every fact, and the page that holds a fact."""

from __future__ import annotations

from pathlib import Path

import pytest

from kbsync.app import memory
from kbsync.app.workspace import open_workspace
from kbsync.store.workspace import Workspace


@pytest.fixture
def ws(ws_root: Path) -> Workspace:
    w = open_workspace(str(ws_root), None)
    for n in range(12):
        memory.set_fact(w, f"fact{n:02d}", f"第 {n} 条" + ("：回滚" if n % 3 == 0 else ""))
    memory.set_fact(w, "tone", "Terse 回滚", preferences=True)
    memory.set_fact(w, "owner", "王五", entity="Alpha")
    return w


def test_the_search_and_the_file_apply_before_paging(ws: Workspace) -> None:
    every = memory.list_facts(ws)
    first = memory.browse(ws, size=5)
    assert (first.matched, first.total, first.page, first.pages, first.start) == (14, 14, 1, 3, 0)
    assert first.items == every[:5]
    last = memory.browse(ws, page=7, size=5)  # past the last: the last
    assert (last.page, last.start) == (3, 10) and last.items == every[10:]
    rolled = memory.browse(ws, q="回滚", size=5)  # in facts.md and preferences.md, on every page of the whole list
    assert [i.key for i in rolled.items] == ["fact00", "fact03", "fact06", "fact09", "tone"]
    assert (rolled.matched, rolled.total, rolled.pages) == (5, 14, 1)
    assert [i.key for i in memory.browse(ws, q="回滚", kind="facts", size=5).items] == ["fact00", "fact03", "fact06",
                                                                                      "fact09"]
    assert [i.key for i in memory.browse(ws, q="TERSE", size=5).items] == ["tone"]  # case ignored
    assert [i.key for i in memory.matching(ws, kind="entity")] == ["owner"]
    assert memory.browse(ws, kind="nothing").matched == 0


def test_the_page_holding_a_fact(ws: Workspace) -> None:
    assert [memory.page_holding(i, 120) for i in (0, 49, 50, 120)] == [1, 1, 2, 3]
    assert [memory.file_kind(p) for p in memory.memory_files(ws)] == ["facts", "preferences", "entity"]
