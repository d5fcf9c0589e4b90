"""app.browse: sessions by month, day and tag with counts; search results with the words marked."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.daemon import wait_for
from kbsync.app import browse, catchup, sessions
from kbsync.app.workspace import open_workspace
from kbsync.errors import UsageError
from kbsync.store.workspace import Workspace


def _save(ws: Workspace, raw: str, ts: str, tags: list[str], text: str) -> str:
    done = sessions.save_session(ws, {"session_id": raw, "ts": ts, "tags": tags, "title": raw,
                                      "summary": f"{raw} 的摘要", "sections": {"结论": text}})
    return str(done.record["id"])


@pytest.fixture
def ws(ws_root: Path) -> Workspace:
    w = open_workspace(str(ws_root), None)
    _save(w, "a", "2025-05-03T10:00:00+00:00", ["部署"], "锁文件没有释放")
    _save(w, "b", "2025-06-01T09:00:00+00:00", ["部署", "git"], "推送失败时合同风险")
    _save(w, "c", "2025-06-01T11:00:00+00:00", ["git"], "deploy notes")
    _save(w, "d", "2025-06-20T11:00:00+00:00", [], "nothing tagged")
    return w


def test_counts_by_month_day_and_tag(ws: Workspace) -> None:
    every = browse.browse_sessions(ws)
    assert [(c.value, c.sessions) for c in every.months] == [("2025-06", 3), ("2025-05", 1)]
    assert every.days == [] and len(every.sessions) == 4
    assert [(c.value, c.sessions) for c in every.tags] == [("git", 2), ("部署", 2)]
    june = browse.browse_sessions(ws, month="2025-06")
    assert [(c.value, c.sessions) for c in june.days] == [("2025-06-20", 1), ("2025-06-01", 2)]
    assert [(c.value, c.sessions) for c in june.tags] == [("git", 2), ("部署", 1)]
    day = browse.browse_sessions(ws, day="2025-06-01", tag="部署")
    assert day.month == "2025-06" and [s.title for s in day.sessions] == ["b"] and day.total == 1
    assert [(c.value, c.sessions) for c in day.months] == [("2025-06", 1), ("2025-05", 1)]  # within the tag


def test_numbered_pages_with_the_total_filters_before_paging(ws: Workspace) -> None:
    first = browse.browse_sessions(ws, size=3)
    assert (first.total, first.page, first.pages, first.first) == (4, 1, 2, 1)
    assert [s.title for s in first.sessions] == ["d", "c", "b"]  # newest first
    rest = browse.browse_sessions(ws, size=3, page=2)
    assert [s.title for s in rest.sessions] == ["a"] and (rest.page, rest.first) == (2, 4)
    assert browse.browse_sessions(ws, size=3, page=99).page == 2  # past the last: the last
    tagged = browse.browse_sessions(ws, tag="部署", size=1, page=2)  # the tag before the pages
    assert (tagged.total, tagged.pages, [s.title for s in tagged.sessions]) == (2, 2, ["a"])
    june = browse.browse_sessions(ws, month="2025-06", tag="git")
    assert (june.total, [s.title for s in june.sessions]) == (2, ["c", "b"])


@pytest.mark.parametrize(("given", "says"), [({"month": "2025-13"}, "YYYY-MM"), ({"day": "2025-6-1"}, "YYYY-MM-DD"),
                                             ({"month": "2025-05", "day": "2025-06-01"}, "not in month")])
def test_a_bad_date_is_refused_saying_how_to_write_it(ws: Workspace, given: dict[str, str], says: str) -> None:
    with pytest.raises(UsageError, match=says):
        browse.browse_sessions(ws, **given)


def test_search_marks_the_words_in_title_summary_and_snippet(ws: Workspace) -> None:
    found = browse.search_sessions(ws, "合同")
    assert found.terms == ("合同",) and not found.failures and found.total == 1
    hit = found.hits[0]
    assert [s.text for s in hit.snippet if s.marked] == ["合同"]
    assert "".join(s.text for s in hit.snippet) == "推送失败时合同风险"
    assert hit.path.startswith("sessions/2025-06-01/") and hit.session_id and hit.tags == ("部署", "git")
    titled = browse.search_sessions(ws, "tag:git deploy")
    assert [s.text for h in titled.hits for s in h.snippet if s.marked] == ["deploy"]


def test_search_lists_only_sessions_counted_and_paged(ws: Workspace) -> None:
    """Every session holding a word, a page at a time with the true count; the board and memory never."""
    (ws.root / "memory").mkdir(exist_ok=True)
    (ws.root / "memory" / "notes.md").write_text("# notes\n\n摘要 in memory\n", encoding="utf-8")
    first = browse.search_sessions(ws, "摘要", size=3)  # every session's summary holds it
    assert (first.total, first.page, first.pages, first.first, len(first.hits)) == (4, 1, 2, 1, 3)
    last = browse.search_sessions(ws, "摘要", page=7, size=3)  # past the end: the last page
    assert (last.page, last.first, len(last.hits)) == (2, 4, 1)
    assert {h.path for h in first.hits + last.hits} == {h.path for h in browse.search_sessions(ws, "摘要").hits}
    assert all(h.path.startswith("sessions/") for h in first.hits + last.hits)
    june = browse.search_sessions(ws, "摘要 since:2025-06 until:2025-06 tag:git")
    assert june.total == 2 and len(june.hits) == 2
    none = browse.search_sessions(ws, "zzzz")
    assert (none.total, none.pages, none.hits) == (0, 1, [])
    with pytest.raises(UsageError, match="not a date"):
        browse.search_sessions(ws, "摘要 since:2025-13")


def test_the_listing_catches_up_with_the_files_in_the_background(ws: Workspace,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(catchup, "FRESH_S", 3600.0)
    before = len(browse.browse_sessions(ws).sessions)  # the first view catches up before it reads
    _save(ws, "e", "2025-07-01T09:00:00+00:00", [], "new")  # kbsync's own write: indexed before it returns
    assert len(browse.browse_sessions(ws).sessions) == before + 1
    copy = ws.root / "sessions" / "2025-07-02" / "0900-outside.md"  # a file written by something else
    copy.parent.mkdir(parents=True, exist_ok=True)
    made = next((ws.root / "sessions").rglob("*-e.md"))
    copy.write_text(made.read_text(encoding="utf-8").replace("id: ", "id: x", 1), encoding="utf-8")
    before += 1
    assert len(browse.browse_sessions(ws).sessions) == before  # caught up less than FRESH_S ago
    monkeypatch.setattr(catchup, "FRESH_S", 0.0)
    wait_for(lambda: len(browse.browse_sessions(ws).sessions) == before + 1)
