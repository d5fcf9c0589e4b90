"""kbsync.store.daemonstatus: the daemon's status file as one typed record, written atomically and read back;
a file that is not what the daemon writes reads as defaults, field by field."""

from __future__ import annotations

from pathlib import Path

import pytest

from kbsync.store import daemonstatus
from kbsync.store.daemonstatus import DaemonStatus


def test_a_record_written_reads_back_the_same(tmp_path: Path) -> None:
    record = DaemonStatus(pid=42, updated=daemonstatus.stamp(0), last_scan_ns=7, jobs={"sync": {"ok": True}},
                          last_event={"path": "index.md", "time": daemonstatus.stamp(1)},
                          skipped={"memory/a.md": "invalid: x"}, pending=["a.md"], pending_count=3)
    daemonstatus.write(tmp_path, record)
    assert daemonstatus.read(tmp_path) == record
    assert record.updated == "1970-01-01T00:00:00Z"


def test_no_file_reads_as_an_empty_record(tmp_path: Path) -> None:
    assert daemonstatus.read(tmp_path) == DaemonStatus()


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", "\"text\"", "\udcff"])
def test_a_file_that_is_no_json_object_reads_as_an_empty_record(tmp_path: Path, text: str) -> None:
    path = daemonstatus.status_path(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    assert daemonstatus.read(tmp_path) == DaemonStatus()


def test_a_field_of_the_wrong_type_reads_as_its_default() -> None:
    got = DaemonStatus.of({"pid": "12", "last_scan_ns": True, "jobs": [], "skipped": {"a.md": "locked"},
                           "pending": "a.md", "pending_count": 2, "last_commit": "abc", "extra": 1})
    assert got == DaemonStatus(skipped={"a.md": "locked"}, pending_count=2)
