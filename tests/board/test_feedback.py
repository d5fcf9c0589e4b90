"""Decay candidates as a pure function of entries, counters and an injected clock."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from helpers.board import entry
from kbsync.board.feedback import FeedbackStore, Stats, decay_candidates

UTC = dt.timezone.utc


def test_idle_and_harmful_entries_decay_retired_ones_do_not() -> None:
    now = dt.datetime(2025, 12, 1, tzinfo=UTC)
    fresh, idle, never, harmful = (entry(title=t) for t in ("fresh", "idle", "never", "harmful"))
    retired = entry(title="retired", status="retired")
    stats = {
        fresh.key: Stats(fresh.key, applied=3, last_applied="2025-11-20T00:00:00Z"),
        idle.key: Stats(idle.key, applied=1, last_applied="2025-08-01T00:00:00Z"),
        never.key: Stats(never.key, first_seen="2025-11-25T00:00:00Z"),
        harmful.key: Stats(harmful.key, helpful=1, harmful=2, last_applied="2025-11-30T00:00:00Z"),
    }
    got = {c.key: c.reasons for c in decay_candidates([fresh, idle, never, harmful, retired], stats, now, 90)}
    assert set(got) == {idle.key, harmful.key}
    assert got[idle.key] == ("not applied for 122 days (last applied 2025-08-01T00:00:00Z)",)
    assert got[harmful.key] == ("harmful 2 > helpful 1",)


def test_without_counters_the_source_date_counts() -> None:
    e = entry(source_date="2025-01-01")
    now = dt.datetime(2025, 3, 1, 12, tzinfo=dt.timezone(dt.timedelta(hours=8)))
    assert decay_candidates([e], {}, now, 90) == []
    later = now + dt.timedelta(days=31)
    (c,) = decay_candidates([e], {}, later, 90)
    assert c.reasons == ("not applied for 90 days (never applied (since 2025-01-01))",)


def test_renaming_an_entry_moves_its_counters_unless_asked_not_to(tmp_path: Path) -> None:
    import datetime as dt

    from helpers.board import payload
    from kbsync.app import board
    from kbsync.app.workspace import init_workspace, open_workspace

    init_workspace(tmp_path / "ws")
    ws = open_workspace(tmp_path / "ws", None)
    when = dt.datetime(2025, 7, 1, tzinfo=dt.timezone.utc)
    key = board.add_entry(ws, payload(), when).key
    board.give_feedback(ws, key, helpful=True)
    board.applied(ws, [key], when)
    moved = board.update_entry(ws, key, payload(title="改名后的条目")).key
    stats = board.show_entry(ws, moved).feedback
    assert (stats.helpful, stats.applied, stats.last_applied) == (1, 1, "2025-07-01T00:00:00Z")
    assert stats.first_seen == "2025-07-01T00:00:00Z"
    later = when + dt.timedelta(days=200)  # the entry's source date and first sighting long past
    fresh = board.update_entry(ws, moved, payload(title="再改一次"), keep_counters=False, now=later).key
    stats = board.show_entry(ws, fresh).feedback
    assert (stats.helpful, stats.applied, stats.last_applied, stats.first_seen) == (0, 0, None, "2026-01-17T00:00:00Z")
    assert board.decay_candidates(ws, later + dt.timedelta(days=1), 90) == []  # afresh: as if added then
    with FeedbackStore(ws.state_dir) as store:
        assert set(store.all()) == {fresh}  # the old key's counters not left behind (the review's drift)
