"""kbsync.service.appendonly: what counts as lines appended to a file already checked."""

from __future__ import annotations

from kbsync.service import appendonly
from kbsync.service.appendonly import Checked, appended

HEAD = b"| a | b |\n|---|---|\n"


def test_only_lines_appended_after_exactly_the_checked_bytes_count() -> None:
    before = HEAD + b"| 1 | 2 |\n"
    got = appended(Checked.of(before), before + b"| 3 | 4 |\n")
    assert got is not None and got.lines == b"| 3 | 4 |\n" and got.head == HEAD
    assert got.scan.endswith(got.lines) and before.endswith(got.scan[:-len(got.lines)])
    assert appended(None, before) is None
    assert appended(Checked.of(before), before) is None  # nothing new
    assert appended(Checked.of(before), before[:-1]) is None  # shortened
    assert appended(Checked.of(before), before.replace(b"1", b"9") + b"| 3 | 4 |\n") is None  # an old byte changed
    assert appended(Checked.of(before[:-1]), before + b"x\n") is None  # the checked part did not end a line


def test_the_scan_window_reaches_back_over_the_end_of_the_old_part() -> None:
    before = HEAD + b"x" * (appendonly.OVERLAP * 2) + b"\n"
    got = appended(Checked.of(before), before + b"new\n")
    assert got is not None and len(got.scan) == appendonly.OVERLAP + len(b"new\n")


def test_only_index_md_and_the_logs_are_append_only() -> None:
    assert appendonly.applies("index.md") and appendonly.applies("logs/tool-calls.md")
    assert not appendonly.applies("sessions/2025-06-11/1432-aaaaaaa.md") and not appendonly.applies("memory/facts.md")
