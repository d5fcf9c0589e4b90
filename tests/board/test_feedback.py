"""Decay candidates as a pure function of entries, counters and an injected clock."""

from __future__ import annotations

import datetime as dt

from kbsync.board.feedback import Stats, decay_candidates

from helpers.board import entry

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
