"""The LoCoMo retrieval bench keeps working: run on a tiny LoCoMo-shaped file made here (no public data)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
BENCH = REPO / "bench" / "bench_locomo.py"

# Each session talks of one thing only, so a question in that session's words has one right answer.
TOPICS = [
    ("pottery", "I signed up for a pottery class and made a crooked bowl", "When did Ann make a bowl in pottery class?"),
    ("marathon", "I ran my first marathon in Boston and finished in four hours", "How long did Ann take for the Boston marathon?"),
    ("violin", "My grandfather gave me his old violin from Vienna", "Who gave Ann the violin from Vienna?"),
    ("garden", "We planted tomatoes and basil in the community garden", "What did Ann plant in the community garden?"),
    ("puppy", "We adopted a beagle puppy called Biscuit from the shelter", "What is the name of the beagle puppy?"),
    ("kayak", "Last weekend I went kayaking on the lake at sunrise", "Where did Ann go kayaking at sunrise?"),
]


def sample(first: int) -> dict[str, Any]:
    conv: dict[str, Any] = {"speaker_a": "Ann", "speaker_b": "Bo"}
    summaries, qa = {}, []
    for n, (topic, line, question) in enumerate(TOPICS[first:first + 3], start=1):
        conv[f"session_{n}_date_time"] = f"{n}:05 pm on {n + 3} May, 2023"
        conv[f"session_{n}"] = [
            {"speaker": "Ann", "dia_id": f"D{n}:1", "text": line},
            {"speaker": "Bo", "dia_id": f"D{n}:2", "text": "That sounds lovely, tell me more!",
             "img_url": ["x"], "blip_caption": "a photo of a smiling person"},
        ]
        summaries[f"session_{n}_summary"] = f"Ann told Bo about {topic}."
        qa.append({"question": question, "answer": topic, "evidence": [f"D{n}:1"], "category": 4 if n % 2 else 1})
    qa.append({"question": TOPICS[first][0], "answer": "x", "evidence": ["D1:1"], "category": 4})  # a keyword
    qa.append({"question": "Unanswerable?", "adversarial_answer": "x", "evidence": ["D1:1"], "category": 5})
    return {"sample_id": f"s{first}", "conversation": conv, "session_summary": summaries, "qa": qa}


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(BENCH), *args], capture_output=True, text=True, timeout=600)


def keyword_only(tmp_path: Path) -> str:
    """A configuration without the semantic leg: the tests that are not about legs need no embedding model."""
    config = tmp_path / "keyword.toml"
    config.write_text("[search]\nsemantic = false\n", encoding="utf-8")
    return str(config)


def test_bench_prints_the_table_on_a_tiny_locomo_file(tmp_path: Path) -> None:
    data = tmp_path / "tiny.json"
    data.write_text(json.dumps([sample(0), sample(3)]), encoding="utf-8")
    got = run(str(data), "--convs", "0-1", "--dump", str(tmp_path / "dump.jsonl"), "--config", keyword_only(tmp_path))
    assert got.returncode == 0, got.stderr
    lines = got.stdout.splitlines()
    dumped = [json.loads(line) for line in (tmp_path / "dump.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(dumped) == 8 and all(d["systems"]["BM25 whole files"]["rank"] == 1 for d in dumped)
    assert {d["question"] for d in dumped} == {t[2] for t in TOPICS} | {"pottery", "garden"}
    assert lines[0].startswith("LoCoMo conversations 0,1: one workspace each (6 sessions), 8 questions")
    bm25 = next(line.split() for line in lines if line.startswith("BM25 whole files"))
    assert bm25[3:9] == ["all", "8", "1.00", "1.00", "1.00", "0.00"]  # each question's own words find its session
    kbsync = next(line.split() for line in lines if line.startswith("kbsync search"))
    assert float(kbsync[4]) >= 0.25  # top 1: at least the one-word questions are found first
    assert any(line.split()[:1] == ["single-hop"] for line in lines)
    packs = [line.split() for line in lines if line.startswith("context pack")]
    assert [p[2] for p in packs] == ["2000", "8000"]
    assert all(float(p[4]) >= 0.25 for p in packs)  # the pack of a one-word question holds its answer turn
    cross = lines.index(next(line for line in lines if line.startswith("Cross-language: one workspace of")))
    assert [line.split()[0] for line in lines[cross + 2:cross + 4]] == ["kbsync", "en"]  # both directions asked
    assert lines[cross + 3].split()[:3] == ["en", "->", "zh"]


def test_the_cross_language_set_is_complete_and_about_the_tuning_conversations(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = importlib.util.spec_from_file_location("crosslang", REPO / "bench" / "crosslang.py")
    assert spec and spec.loader
    crosslang = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "crosslang", crosslang)
    spec.loader.exec_module(crosslang)
    from kbsync.app.sessions import save_session
    from kbsync.app.workspace import init, open_workspace

    cs = crosslang.load()
    assert len(cs.zh_about_en) >= 50 and len(cs.en_about_zh) >= 50
    assert {q.conv for q in cs.zh_about_en} <= set(range(5))  # conversations 5-9 are held out
    assert all(crosslang.CJK.search(q.question) for q in cs.zh_about_en)
    assert not any(crosslang.CJK.search(q.question) for q in cs.en_about_zh)
    init(tmp_path)
    ws = open_workspace(str(tmp_path), None)
    saved = {save_session(ws, crosslang.payload(e), key).relpath for key, e in cs.zh_sessions.items()}
    assert len(saved) == len(cs.zh_sessions) >= 25


def test_held_out_conversations_need_the_flag(tmp_path: Path) -> None:
    data = tmp_path / "tiny.json"
    data.write_text(json.dumps([sample(0)] * 6), encoding="utf-8")
    got = run(str(data), "--convs", "5")
    assert got.returncode == 2
    assert "held out" in got.stderr


def test_a_file_that_is_not_locomo_is_one_line_naming_it(tmp_path: Path) -> None:
    data = tmp_path / "bad.json"
    data.write_text(json.dumps([{"conversation": {"session_1": [{"speaker": "A"}]}}]), encoding="utf-8")
    got = run(str(data), "--convs", "0")
    assert got.returncode == 1
    assert got.stderr.strip().count("\n") == 0 and "session_1[0]" in got.stderr and "bad.json" in got.stderr


def test_the_semantic_leg_is_built_as_a_person_would_and_measured_alone(tmp_path: Path) -> None:
    data = tmp_path / "tiny.json"
    data.write_text(json.dumps([sample(0)]), encoding="utf-8")
    got = run(str(data), "--convs", "0", "--no-crosslang")  # the default configuration: both legs
    assert got.returncode == 0, got.stderr
    lines = got.stdout.splitlines()
    assert "index built in keyword" in lines[0] and ", semantic " in lines[0]
    rows = {line[:24].strip(): line.split()[-7:] for line in lines if "leg alone" in line}
    assert set(rows) == {"keyword leg alone", "semantic leg alone"}
    assert rows["semantic leg alone"][0] == "4" and float(rows["semantic leg alone"][2]) > 0  # top 5


def test_each_leg_is_measured_alone_when_search_has_two(tmp_path: Path) -> None:
    data = tmp_path / "tiny.json"
    data.write_text(json.dumps([sample(0)]), encoding="utf-8")
    other = tmp_path / "other.py"  # a second leg: a program that always answers with one file of its own
    other.write_text('import json\nprint(json.dumps({"title": "elsewhere", "path": "sessions/elsewhere.md"}))\n',
                     encoding="utf-8")
    config = tmp_path / "config.toml"
    config.write_text(f'[[search.sources]]\nname = "sessions"\nkind = "sessions"\n\n[[search.sources]]\n'
                      f'name = "other"\nkind = "command"\ncommand = [{json.dumps(sys.executable)}, '
                      f'{json.dumps(str(other))}]\n', encoding="utf-8")
    got = run(str(data), "--convs", "0", "--config", str(config), "--no-crosslang")
    assert got.returncode == 0, got.stderr
    rows = {line[:24].strip(): line.split()[-7:] for line in got.stdout.splitlines() if "leg alone" in line}  # n onwards
    assert set(rows) == {"keyword leg alone", "command leg alone"}
    assert rows["command leg alone"][:5] == ["4", "0.00", "0.00", "0.00", "0.00"]  # never the session; never empty
    assert float(rows["keyword leg alone"][1]) >= 0.25


def test_inside_a_generated_corpus_the_conversations_are_found_among_its_sessions(tmp_path: Path) -> None:
    data = tmp_path / "tiny.json"
    data.write_text(json.dumps([sample(0), sample(3)]), encoding="utf-8")
    got = run(str(data), "--convs", "0-1", "--corpus", "40", "--out", str(tmp_path / "cache"), "--no-crosslang",
              "--config", keyword_only(tmp_path))
    assert got.returncode == 0, got.stderr
    lines = got.stdout.splitlines()
    at = lines.index(next(line for line in lines if line.startswith("Inside the 40-session generated corpus")))
    assert "(8 questions, 6 LoCoMo sessions added" in lines[at]
    bm25 = next(line.split() for line in lines[at:] if line.startswith("BM25 whole files"))
    assert bm25[3:7] == ["all", "8", "1.00", "1.00"]  # each question's own words still find its session
    assert len(list((tmp_path / "cache").glob("ws-40-*/sessions/*/*.md"))) >= 40  # the corpus, kept for next time
