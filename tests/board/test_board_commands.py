"""`kbsync board ...` as real subprocesses on real workspaces."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.board import HAND_EDITED, git, git_workspace, payload
from helpers.cli import Cli, main_call
from kbsync.core import board as B

KEY = "发布前确认锁文件@2025-06-11"


def _add(root: Path, **over: object) -> str:
    r = main_call("board", "add", "--now", "2025-06-12T00:00:00Z", ws=root, cwd=root, stdin=json.dumps(payload(**over), ensure_ascii=False))
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_add_is_idempotent_and_same_key_updates_in_place(tmp_path: Path, cli: Cli) -> None:
    assert _add(tmp_path).strip() == f"added {KEY}"
    text = (tmp_path / "LEARNING_BOARD.md").read_text(encoding="utf-8")
    mtime = (tmp_path / "LEARNING_BOARD.md").stat().st_mtime_ns
    assert _add(tmp_path).strip() == f"unchanged {KEY}"
    assert (tmp_path / "LEARNING_BOARD.md").read_text(encoding="utf-8") == text
    assert (tmp_path / "LEARNING_BOARD.md").stat().st_mtime_ns == mtime
    _add(tmp_path, title="第二条")
    assert _add(tmp_path, summary="改过的摘要").strip() == f"updated {KEY}"
    entries = B.parse_board((tmp_path / "LEARNING_BOARD.md").read_text(encoding="utf-8")).entries()
    assert [b.entry.key for b in entries] == [KEY, "第二条@2025-06-11"]
    assert entries[0].entry.summary == "改过的摘要"
    assert list((tmp_path / ".kbsync" / "backup").rglob("LEARNING_BOARD.md"))
    assert cli("validate", "LEARNING_BOARD.md", ws=tmp_path, cwd=tmp_path).returncode == 0


def test_add_reports_one_message_per_problem(tmp_path: Path, cli: Cli) -> None:
    bad = payload(type="理论", scenarios=[], summary="长" * 101, source_date="2025-02-30", confidence="sure")
    r = cli("board", "add", ws=tmp_path, cwd=tmp_path, stdin=json.dumps(bad, ensure_ascii=False))
    assert r.returncode == 2
    problems = [ln for ln in r.stderr.splitlines() if ln.startswith("  - ")]
    assert len(problems) == 5, r.stderr
    assert not (tmp_path / "LEARNING_BOARD.md").exists()


def test_partial_update_is_refused_with_the_missing_fields(tmp_path: Path, cli: Cli) -> None:
    _add(tmp_path)
    r = cli("board", "update", KEY, ws=tmp_path, cwd=tmp_path, stdin=json.dumps({"title": "x", "summary": "y"}))
    assert r.returncode == 2
    assert "partial update" in r.stderr and "type" in r.stderr and "scenarios" in r.stderr
    full = payload(summary="全量更新")
    r = cli("board", "update", KEY, ws=tmp_path, cwd=tmp_path, stdin=json.dumps(full, ensure_ascii=False))
    assert r.returncode == 0, r.stderr
    r = cli("board", "update", "没有@2025-01-01", ws=tmp_path, cwd=tmp_path, stdin=json.dumps(full, ensure_ascii=False))
    assert r.returncode == 2 and "no entry" in r.stderr


def test_list_show_retire(tmp_path: Path, cli: Cli) -> None:
    (tmp_path / "LEARNING_BOARD.md").write_text(HAND_EDITED, encoding="utf-8")
    r = cli("board", "list", "--type", "工具", "--json", ws=tmp_path, cwd=tmp_path)
    assert [e["key"] for e in json.loads(r.stdout)] == ["Tool pick@2025-01-01"]
    r = cli("board", "show", "重试要设上限@2025-05-02", ws=tmp_path, cwd=tmp_path)
    assert r.returncode == 0 and "- 类型: 方法" in r.stdout
    assert cli("board", "retire", "重试要设上限@2025-05-02", ws=tmp_path, cwd=tmp_path).returncode == 0
    text = (tmp_path / "LEARNING_BOARD.md").read_text(encoding="utf-8")
    assert text.count("\n") == HAND_EDITED.count("\n") + 1
    assert B.parse_board(text).find("重试要设上限@2025-05-02").entry.status == "retired"  # type: ignore[union-attr]
    assert cli("board", "show", "nope@2025-01-01", ws=tmp_path, cwd=tmp_path).returncode == 2


def test_feedback_counts_survive_restarts_and_stay_out_of_git(tmp_path: Path, cli: Cli) -> None:
    root = git_workspace(tmp_path / "ws")
    _add(root)
    for flag in ("--helpful", "--helpful", "--harmful"):
        assert cli("board", "feedback", KEY, flag, ws=root, cwd=root).returncode == 0
    assert cli("board", "applied", KEY, "--now", "2025-07-01T08:00:00+08:00", ws=root, cwd=root).returncode == 0
    shown = json.loads(cli("board", "show", KEY, "--json", ws=root, cwd=root).stdout)["feedback"]
    assert (shown["helpful"], shown["harmful"], shown["applied"]) == (2, 1, 1)
    assert shown["last_applied"] == "2025-07-01T00:00:00Z"
    git(root, "add", "-A")
    git(root, "commit", "-qm", "board")
    tracked = git(root, "ls-files")
    assert ".kbsync" not in tracked and "feedback" not in tracked
    text = (root / "LEARNING_BOARD.md").read_text(encoding="utf-8")
    assert "helpful" not in text and "2025-07-01" not in text
    assert cli("board", "feedback", "nope@2025-01-01", "--helpful", ws=root, cwd=root).returncode == 2


def test_decay_with_an_injected_clock(tmp_path: Path, cli: Cli) -> None:
    _add(tmp_path)
    _add(tmp_path, title="常用")
    cli("board", "applied", "常用@2025-06-11", "--now", "2025-09-01T00:00:00Z", ws=tmp_path, cwd=tmp_path)
    r = cli("board", "decay", "--json", "--now", "2025-09-15T00:00:00Z", "--days", "60", ws=tmp_path, cwd=tmp_path)
    assert [c["key"] for c in json.loads(r.stdout)["candidates"]] == [KEY]
    r = cli("board", "decay", "--json", "--now", "2025-09-15T00:00:00Z", "--days", "120", ws=tmp_path, cwd=tmp_path)
    assert json.loads(r.stdout)["candidates"] == []
    for _ in range(2):
        cli("board", "feedback", "常用@2025-06-11", "--harmful", ws=tmp_path, cwd=tmp_path)
    r = cli("board", "decay", "--mark", "--json", "--now", "2025-09-15T00:00:00Z", "--days", "60", ws=tmp_path, cwd=tmp_path)
    out = json.loads(r.stdout)
    assert sorted(out["marked"]) == sorted([KEY, "常用@2025-06-11"])
    board = B.parse_board((tmp_path / "LEARNING_BOARD.md").read_text(encoding="utf-8"))
    assert {b.entry.status for b in board.entries()} == {"decaying"}


def test_review_from_git_history(tmp_path: Path, cli: Cli) -> None:
    root = git_workspace(tmp_path / "ws")
    _add(root, title="旧条目")
    _add(root, title="将退役")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "old", when="2025-06-01T10:00:00+00:00")
    _add(root, title="新条目")
    _add(root, title="旧条目", summary="改了")
    cli("board", "retire", "将退役@2025-06-11", ws=root, cwd=root)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "new", when="2025-06-12T10:00:00+00:00")
    r = cli("board", "review", "--since", "2025-06-10", "--now", "2025-06-15T00:00:00Z", "--json", ws=root, cwd=root)
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["added"] == ["新条目@2025-06-11"]
    assert rep["changed"] == ["旧条目@2025-06-11"]
    assert rep["retired"] == ["将退役@2025-06-11"]
    assert rep["counts"]["type"] == {"踩坑": 3}
    assert len(rep["commits"]) == 1
    text = cli("board", "review", "--since", "2025-06-10", ws=root, cwd=root).stdout
    assert "## added (1)" in text



def test_review_reports_drift_of_counters_and_search_index(tmp_path: Path, cli: Cli) -> None:
    root = git_workspace(tmp_path / "ws")
    _add(root)
    _add(root, title="后加")
    assert cli("index", "rebuild", "--search", ws=root, cwd=root).returncode == 0
    cli("board", "feedback", "后加@2025-06-11", "--helpful", ws=root, cwd=root)
    text = (root / "LEARNING_BOARD.md").read_text(encoding="utf-8")  # edited by hand: kbsync's own writes
    assert text.count("锁文件未释放导致发布失败") == 2  # re-index what they write, a hand edit is seen later
    text = text.replace("锁文件未释放导致发布失败", "改过", 1).replace("### 后加", "### 改名了")
    (root / "LEARNING_BOARD.md").write_text(text, encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "x")
    rep = json.loads(cli("board", "review", "--json", ws=root, cwd=root).stdout)
    drift = "\n".join(rep["drift"])
    assert f"{KEY}: the search index holds an older version" in drift
    assert "改名了@2025-06-11 is not in the search index" in drift
    assert "后加@2025-06-11 is in the search index but not on the board" in drift
    assert "feedback counters for 后加@2025-06-11, which is not on the board" in drift


def test_validate_repair_and_hook_treat_the_board_like_a_session(tmp_path: Path, cli: Cli) -> None:
    root = git_workspace(tmp_path / "ws")
    drifted = HAND_EDITED.replace("## 长期趋势\n", "### 长期趋势：本周\n").replace("置信度：medium", "置信度：中")
    (root / "LEARNING_BOARD.md").write_text(drifted, encoding="utf-8")
    git(root, "add", "LEARNING_BOARD.md")
    r = cli("hook", "pre-commit", ws=root, cwd=root)
    assert r.returncode == 1 and "LEARNING_BOARD.md:7" in r.stdout + r.stderr
    assert cli("repair", "LEARNING_BOARD.md", ws=root, cwd=root).returncode == 0
    repaired = (root / "LEARNING_BOARD.md").read_text(encoding="utf-8")
    assert "## 长期趋势\n本周\n" in repaired and "置信度：medium" in repaired
    assert B.render_board(B.parse_board(repaired)) == repaired
    mtime = (root / "LEARNING_BOARD.md").stat().st_mtime_ns
    assert cli("repair", "LEARNING_BOARD.md", ws=root, cwd=root).returncode == 0
    assert (root / "LEARNING_BOARD.md").stat().st_mtime_ns == mtime
    assert cli("validate", "LEARNING_BOARD.md", "--json", ws=root, cwd=root).returncode == 0
    git(root, "add", "LEARNING_BOARD.md")
    assert cli("hook", "pre-commit", ws=root, cwd=root).returncode == 0
    (root / "LEARNING_BOARD.md").write_text(repaired.replace("类型: 方法", "类型: 理论"), encoding="utf-8")
    assert cli("repair", "LEARNING_BOARD.md", ws=root, cwd=root).returncode == 1
    assert "类型: 理论" in (root / "LEARNING_BOARD.md").read_text(encoding="utf-8")
