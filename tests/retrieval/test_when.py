"""A query that names a time (a day, a month, a year; in English or Chinese) holds one more term: the record's
date falling in that time (kbsync.retrieval.when). It ranks the records of then above others that hold the
same words, and filters nothing out."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.retrieval import indexed_sessions, ranked
from kbsync.retrieval.text import parse_query
from kbsync.retrieval.when import window
from kbsync.store.workspace import Workspace


@pytest.mark.parametrize(("text", "expected"), [
    ("what did we decide on October 13, 2023?", ("2023-10-13", "2023-10-20")),
    ("the movie she watched on 1 May, 2022", ("2022-05-01", "2022-05-08")),
    ("the book he finished on 8th December, 2023", ("2023-12-08", "2023-12-15")),
    ("the deploy of 13 Oct 2023", ("2023-10-13", "2023-10-20")),
    ("the trip in July 2022", ("2022-07-01", "2022-08-07")),
    ("release 2023-10-13 notes", ("2023-10-13", "2023-10-20")),
    ("release notes of 2024-02", ("2024-02-01", "2024-03-07")),
    ("2023年10月13日的发布", ("2023-10-13", "2023-10-20")),
    ("2023年10月的发布", ("2023-10-01", "2023-11-07")),
    ("what changed in 2023", ("2023-01-01", "2024-01-07")),
])
def test_times_read(text: str, expected: tuple[str, str]) -> None:
    assert window(text) == expected


@pytest.mark.parametrize("text", [
    "when did she go camping in July?",  # which July is the record's to know
    "the meeting of 2023-02-31",  # no such day
    "we may deploy on Friday",
    "room 2023 booking",
    "7月的发布",
    "编号12023年的记录",  # a longer number is no year
])
def test_no_time_read(text: str) -> None:
    assert window(text) is None


def test_filters_are_not_a_time() -> None:
    assert parse_query("since:2023-10-01 until:2023-10-31 deploy").when == ()
    assert parse_query("deploy on 13 October 2023").when == ("2023-10-13", "2023-10-20")


DATES = ("2023-09-13", "2023-10-13", "2023-11-13")


@pytest.fixture
def indexed(tmp_path: Path) -> Workspace:
    """Three sessions holding the same words, a month apart; the last one's summary holds them twice."""
    return indexed_sessions(tmp_path, [
        (f"{day}T10:00:00+00:00", day,
         "painting lighthouse painting lighthouse" if day == DATES[-1] else "painting lighthouse",
         "We talked about the painting.") for day in DATES])


def _dates(ws: Workspace, text: str) -> list[str]:
    return [r.date[:10] for r in ranked(ws, text)]


@pytest.mark.parametrize("text", ["the painting shown on October 13, 2023", "2023年10月13日 painting",
                                  "the painting of October 2023"])
def test_the_record_of_then_comes_first(indexed: Workspace, text: str) -> None:
    found = _dates(indexed, text)
    assert found[0] == "2023-10-13"
    assert sorted(found) == sorted(DATES)  # the others still match: a time is a term, not a filter


def test_without_a_time_the_words_decide(indexed: Workspace) -> None:
    assert _dates(indexed, "the painting shown")[0] == DATES[-1]
