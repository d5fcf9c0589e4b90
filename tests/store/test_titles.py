"""Titles and headings as a person wrote them: the `title` field, synonyms in `session save`, raw ids."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.cli import Cli
from kbsync.core import indexmd
from kbsync.core.session import parse_session

TITLE = "合同: 风险/梳理 (v2)"  # a colon, a slash, spaces: none of them survives in a file name


def save(cli: Cli, root: Path, payload: dict[str, object], *extra: str) -> tuple[int, str, str]:
    proc = cli("session", "save", *extra, ws=root, stdin=json.dumps(payload, ensure_ascii=False))
    return proc.returncode, proc.stdout.strip(), proc.stderr


def test_the_title_is_kept_as_written_and_shown(tmp_path: Path, cli: Cli) -> None:
    root = tmp_path / "ws"
    assert cli("init", ws=root).returncode == 0
    code, rel, _ = save(cli, root, {"session_id": "u-1", "title": TITLE, "tags": ["合同"], "summary": "三条付款风险",
                                    "sections": {"结论": "第二条需法务确认"}})
    assert code == 0 and rel.endswith("-合同-风险梳理-(v2).md")
    doc = parse_session((root / rel).read_text(encoding="utf-8"))
    assert doc.fields["title"] == TITLE
    assert 'title: "合同: 风险/梳理 (v2)"' in (root / rel).read_text(encoding="utf-8")  # last, quoted
    assert indexmd.parse_rows((root / "index.md").read_text(encoding="utf-8"))[-1].title == TITLE
    assert cli("index", "rebuild", ws=root).returncode == 0
    assert indexmd.parse_rows((root / "index.md").read_text(encoding="utf-8"))[-1].title == TITLE
    hits = json.loads(cli("search", "合同", "--json", ws=root).stdout)
    assert hits[0]["title"] == TITLE
    pack = json.loads(cli("context", "-q", "合同", "--json", ws=root).stdout)
    assert f"### {TITLE} ({rel})" in pack["text"] and f" {TITLE} [合同]: 三条付款风险" in pack["text"]
    assert "\n#### 结论\n" in pack["text"] and "\n## 结论" not in pack["text"]  # nested under the ###


def test_saving_again_says_what_it_kept(tmp_path: Path, cli: Cli) -> None:
    root = tmp_path / "ws"
    assert cli("init", ws=root).returncode == 0
    code, rel, err = save(cli, root, {"session_id": "u-2", "title": "初稿", "ts": "2025-06-11T14:32:07+08:00"})
    assert code == 0 and err == ""
    code, again, err = save(cli, root, {"session_id": "u-2", "title": "定稿", "ts": "2025-06-12T09:00:00+08:00"})
    assert code == 0 and again == rel
    assert f"kept the path {rel}" in err and "kept ts 2025-06-11T14:32:07+08:00" in err
    assert err.count("\n") == 2  # one line each
    doc = parse_session((root / rel).read_text(encoding="utf-8"))
    assert doc.fields["title"] == "定稿" and doc.fields["ts"] == "2025-06-11T14:32:07+08:00"


def test_save_maps_heading_synonyms_as_section_and_repair_do(tmp_path: Path, cli: Cli) -> None:
    root = tmp_path / "ws"
    assert cli("init", ws=root).returncode == 0
    code, rel, _ = save(cli, root, {"session_id": "u-3", "sections": {"TODO": "- 法务确认", "总结": "可以签"}})
    assert code == 0
    doc = parse_session((root / rel).read_text(encoding="utf-8"))
    assert doc.section("待办") == "- 法务确认" and doc.section("结论") == "可以签"
    assert [t for t, _ in doc.sections] == ["用户输入", "我的判断", "工具调用", "结论", "待办"]
    code, _, _ = save(cli, root, {"session_id": "u-3", "sections": {"下一步": "- 归档"}})
    assert parse_session((root / rel).read_text(encoding="utf-8")).section("待办") == "- 归档"
    code, _, err = save(cli, root, {"session_id": "u-3", "sections": {"TODO": "a", "待办": "b"}})
    assert code == 2 and "both mean '## 待办'" in err


def test_section_and_split_take_the_raw_session_id(tmp_path: Path, cli: Cli) -> None:
    root = tmp_path / "ws"
    assert cli("init", ws=root).returncode == 0
    raw = "5f0c8a6e-2b1d-4c33-9a57-0e4f2d1c9b88"
    code, rel, _ = save(cli, root, {"session_id": raw, "title": "t"})
    proc = cli("session", "section", raw, "TODO", ws=root, stdin="- 跟进")
    assert proc.returncode == 0 and proc.stdout.strip() == rel
    assert parse_session((root / rel).read_text(encoding="utf-8")).section("待办") == "- 跟进"
    proc = cli("session", "section", "never-saved", "结论", ws=root, stdin="x")
    assert proc.returncode == 2 and "no session 'never-saved'" in proc.stderr
