"""When no term of a query is rare (each held by more records than a search finds its candidates among,
FIND_POSTINGS), the candidates come from the heads that hold a telling term and from the newest records
holding the rarest: the search still answers, from those (it failed with an SQL error before, at about
40,000 sessions and up, for a query of one common word)."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.retrieval import indexed_sessions, ranked
from kbsync.retrieval import ranking
from kbsync.store.workspace import Workspace


@pytest.fixture
def indexed(tmp_path: Path) -> Workspace:
    """Eight sessions that all say rollback; the first two say deploy in their summary, the rest nowhere."""
    return indexed_sessions(tmp_path, [(f"2024-05-{i + 1:02d}T10:00:00+00:00", f"s{i}",
                                        "deploy notes" if i < 2 else f"notes {i}", "The rollback went fine.")
                                       for i in range(8)])


def _found(ws: Workspace, text: str) -> list[str]:
    return [r.date[:10] for r in ranked(ws, text)]


def test_a_common_word_alone(indexed: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ranking, "FIND_POSTINGS", 1)  # every term is common here, as a word of 50,000 records is
    assert sorted(_found(indexed, "rollback")) == [f"2024-05-{d:02d}" for d in range(1, 9)]  # the newest holding it


def test_common_words_one_of_them_in_a_few_heads(indexed: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ranking, "FIND_POSTINGS", 1)
    assert sorted(_found(indexed, "rollback deploy")) == ["2024-05-01", "2024-05-02"]  # the heads holding deploy
