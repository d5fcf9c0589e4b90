"""Queries as people and models write them: any term matches, stop words are dropped, quoted phrases are exact,
the head outweighs the body, a record covering more of the query ranks first, and a hit names its best passage;
the context pack quotes the best passages first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.cli import Cli
from helpers.retrieval import session_text, sid_for, write
from kbsync.retrieval import db, index, ranking, relevance
from kbsync.retrieval.context import estimate_tokens
from kbsync.retrieval.passages import PASSAGE_TOKENS, split
from kbsync.retrieval.text import parse_query, query_terms
from kbsync.store.workspace import Workspace


def _session(root: Path, name: str, ts: str, summary: str, body: str, tags: tuple[str, ...] = ("笔记",)) -> str:
    sid, prefix = sid_for(ts, name)
    rel = f"{prefix}-{name}.md"
    write(root, rel, session_text(sid, ts, tags, "closed", summary, body))
    return rel


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Workspace, dict[str, str]]:
    root = tmp_path_factory.mktemp("relevance")
    turns = "\n\n".join(f"Melanie: we talked about the weather and the garden, day {i}." for i in range(40))
    made = {
        "lock": _session(root, "lock", "2025-03-01T09:00:00+08:00", "发布前检查锁文件",
                         "发布流程里锁文件过期会导致构建失败，要先清理。"),
        "release": _session(root, "release", "2025-03-02T09:00:00+08:00", "周报", "本周完成了发布。"),
        "pottery": _session(root, "pottery", "2025-03-03T09:00:00+08:00", "a chat with Melanie",
                            turns + "\n\nMelanie: I signed up for a pottery class last Saturday.\n\n" + turns),
        "pottery-title": _session(root, "pottery-title", "2025-03-04T09:00:00+08:00", "pottery workshop notes",
                                  "We met at noon."),
        "weather": _session(root, "weather", "2025-03-05T09:00:00+08:00", "a short note", "the weather was fine"),
        "phrase": _session(root, "phrase", "2025-03-06T09:00:00+08:00", "a note", "the release train left on time"),
        "apart": _session(root, "apart", "2025-03-07T09:00:00+08:00", "a note", "the train was late; release later"),
    }
    ws = Workspace(root)
    index.rebuild(ws)
    return ws, made


def _names(corpus: tuple[Workspace, dict[str, str]], text: str, limit: int = 10) -> list[str]:
    ws, made = corpus
    by_key = {v: k for k, v in made.items()}
    return [by_key[r.key] for r in _rows(ws, text, limit)]


def _rows(ws: Workspace, text: str, limit: int = 10) -> list[db.Row]:
    conn = db.connect(db.db_path(ws.state_dir))
    try:
        return ranking.search(conn, parse_query(text), "session", limit, bodies=index.bodies(ws))
    finally:
        conn.close()


def test_stop_words_are_dropped_in_both_languages() -> None:
    assert query_terms(parse_query("When did Melanie sign up for the pottery class?")) == (
        "melanie", "sign", "pottery", "class")
    assert query_terms(parse_query("检查发布前的锁文件问题")) == (
        "检查", "查发", "发布", "布前", "锁文", "文件", "件问", "问题")  # 前的 的锁 hold a particle
    assert query_terms(parse_query("我们上次讨论了什么")) == ("上次", "讨论", "论了") or \
        "什么" not in query_terms(parse_query("我们上次讨论了什么"))
    assert query_terms(parse_query("what is it")) == ("what", "is", "it")  # stop words alone are kept


def test_a_question_finds_what_its_keywords_find(corpus: tuple[Workspace, dict[str, str]]) -> None:
    """Any term matches: a sentence whose words are not all in one record still finds it, first."""
    assert _names(corpus, "发布 锁文件")[0] == "lock"
    assert _names(corpus, "检查发布前的锁文件问题")[0] == "lock"
    assert "release" in _names(corpus, "检查发布前的锁文件问题")  # holds 发布 only: found, after
    assert _names(corpus, "When did Melanie sign up for the pottery class?")[:2] in (
        ["pottery", "pottery-title"], ["pottery-title", "pottery"])


def test_no_hit_only_when_no_term_occurs(corpus: tuple[Workspace, dict[str, str]]) -> None:
    assert _names(corpus, "zebra quokka") == []
    assert _names(corpus, "zebra pottery") != []


def test_the_title_and_summary_outweigh_the_body(corpus: tuple[Workspace, dict[str, str]]) -> None:
    assert _names(corpus, "pottery")[:2] == ["pottery-title", "pottery"]  # once in the summary beats once in a body


def test_covering_more_of_the_query_ranks_first(corpus: tuple[Workspace, dict[str, str]]) -> None:
    got = _names(corpus, "weather pottery class")
    assert got[0] == "pottery"  # holds all three; the others one or two


def test_a_quoted_phrase_is_exact(corpus: tuple[Workspace, dict[str, str]]) -> None:
    assert _names(corpus, '"release train"') == ["phrase"]
    assert set(_names(corpus, "release train")) >= {"phrase", "apart"}


def test_a_hit_names_its_best_passage(corpus: tuple[Workspace, dict[str, str]]) -> None:
    ws, made = corpus
    row = next(r for r in _rows(ws, "pottery class") if r.key == made["pottery"])
    best = row.passages[0][1]
    assert "pottery class" in best.text and best.heading == "用户输入"
    assert estimate_tokens(best.text) <= PASSAGE_TOKENS  # the long section was cut, at a turn's boundary
    assert all(t.startswith("Melanie:") for t in best.text.split("\n\n"))


def test_a_long_section_is_cut_at_turns_and_nothing_is_lost() -> None:
    body = "## 用户输入\n\n" + "\n\n".join(f"A: turn {i} " + "word " * 30 for i in range(30)) + "\n## 结论\n\n短结论\n"
    got = split(body)
    assert len(got) > 3 and got[-1].heading == "结论" and got[-1].text == "短结论"
    assert all(estimate_tokens(p.text) <= PASSAGE_TOKENS for p in got)
    joined = " ".join(p.text for p in got if p.heading == "用户输入")
    assert all(f"A: turn {i} " in joined for i in range(30))
    assert split("whole entry\n## not a section", whole=True)[0].text == "whole entry\n## not a section"


def test_cli_search_shows_the_passage(corpus: tuple[Workspace, dict[str, str]], cli: Cli) -> None:
    ws, made = corpus
    out = cli("search", "pottery class", "--source", "sessions", "--json", ws=ws.root)
    assert out.returncode == 0, out.stderr
    hits = json.loads(out.stdout)
    by_path = {h["path"]: h for h in hits}
    assert "pottery class" in by_path[made["pottery"]]["passage"]["text"]
    text = cli("search", "pottery class", ws=ws.root).stdout
    assert "§ 用户输入: " in text


def test_the_pack_quotes_the_best_passages_first(corpus: tuple[Workspace, dict[str, str]], cli: Cli) -> None:
    ws, made = corpus
    out = cli("context", "--query", "When did Melanie sign up for the pottery class?", "--budget", "2000", "--json",
              ws=ws.root)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    sections = {p["name"]: p["text"] for p in data["parts"]}
    passages = sections["passages"]
    assert "I signed up for a pottery class last Saturday." in passages
    assert f"({made['pottery']}, 2025-03-03)" in passages  # file and date, so the model can read the rest
    assert "— 用户输入" in passages  # and the heading
    assert list(sections)[:2] == ["passages", "summaries"] or list(sections)[0] == "passages"
    assert data["tokens"] <= data["limit"]
    assert data["text"].index("pottery class last Saturday") < data["text"].index("## Recent sessions") \
        if "## Recent sessions" in data["text"] else True


def _score(body: str, summary: str = "a chat", terms: tuple[str, ...] = ("caroline", "research")) -> float:
    weights = {t: 1.0 for t in terms}
    return relevance.score(terms, weights, ("title", summary), body, 1.0).score


def test_terms_in_one_line_outrank_the_same_terms_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    together = "Caroline: I researched adoption agencies.\nMelanie: that is lovely, tell me more."
    apart = "Caroline: that is lovely, tell me more.\nMelanie: I researched adoption agencies."
    assert _score(together) > _score(apart)
    # one term alone is no closer anywhere: its line adds nothing, as if lines did not count
    alone = _score(together, terms=("adoption",))
    monkeypatch.setattr(relevance, "LINE_WEIGHT", 0.0)
    assert alone == _score(together, terms=("adoption",))


def test_a_sentence_of_the_summary_is_a_line_of_the_head() -> None:
    body = "We met at noon.\nNothing else."
    together = _score(body, summary="Caroline researched agencies. The rest was small talk.")
    apart = _score(body, summary="Caroline spoke first. Then the agencies were researched.")
    assert together > apart


def test_words_side_by_side_outrank_the_same_words_apart_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    terms = ("ice", "cream")
    side = "Joanna: the ice cream van came by.\nNate: nice."
    apart = "Joanna: the cream van came by ice.\nNate: nice."
    turned = "Joanna: the cream ice van came by.\nNate: nice."  # the query's order, not any order
    assert _score(side, terms=terms) > _score(apart, terms=terms) == _score(turned, terms=terms)
    monkeypatch.setattr(relevance, "PHRASE_WEIGHT", 0.0)  # nothing else tells the three apart
    assert _score(side, terms=terms) == _score(apart, terms=terms)


def test_side_by_side_across_a_hyphen_or_a_possessive_never_a_line_break() -> None:
    counts = relevance.Counts(["gina", "store", "ice", "cream"])
    assert counts("Jon: Gina's store is busy; Gina’s store again").pairs == {("gina", "store")}
    assert counts("an ice-cream van").pairs == {("ice", "cream")}
    assert counts("Gina\nstore, ice.\ncream").pairs == frozenset()
    assert counts("Gina shop store").pairs == frozenset()
