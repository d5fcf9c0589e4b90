"""`kbsync session section`: one section replaced or appended under the file's lock, nothing else touched."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.cli import Cli, main_call
from helpers.core import new_workspace, one_line_error, save, snapshot
from kbsync.config import Config
from kbsync.core.protocol import synonyms_table
from kbsync.core.session import parse_session
from kbsync.store import fsio
from kbsync.store.sections import guard_headings, set_section

SID = "20250611-1432-a9993e3"  # ts below + sha1("abc")
PAYLOAD = {"session_id": "abc", "title": "合同", "ts": "2025-06-11T14:32:07+08:00", "tags": ["合同"],
           "summary": "付款风险", "sections": {"用户输入": "问题", "我的判断": "判断一\n\n判断二", "结论": "旧结论"}}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    new_workspace(root)
    r = save(root, PAYLOAD)
    assert r.returncode == 0, r.stderr
    return root


def session_file(ws: Path) -> Path:
    (path,) = (ws / "sessions" / "2025-06-11").glob("1432-a9993e3*.md")
    return path


def section(ws: Path, name: str, text: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return main_call("session", "section", SID, name, *extra, ws=ws, stdin=text)


def test_replace_changes_only_that_section(ws: Path, cli: Cli) -> None:
    before = session_file(ws).read_text(encoding="utf-8")
    r = section(ws, "结论", "新结论\n第二行\n")
    assert r.returncode == 0, r.stderr
    after = session_file(ws).read_text(encoding="utf-8")
    assert after == before.replace("旧结论", "新结论\n第二行")
    assert cli("validate", ws=ws).returncode == 0


def test_append_adds_after_the_content(ws: Path) -> None:
    assert section(ws, "我的判断", "判断三", "--append").returncode == 0
    assert section(ws, "待办", "第一项", "--append").returncode == 0
    doc = parse_session(session_file(ws).read_text(encoding="utf-8"))
    assert doc.section("我的判断") == "判断一\n\n判断二\n\n判断三"
    assert doc.section("待办") == "第一项"


def test_synonym_names_the_canonical_section(ws: Path, cli: Cli) -> None:
    r = cli("session", "section", SID, "TODO", "--json", ws=ws, stdin="跟进")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["section"] == "待办"
    assert parse_session(session_file(ws).read_text(encoding="utf-8")).section("待办") == "跟进"


MODEL_TEXT = """先说结论：三条风险。
## 结论
### 待办
# 大标题
#### 总结：第一阶段
## 结论：补充
```markdown
## 代码里的标题
```
结论：
最后一行"""


def test_stray_headings_in_model_text_stay_text(ws: Path, cli: Cli) -> None:
    r = section(ws, "我的判断", MODEL_TEXT)
    assert r.returncode == 0, r.stderr
    text = session_file(ws).read_text(encoding="utf-8")
    doc = parse_session(text)
    assert [t for t, _ in doc.sections] == ["用户输入", "我的判断", "工具调用", "结论", "待办"]
    assert doc.section("结论") == "旧结论"
    written = doc.section("我的判断")
    assert written is not None
    unescaped = "\n".join(ln[1:] if ln.startswith("\\#") else ln for ln in written.split("\n"))
    assert unescaped == MODEL_TEXT  # every character kept; only escapes added
    assert "\n## 代码里的标题\n" in written  # inside a code fence nothing needs escaping
    assert cli("validate", ws=ws).returncode == 0
    assert cli("repair", str(session_file(ws)), ws=ws).returncode == 0
    assert session_file(ws).read_text(encoding="utf-8") == text  # no repair mistakes them for headings


def test_unknown_id_or_section_writes_nothing(ws: Path, cli: Cli) -> None:
    before = snapshot(ws)
    one_line_error(cli("session", "section", "20250611-1432-0000000", "结论", ws=ws, stdin="x"), "20250611-1432-0000000")
    one_line_error(section(ws, "不存在", "x"), "不存在")
    one_line_error(section(ws, "## 结论", "x"), "plain heading name")
    assert snapshot(ws) == before


def test_invalid_session_asks_for_repair(ws: Path) -> None:
    path = session_file(ws)
    path.write_text(path.read_text(encoding="utf-8").replace("## 待办\n", ""), encoding="utf-8")
    before = snapshot(ws)
    r = section(ws, "结论", "x")
    one_line_error(r, "kbsync repair")
    assert snapshot(ws) == before


def test_same_text_leaves_the_file_alone(ws: Path, cli: Cli) -> None:
    before = snapshot(ws)
    r = cli("session", "section", SID, "结论", "--json", ws=ws, stdin="旧结论\n")
    assert r.returncode == 0 and json.loads(r.stdout)["changed"] is False
    assert snapshot(ws) == before


def test_waits_for_the_lock_then_gives_up(ws: Path, tmp_path: Path, cli: Cli) -> None:
    cfg = tmp_path / "cfg.toml"
    cfg.write_text("[daemon]\nlock_wait_s = 0.3\n", encoding="utf-8")
    path = session_file(ws)
    assert fsio.try_lock(path, 60)
    try:
        before = snapshot(ws)
        r = cli("--config", str(cfg), "session", "section", SID, "结论", ws=ws, stdin="x")
        assert r.returncode == 1 and "locked" in r.stderr
        assert {k: v for k, v in snapshot(ws).items() if not k.endswith(".lock")} == \
            {k: v for k, v in before.items() if not k.endswith(".lock")}
    finally:
        fsio.unlock(path)


def _spawn(ws: Path, args: list[str], text: str) -> subprocess.Popen[bytes]:
    """A writer started at once, its text in a file so that every writer runs at the same time."""
    src = ws.parent / f"in-{abs(hash((tuple(args), text)))}.txt"
    src.write_text(text, encoding="utf-8")
    argv = [sys.executable, "-m", "kbsync", "-w", str(ws), "session", "section", SID, *args, "--file", str(src)]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_concurrent_writers_lose_nothing(ws: Path) -> None:
    appends = [_spawn(ws, ["待办", "--append"], f"- 事项 {n}") for n in range(8)]
    replaces = [_spawn(ws, [name], f"{name} 的新内容") for name in ("用户输入", "工具调用")]
    for proc in appends + replaces:
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err.decode()
    doc = parse_session(session_file(ws).read_text(encoding="utf-8"))
    todo = (doc.section("待办") or "").split("\n\n")
    assert sorted(todo) == sorted(f"- 事项 {n}" for n in range(8))
    assert doc.section("用户输入") == "用户输入 的新内容" and doc.section("工具调用") == "工具调用 的新内容"
    assert doc.section("结论") == "旧结论"
    assert not list(ws.rglob("*.lock")) and not list(ws.rglob("*.tmp"))


def test_set_section_is_pure_and_keeps_other_bytes() -> None:
    text = "---\nid: x\nsummary: 'q'\n---\n\n## A\n\nold\n\n\n## B\n\nkeep  \n"
    assert set_section(text, "A", "new") == "---\nid: x\nsummary: 'q'\n---\n\n## A\n\nnew\n\n## B\n\nkeep  \n"
    assert set_section(text, "B", "more", append=True).endswith("## B\n\nkeep  \n\nmore\n")
    assert set_section(text, "A", "") == "---\nid: x\nsummary: 'q'\n---\n\n## A\n\n## B\n\nkeep  \n"


def test_guard_headings_escapes_only_section_names() -> None:
    out = guard_headings("### 付款\n### 下一步\n#### 小结\n## x", synonyms_table(Config()))
    assert out.split("\n") == ["### 付款", "\\### 下一步", "\\#### 小结", "\\## x"]
