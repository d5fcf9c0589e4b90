"""kbsync.service.appendonly: what counts as lines appended to a file already checked."""

from __future__ import annotations

import pytest

from helpers.hook import provider_secrets
from kbsync.core.detect.secrets import scan_bytes
from kbsync.service import appendonly
from kbsync.service.appendonly import Checked, appended

HEAD = b"| a | b |\n|---|---|\n"


def test_only_lines_appended_after_exactly_the_checked_bytes_count() -> None:
    before = HEAD + b"| 1 | 2 |\n"
    got = appended(Checked.of(before), before + b"| 3 | 4 |\n")
    assert got is not None and got.lines == b"| 3 | 4 |\n" and got.head == HEAD
    assert got.scan.endswith(got.lines) and before.endswith(got.scan[:-len(got.lines)])
    assert got.checked == Checked.of(before + b"| 3 | 4 |\n"), "the next append is checked from the whole file"
    assert appended(None, before) is None
    assert appended(Checked.of(before), before) is None  # nothing new
    assert appended(Checked.of(before), before[:-1]) is None  # shortened
    assert appended(Checked.of(before), before.replace(b"1", b"9") + b"| 3 | 4 |\n") is None  # an old byte changed
    assert appended(Checked.of(before[:-1]), before + b"x\n") is None  # the checked part did not end a line


def test_the_scan_window_reaches_back_over_the_end_of_the_old_part() -> None:
    before = HEAD + b"x" * (appendonly.OVERLAP * 2) + b"\n"
    got = appended(Checked.of(before), before + b"new\n")
    assert got is not None and len(got.scan) == appendonly.OVERLAP + len(b"new\n")


def test_without_a_multi_line_keyword_the_scan_begins_two_lines_back() -> None:
    rows = b"".join(b"| 2025-06-%02d | \xe5\x90\x88\xe5\x90\x8c | r%d |\n" % (d % 28 + 1, d) for d in range(2000))
    before = HEAD + rows
    got = appended(Checked.of(before), before + b"| new |\n")
    assert got is not None and got.scan == b"".join(before.splitlines(keepends=True)[-2:]) + b"| new |\n"


def test_a_multi_line_keyword_within_the_overlap_moves_the_start_to_its_line() -> None:
    rows = b"".join(b"| row %d |\n" % i for i in range(3000))
    begin = b"text -----" + b"BEGIN RSA PRIV" + b"ATE KEY-----\n"  # built here: the repository holds no key-shaped text
    before = HEAD + rows + begin + rows[:rows.index(b"| row 50 |")]
    got = appended(Checked.of(before), before + b"KEY-----\n")
    assert got is not None and got.scan.startswith(begin)
    far = HEAD + begin + b"x" * appendonly.OVERLAP + b"\n" + rows
    got = appended(Checked.of(far), far + b"new\n")
    assert got is not None and begin not in got.scan and len(got.scan) < 100


def _split_at_spaces(line: str) -> list[str]:
    """The line itself, and each way of breaking it into two lines at one of its spaces."""
    parts = line.split(" ")
    return [line] + [" ".join(parts[:i]) + "\n" + " ".join(parts[i:]) for i in range(1, len(parts))]


def _secrets() -> dict[str, str]:
    """provider_secrets(), and a private key whose header only the multi-line rule knows (the marker rule
    would flag the old part alone)."""
    found = provider_secrets()
    found["private-key-encrypted"] = found["private-key"].replace(" RSA ", " ENCRYPTED ")
    return found


@pytest.mark.parametrize("rule", sorted(_secrets()))
def test_every_secret_the_whole_file_scan_finds_past_a_clean_old_part_the_append_scan_finds(rule: str) -> None:
    filler = [f"| 2025-06-{d % 28 + 1:02d} | 合同评审 {d} | sessions/x-{d}.md |" for d in range(40)]
    tried = 0
    for secret in _split_at_spaces(_secrets()[rule]):
        lines = filler[:20] + secret.splitlines() + filler[20:]
        data = ("\n".join(lines) + "\n").encode("utf-8")
        if not scan_bytes("index.md", data):
            continue  # broken there, it is no secret
        tried += 1
        for k in range(1, len(lines)):
            old = ("\n".join(lines[:k]) + "\n").encode("utf-8")
            if scan_bytes("index.md", old):
                continue  # the old part was not clean: the daemon checks such a file whole
            got = appended(Checked.of(old), data)
            assert got is not None and scan_bytes("index.md", got.scan), f"{rule}, split after line {k}: {secret!r}"
    assert tried, f"{rule}: the fixture must hold a secret"


def test_only_index_md_and_the_logs_are_append_only() -> None:
    assert appendonly.applies("index.md") and appendonly.applies("logs/tool-calls.md")
    assert not appendonly.applies("sessions/2025-06-11/1432-aaaaaaa.md") and not appendonly.applies("memory/facts.md")
