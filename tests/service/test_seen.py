"""The daemon's map of what it last saw of each file: exact, and bounded."""

from __future__ import annotations

from kbsync.service.seen import Seen
from kbsync.store.fsio import Fingerprint


def fp(n: int) -> Fingerprint:
    return Fingerprint.of_bytes(f"content {n}".encode(), 1_700_000_000_000_000_000 + n)


def test_a_file_is_the_same_only_at_the_fingerprint_it_was_seen_at() -> None:
    seen = Seen()
    seen.note("a.md", fp(1))
    assert seen.same("a.md", fp(1))
    assert not seen.same("a.md", fp(2)) and not seen.same("b.md", fp(1))
    assert not seen.same("a.md", Fingerprint(fp(1).mtime_ns + 1, fp(1).sha256))  # touched, same bytes
    seen.forget("a.md")
    assert not seen.same("a.md", fp(1))


def test_the_least_recently_seen_go_first_once_it_is_full() -> None:
    seen = Seen(max_files=3)
    for n in range(3):
        seen.note(f"{n}.md", fp(n))
    seen.note("0.md", fp(0))  # seen again: now the most recent
    seen.note("3.md", fp(3))
    assert len(seen) == 3
    assert not seen.same("1.md", fp(1))  # dropped: checked again at its next event
    assert all(seen.same(f"{n}.md", fp(n)) for n in (0, 2, 3))
