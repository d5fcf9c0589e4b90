"""A query's English word matches the forms people write of it (kbsync.retrieval.stem): plurals, -ed, -ing and
a final e; the index keeps the words as written, so a search finds, counts and ranks a record by any form."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.retrieval import session_text, sid_for, write
from kbsync.retrieval import db, index, ranking
from kbsync.retrieval.relevance import Counts
from kbsync.retrieval.stem import forms, stem
from kbsync.retrieval.text import parse_query
from kbsync.store.workspace import Workspace


@pytest.mark.parametrize(("words", "same"), [
    (("camp", "camps", "camped", "camping"), True),
    (("hike", "hikes", "hiked", "hiking"), True),
    (("story", "stories"), True),
    (("plan", "plans", "planned", "planning"), True),
    (("hop", "hopped", "hopping"), True),
    (("dance", "dances", "danced", "dancing"), True),
    (("recipe", "recipes"), True),
    (("agree", "agreed", "agreeing"), True),
    (("dance", "dancer"), False),  # -er makes another word
    (("caress", "cares"), False),
])
def test_forms_share_a_stem(words: tuple[str, ...], same: bool) -> None:
    assert (len({stem(w) for w in words}) == 1) is same


@pytest.mark.parametrize("word", ["camping", "camped", "camps"])
def test_a_word_stands_for_its_forms(word: str) -> None:
    found = forms(word)
    assert found[0] == word
    assert {"camp", "camps", "camped", "camping"} <= set(found)
    assert all(stem(f) == stem(word) for f in found)


@pytest.mark.parametrize(("word", "written"), [
    ("hikes", {"hike", "hiked", "hiking"}),  # a stem that keeps its e drops it before -ing, -ed
    ("writings", {"write", "writes", "writing"}),
    ("agree", {"agreed", "agreeing", "agrees"}),
    ("dance", {"danced", "dancing", "dances"}),
])
def test_forms_hold_the_spellings_people_write(word: str, written: set[str]) -> None:
    assert written <= set(forms(word))


@pytest.mark.parametrize("word", ["合同", "2023", "café", "go", "k8s"])
def test_other_words_are_their_own_form(word: str) -> None:
    assert forms(word) == (word,)


def test_no_form_shorter_than_three_letters() -> None:
    assert "us" not in forms("used") and "go" not in forms("going")


def test_counted_by_any_form() -> None:
    counts = Counts(["camping", "campfire"])
    assert counts("We camped twice; camps are fun. Camping!").counts["camping"] == 3
    assert counts("campground").counts["camping"] == 0  # a form stands whole, as a word


@pytest.fixture
def indexed(tmp_path: Path) -> Workspace:
    for i, body in enumerate(("We camped by the lake.", "The camping trip was long.", "A day at the office.")):
        ts = f"2024-05-0{i + 1}T10:00:00+00:00"
        sid, prefix = sid_for(ts, f"s{i}")
        write(tmp_path, f"{prefix}-s.md", session_text(sid, ts, (), "open", f"day {i}", body))
    ws = Workspace(tmp_path)
    index.rebuild(ws)
    return ws


def test_search_finds_and_counts_every_form(indexed: Workspace) -> None:
    conn = db.connect(db.db_path(indexed.state_dir))
    try:
        query = parse_query("where has she camped")
        found = ranking.search(conn, query, "session", 10, bodies=index.bodies(indexed))
        assert sorted(r.date[:10] for r in found) == ["2024-05-01", "2024-05-02"]
        assert ranking.count(conn, query, "session") == 2
    finally:
        conn.close()
