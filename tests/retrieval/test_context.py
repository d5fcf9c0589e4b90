"""`kbsync context`: never over budget, in the documented order, broken records skipped with a note."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.cli import Cli, main_call
from helpers.retrieval import BROKEN_NAME, BROKEN_TEXT, make_workspace, write
from kbsync.config import ContextConfig
from kbsync.retrieval.context import BoardItem, Materials, PassageItem, SessionItem, assemble, estimate_tokens


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("ctx")
    return root, make_workspace(root, noise=40)


def pack(root: Path, *args: str) -> dict[str, object]:
    """`kbsync context --json`, called in this process: each call is a command of its own, whose first read
    catches up with the files (kbsync.app.catchup.begin_command), as a process of its own would."""
    out = main_call("context", *args, "--json", ws=root)
    assert out.returncode == 0, out.stderr
    data: dict[str, object] = json.loads(out.stdout)
    return data


def test_estimate_counts_chinese_and_english() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("合同") == 3  # 1.5 per CJK character
    assert estimate_tokens("abcdef") == 2  # 1 per 3 other characters
    assert estimate_tokens("合同，abc") == 6  # full-width punctuation counts as wide
    assert estimate_tokens("合同 abc") >= estimate_tokens("合同") + 1


words = st.text(alphabet="合同风险付款 deployrollbak\n-:", max_size=400)
sessions = st.builds(SessionItem, relpath=st.text(min_size=1, max_size=30), title=words, date=st.just("2025-01-01"),
                     tags=st.tuples(words), summary=words, full_text=words)
passages = st.builds(PassageItem, relpath=st.text(min_size=1, max_size=30), title=words, date=st.just("2025-01-01"),
                     heading=words, text=words)
boards = st.builds(BoardItem, title=words, type=st.just("方法"), confidence=st.just("high"), summary=words)


@settings(max_examples=150, deadline=None)
@given(facts=st.lists(words, max_size=20), ss=st.lists(sessions, max_size=30), bs=st.lists(boards, max_size=8),
       ps=st.lists(passages, max_size=20), budget=st.integers(min_value=1, max_value=6000),
       shares=st.tuples(st.floats(0, 0.5), st.floats(0, 0.5), st.floats(0, 0.9), st.floats(0, 0.9)))
def test_pack_never_exceeds_its_budget(facts: list[str], ss: list[SessionItem], bs: list[BoardItem],
                                       ps: list[PassageItem], budget: int,
                                       shares: tuple[float, float, float, float]) -> None:
    cfg = ContextConfig(share_facts=shares[0], share_summaries=shares[1], share_input=shares[2],
                        share_passages=shares[3])
    p = assemble(Materials(tuple(facts), tuple(ss), tuple(bs), passages=tuple(ps)), cfg, budget)
    assert estimate_tokens(p.text()) <= p.limit <= budget
    assert len(p.sections.get("board", [])) <= 6 and sum(1 for ln in p.sections.get("sessions", []) if ln.startswith("### ")) <= 3


@pytest.mark.parametrize("budget", [1, 50, 400, 4000, 30000])
def test_cli_pack_within_budget_for_any_budget(planted: tuple[Path, dict[str, str]], budget: int) -> None:
    data = pack(planted[0], "--query", "合同", "--tags", "法务,风险", "--budget", str(budget))
    assert estimate_tokens(str(data["text"])) <= int(budget * 0.4)
    assert data["tokens"] == estimate_tokens(str(data["text"]))


def test_pack_order_and_content(planted: tuple[Path, dict[str, str]]) -> None:
    root, names = planted
    data = pack(root, "--query", "合同", "--tags", "法务", "--budget", "20000")
    sections = {p["name"]: p["text"] for p in data["parts"]}  # type: ignore[attr-defined]
    assert list(sections) == ["facts", "passages", "summaries", "sessions", "references", "board"] or \
        list(sections) == ["facts", "passages", "summaries", "sessions", "board"]
    assert "用户偏好中文回复" in sections["facts"] and "vendor-acme" in sections["facts"]
    assert "project-alpha" not in sections["facts"]  # no tag or query word names it
    assert names["P1"] in sections["summaries"] and names["P2"] in sections["summaries"]
    assert f"({names['P1']})" in sections["sessions"] and "客户合同第三条" in sections["sessions"]
    assert "合同审查清单" in sections["board"] and "部署回滚踩坑" not in sections["board"]
    text = str(data["text"])
    assert text.index("## Long-term facts") < text.index("## Relevant passages") < text.index("## Recent sessions") \
        < text.index("## Sessions in full")
    assert "客户合同第三条" in sections["passages"]  # the best passage quoted first, with its file and date
    assert f"({names['P1']}, 2025-03-02)" in sections["passages"]


def test_broken_frontmatter_is_skipped_with_a_note(planted: tuple[Path, dict[str, str]], cli: Cli) -> None:
    data = pack(planted[0], "--query", "合同", "--budget", "20000")
    assert BROKEN_NAME not in str(data["text"])
    assert any(BROKEN_NAME in n and "skipped" in n for n in data["notes"])  # type: ignore[attr-defined]
    plain = cli("context", "--query", "合同", ws=planted[0])
    assert plain.returncode == 0 and BROKEN_NAME in plain.stderr and BROKEN_NAME not in plain.stdout


def test_the_sessions_with_unreadable_frontmatter_the_query_did_not_find_are_counted(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    make_workspace(root, noise=5)

    def unseen() -> list[str]:
        notes: list[str] = pack(root, "--query", "回滚", "--budget", "20000")["notes"]  # type: ignore[assignment]
        return [n for n in notes if "not considered" in n]

    assert unseen() == ["1 other session(s) with unreadable frontmatter were not considered"]
    write(root, "sessions/2025-03-26/1200-c0c0c0c-又一条.md", BROKEN_TEXT)
    assert unseen() == ["2 other session(s) with unreadable frontmatter were not considered"]
    (root / BROKEN_NAME).unlink()
    assert unseen() == ["1 other session(s) with unreadable frontmatter were not considered"]


def test_tags_alone_rank_by_overlap_then_recency(planted: tuple[Path, dict[str, str]]) -> None:
    root, names = planted
    parts = pack(root, "--tags", "合同,风险", "--budget", "20000")["parts"]
    summaries = next(p["text"] for p in parts if p["name"] == "summaries")  # type: ignore[attr-defined]
    # P1 has both tags; P3 has one and is newer than nothing else with one.
    assert summaries.index(names["P1"]) < summaries.index(names["P3"])
    assert names["P4"] not in summaries


def test_bad_budget_is_a_usage_error(planted: tuple[Path, dict[str, str]], cli: Cli) -> None:
    out = cli("context", "--budget", "0", ws=planted[0])
    assert out.returncode == 2 and "--budget" in out.stderr


def test_full_sessions_nest_their_headings_under_the_title() -> None:
    from kbsync.retrieval.context import nested

    text = "## 用户输入\n问\n\n### 第一段\n细节\n```\n## 代码里的不是标题\n```\n## 结论\n#hashtag 不是标题\n"
    out = nested(text, 3)
    assert out.split("\n") == ["#### 用户输入", "问", "", "##### 第一段", "细节", "```", "## 代码里的不是标题", "```",
                               "#### 结论", "#hashtag 不是标题", ""]
    assert nested("###### 深\n## 浅", 3) == "###### 深\n#### 浅"  # never deeper than six
    assert nested("没有标题", 3) == "没有标题"


def test_a_tag_filter_never_crowds_the_best_matching_board_entry_out(tmp_path: Path) -> None:
    from kbsync.app.retrieval import build_context
    from kbsync.app.workspace import init_workspace, open_workspace
    from kbsync.core.board import Entry, upsert

    root = tmp_path / "ws"
    init_workspace(root)
    board = ""
    for i in range(12):  # more entries sharing the tag than the pack holds
        board, _ = upsert(board, Entry(title=f"部署经验 {i:02d}", type="方法", topic="deploy", summary=f"部署第 {i} 条",
                                       core_content="发布前检查镜像。", source="复盘", source_date=f"2025-06-{i + 1:02d}",
                                       scenarios=("deploy",), confidence="medium"))
    board, _ = upsert(board, Entry(title="合同审查清单", type="方法", topic="法务", summary="审查合同时先看付款与违约两节",
                                   core_content="逐条核对付款节点。", source="法务部分享", source_date="2025-04-01",
                                   scenarios=("合同审查",), confidence="high"))
    (root / "LEARNING_BOARD.md").write_text(board, encoding="utf-8")
    ws = open_workspace(str(root), None)
    lines = build_context(ws, "合同 付款 节点", ["deploy"], 4000).sections["board"]
    assert lines[1].startswith("- 合同审查清单")  # the query's best match first, then the tag's entries
    assert sum(1 for ln in lines if ln.startswith("- 部署经验")) == 4  # five entries in all
