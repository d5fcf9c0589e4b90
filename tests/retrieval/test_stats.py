"""`kbsync stats` equals counts computed independently from what was written; PostgreSQL upsert."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path
from typing import Any, Iterator

import pytest

from helpers.cli import Cli, main_call
from helpers.retrieval import session_text, sid_for, write
from helpers.retrieval_pg import PgServer, pg_server

TAGS = ["合同", "风险", "部署", "python", "k8s"]
MODELS = ["m-a", "m-b", None]
DEFECTS = {
    "no_frontmatter": lambda t: t.split("---\n", 2)[2],
    "yaml_error": lambda t: t.replace("role:", "title: 会议: 第一阶段\nrole:", 1),
    "quoted_int": lambda t: t.replace("turns: 3", "turns: '3'", 1),
    "missing_status": lambda t: "".join(ln for ln in t.splitlines(keepends=True) if not ln.startswith("status:")),
    "naive_ts": lambda t: t.replace("+08:00\nrole", "\nrole", 1),
}


def make_sessions(root: Path, n: int, seed: int) -> tuple[list[dict[str, Any]], int]:
    """Write n sessions (every 9th damaged); the fields of the clean ones, and the number damaged."""
    rng = random.Random(seed)
    clean: list[dict[str, Any]] = []
    damaged = 0
    for i in range(n):
        ts = f"2025-{1 + i % 7:02d}-{1 + i % 27:02d}T{(i * 7) % 24:02d}:{i % 60:02d}:00+08:00"
        rec = {"tags": tuple(rng.sample(TAGS, rng.randint(1, 3))), "status": rng.choice(["open", "closed"]),
               "model": rng.choice(MODELS), "ts": ts}
        sid, prefix = sid_for(ts, f"s{seed}-{i}")
        text = session_text(sid, ts, rec["tags"], rec["status"], "总结", "正文")
        if rec["model"] is None:
            text = text.replace("model: internal-chat-v3\n", "")
        else:
            text = text.replace("internal-chat-v3", rec["model"])
        if i % 9 == 4:
            text = list(DEFECTS.values())[damaged % len(DEFECTS)](text)
            damaged += 1
        else:
            clean.append(rec)
        write(root, f"{prefix}-s{i}.md", text)
    return clean, damaged


def utc_month(ts: str) -> str:
    import datetime as dt

    return dt.datetime.fromisoformat(ts).astimezone(dt.timezone.utc).strftime("%Y-%m")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]], int]:
    root = tmp_path_factory.mktemp("stats")
    clean, damaged = make_sessions(root, 120, seed=3)
    return root, clean, damaged


def figures(root: Path, by: str) -> dict[str, Any]:
    out = main_call("stats", "--by", by, "--json", ws=root)
    assert out.returncode == 0, out.stderr
    data: dict[str, Any] = json.loads(out.stdout)
    return data


@pytest.mark.parametrize("by", ["tag", "month", "status", "model"])
def test_stats_equal_independent_counts(corpus: tuple[Path, list[dict[str, Any]], int], by: str) -> None:
    root, clean, damaged = corpus
    expected: Counter[str] = Counter()
    for rec in clean:
        keys = {"tag": list(rec["tags"]), "month": [utc_month(rec["ts"])], "status": [rec["status"]],
                "model": [rec["model"] or "(none)"]}[by]
        expected.update(keys)
    data = figures(root, by)
    assert {g["key"]: g["sessions"] for g in data["groups"]} == dict(expected)
    assert data["sessions"] == len(clean) and data["dirty"] == damaged == len(data["dirty_files"])


def test_stats_follow_edits_and_never_write_files(corpus: tuple[Path, list[dict[str, Any]], int],
                                                  tmp_path: Path) -> None:
    root = tmp_path / "ws"
    clean, _ = make_sessions(root, 20, seed=5)
    before = {p: p.read_bytes() for p in root.rglob("*.md")}
    first = figures(root, "status")
    victim = next(p for p in sorted(root.rglob("*.md")) if b"status: open" in p.read_bytes())
    victim.write_text(victim.read_text(encoding="utf-8").replace("status: open", "status: closed"), encoding="utf-8")
    second = figures(root, "status")
    count = {g["key"]: g["sessions"] for g in second["groups"]}
    assert count["closed"] == {g["key"]: g["sessions"] for g in first["groups"]}["closed"] + 1
    assert {p for p in root.rglob("*.md")} == set(before)
    assert all(p.read_bytes() == data for p, data in before.items() if p != victim)


def test_text_output(corpus: tuple[Path, list[dict[str, Any]], int], cli: Cli) -> None:
    out = cli("stats", "--by", "month", ws=corpus[0])
    assert out.returncode == 0 and "dirty skipped" in out.stdout and "2025-01" in out.stdout


# ---- PostgreSQL ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def pg(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PgServer]:
    yield from pg_server()


def test_stats_upsert_into_postgresql(corpus: tuple[Path, list[dict[str, Any]], int], pg: PgServer,
                                      tmp_path: Path, cli: Cli) -> None:
    import psycopg

    root, clean, _ = corpus
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[stats]\ndsn = "{pg.dsn}"\n', encoding="utf-8")
    for _ in range(2):  # the second run updates the same rows
        out = cli("--config", str(cfg), "stats", "--json", ws=root)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["pushed"] == len(clean)
    with psycopg.connect(pg.dsn) as conn:
        rows = conn.execute("SELECT status, count(*) FROM kbsync_sessions GROUP BY status").fetchall()
        tags = conn.execute("SELECT t, count(*) FROM kbsync_sessions, unnest(tags) t GROUP BY t").fetchall()
    assert dict(rows) == dict(Counter(r["status"] for r in clean))
    assert dict(tags) == dict(Counter(t for r in clean for t in r["tags"]))


def test_unreachable_postgresql_is_exit_3(corpus: tuple[Path, list[dict[str, Any]], int], tmp_path: Path, cli: Cli) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text('[stats]\ndsn = "postgresql://nobody@127.0.0.1:9/none"\n', encoding="utf-8")
    out = cli("--config", str(cfg), "stats", ws=corpus[0])
    assert out.returncode == 3 and "PostgreSQL" in out.stderr and "Traceback" not in out.stderr
