"""app.insights: the numbers behind the stats pictures, and the weekly review as one value."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from helpers.board import entry, git, payload
from kbsync.app import board, insights, sessions
from kbsync.app.workspace import open_workspace
from kbsync.board.feedback import Stats
from kbsync.errors import UsageError
from kbsync.store.workspace import Workspace

NOW = dt.datetime(2025, 9, 15, tzinfo=dt.timezone.utc)


@pytest.fixture
def ws(ws_root: Path) -> Workspace:
    return open_workspace(str(ws_root), None)


def test_sessions_per_month_by_tag(ws: Workspace) -> None:
    for raw, ts, tags in (("a", "2025-05-03T10:00:00Z", ["部署"]), ("b", "2025-06-01T09:00:00Z", ["部署", "git"]),
                          ("c", "2025-06-02T09:00:00Z", [])):
        sessions.save_session(ws, {"session_id": raw, "ts": ts, "tags": tags, "sections": {"结论": raw}})
    got = insights.pictures(ws, NOW).sessions
    assert got.categories == ("2025-05", "2025-06") and got.series == ("部署", "(none)")
    assert got.values == ((1, 1), (0, 1))  # each session once: June's bar is its two sessions, not three tags


def test_entries_by_type_and_confidence_and_votes_per_topic() -> None:
    entries = [entry(), entry(title="二", confidence="low"), entry(title="三", type="方法", topic="git")]
    grid = insights.entry_grid(entries)
    assert grid.categories[:2] == board.TYPES[:2] and grid.series == board.CONFIDENCES
    assert grid.values[grid.series.index("high")][grid.categories.index("踩坑")] == 1
    assert grid.values[grid.series.index("low")][grid.categories.index("踩坑")] == 1
    votes = {entries[0].key: Stats(entries[0].key, helpful=3, harmful=1), entries[2].key: Stats(entries[2].key, harmful=5)}
    fb = insights.feedback_grid(entries, votes)
    assert fb.categories == ("git", "部署") and fb.values == ((0, 3), (5, 1))


def test_decay_candidates_by_the_month_they_became_one() -> None:
    idle = entry(title="久未用", source_date="2025-03-01")
    fresh = Stats(entry(title="常用").key, applied=1, last_applied="2025-09-10T00:00:00Z")
    harmful = entry(title="有害", source_date="2025-09-01")
    grid = insights.decay_grid([idle, entry(title="常用"), harmful], {fresh.key: fresh, harmful.key: Stats(
        harmful.key, harmful=2)}, NOW, 90)
    months = dict(zip(grid.categories, grid.values[0]))
    assert grid.categories[0] == "2024-10" and grid.categories[-1] == "2025-09"
    assert months["2025-04"] == 0 and months["2025-05"] == 1 and months["2025-08"] == 1 and months["2025-09"] == 2


def test_the_review_with_no_drift_after_the_index_caught_up(ws_root: Path, ws: Workspace, cli: object) -> None:
    board.add_entry(ws, payload(), NOW)
    git(ws_root, "add", "-A")
    git(ws_root, "commit", "-qm", "board", when="2025-09-14T10:00:00+00:00")
    from kbsync.app.retrieval import rebuild_search

    rebuild_search(ws)
    got = insights.weekly_review(ws, NOW, "2025-09-10")
    assert got.added == [entry().key] and got.drift == [] and got.entries == 1 and len(got.commits) == 1
    assert got.counts["type"] == {"踩坑": 1}
    with pytest.raises(UsageError, match="since='last week'"):
        insights.weekly_review(ws, NOW, "last week")
