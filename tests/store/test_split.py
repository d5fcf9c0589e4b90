"""`kbsync session split`: children along topic boundaries, and not one byte of section content lost."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from helpers.cli import Cli
from helpers.core import new_workspace, one_line_error, save, snapshot
from kbsync.core import body, protocol
from kbsync.core.session import parse_session
from kbsync.errors import ProtocolError
from kbsync.store.split import Child, check_lossless, plan_split, remainder_text

SID = "20250611-1432-a9993e3"
JUDGEMENT = """开场白


### 付款条款
付款一
付款二

```text
### 代码里的三级标题不是边界
```


### 违约条款

违约一
"""
CONCLUSION = "### 结论甲\n甲\n\n\n### 结论乙\n乙  \n"
PAYLOAD = {"session_id": "abc", "title": "合同", "ts": "2025-06-11T14:32:07+08:00", "tags": ["合同"],
           "summary": "付款风险", "sections": {"用户输入": "问题", "我的判断": JUDGEMENT, "结论": CONCLUSION}}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    new_workspace(root)
    assert save(root, PAYLOAD).returncode == 0
    return root


def session_path(ws: Path) -> Path:
    (path,) = (ws / "sessions" / "2025-06-11").glob("1432-a9993e3*.md")
    return path


def contents(text: str) -> dict[str, str]:
    """Independent reading: lines between a `## ` heading and the next, less one blank line at each end."""
    body = text.split("\n---\n", 1)[1].split("\n")
    heads = [i for i, ln in enumerate(body) if re.match(r"^## \S", ln)]
    out: dict[str, str] = {}
    for n, i in enumerate(heads):
        lines = body[i + 1: heads[n + 1] if n + 1 < len(heads) else len(body)]
        lines = lines[1:] if lines[:1] == [""] else lines
        lines = lines[:-1] if lines[-1:] == [""] else lines
        out[body[i][3:]] = "\n".join(lines)
    return out


def test_split_round_trip_is_byte_exact(ws: Path, cli: Cli) -> None:
    original = session_path(ws).read_text(encoding="utf-8")
    r = cli("session", "split", SID, "--json", ws=ws)
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    kids = [ws / c["path"] for c in result["children"]]
    assert [c["title"] for c in result["children"]] == ["付款条款", "违约条款", "结论甲", "结论乙"]
    rest = session_path(ws).read_text(encoding="utf-8")
    pieces = [contents(rest)] + [contents(k.read_text(encoding="utf-8")) for k in kids]
    for name, content in contents(original).items():
        joined = "\n".join(p[name] for p in pieces if p.get(name))
        assert joined.encode("utf-8") == content.encode("utf-8"), name
    assert rest.split("\n---\n", 1)[0] == original.split("\n---\n", 1)[0]  # frontmatter kept as it was
    assert "### 代码里的三级标题不是边界" in kids[0].read_text(encoding="utf-8")


def test_children_are_full_sessions_linked_both_ways(ws: Path, cli: Cli) -> None:
    r = cli("session", "split", SID, "--json", ws=ws)
    children = json.loads(r.stdout)["children"]
    rest = parse_session(session_path(ws).read_text(encoding="utf-8"))
    links = rest.section("子会话") or ""
    for c in children:
        doc = parse_session((ws / c["path"]).read_text(encoding="utf-8"))
        assert doc.fields["parent"] == SID and doc.fields["id"] == c["id"]
        assert doc.fields["ts"] == "2025-06-11T14:32:07+08:00" and doc.fields["tags"] == ["合同"]
        assert protocol.id_from_relpath(c["path"]) == c["id"]
        assert f"(<{Path(c['path']).name}>)" in links and c["id"] in links
    assert cli("validate", ws=ws).returncode == 0
    index = (ws / "index.md").read_text(encoding="utf-8")
    assert all(c["path"] in index for c in children)


def test_split_at_lines(ws: Path, cli: Cli) -> None:
    lines = session_path(ws).read_text(encoding="utf-8").split("\n")
    at = lines.index("付款二") + 1
    r = cli("session", "split", SID, "--at", str(at), "--json", ws=ws)
    assert r.returncode == 0, r.stderr
    (child,) = json.loads(r.stdout)["children"]
    assert child["title"] == "付款二"
    text = (ws / child["path"]).read_text(encoding="utf-8")
    assert "违约一" in text and "结论甲" not in text  # the part runs to the end of its section


def test_nothing_to_split_or_bad_line_writes_nothing(ws: Path, cli: Cli) -> None:
    before = snapshot(ws)
    one_line_error(cli("session", "split", SID, "--at", "3", ws=ws), "--at 3")  # a frontmatter line
    assert snapshot(ws) == before
    assert save(ws, {**PAYLOAD, "sections": {"我的判断": "无主题", "结论": "无"}}).returncode == 0
    before = snapshot(ws)
    one_line_error(cli("session", "split", SID, ws=ws), "no topic boundaries")
    one_line_error(cli("session", "split", "20250611-1432-0000000", ws=ws), "20250611-1432-0000000")
    assert snapshot(ws) == before


def test_second_split_gets_new_ids_and_more_links(ws: Path, cli: Cli) -> None:
    first = json.loads(cli("session", "split", SID, "--json", ws=ws).stdout)["children"]
    r = cli("session", "section", SID, "待办", "--append", ws=ws, stdin="### 新话题\n内容")
    assert r.returncode == 0, r.stderr
    second = json.loads(cli("session", "split", SID, "--json", ws=ws).stdout)["children"]
    assert len(second) == 1 and second[0]["id"] not in {c["id"] for c in first}
    links = parse_session(session_path(ws).read_text(encoding="utf-8")).section("子会话") or ""
    assert len(links.split("\n")) == len(first) + 1


def test_oversize_warning_names_the_split_command(ws: Path, cli: Cli) -> None:
    big = "\n\n".join(f"### 话题 {n}\n" + "内容" * 2000 for n in range(6))  # about 72 KB
    assert cli("session", "section", SID, "工具调用", ws=ws, stdin=big).returncode == 0
    r = cli("validate", ws=ws)
    assert r.returncode == 0
    assert re.search(rf"{re.escape(session_path(ws).relative_to(ws).as_posix())}:\d+: warning: body is 7\d KB, "
                     rf"over 60 KB; run `kbsync session split {SID}`", r.stdout + r.stderr)
    assert cli("session", "split", SID, ws=ws).returncode == 0
    r = cli("validate", ws=ws)
    assert "over 60 KB" not in r.stdout + r.stderr


def test_unclosed_fence_is_refused_with_a_reason() -> None:
    text = HEAD + "".join(f"\n## {n}\n\n### t\n" for n in protocol.SECTIONS) + "```\n"
    with pytest.raises(ProtocolError, match="never closed"):
        plan_split(text, "s.md")


HEAD = "---\nid: 20250611-1432-a9993e3\nts: 2025-06-11T14:32:07+08:00\nrole: assistant\nparent: null\n" \
       "tags: []\nstatus: open\nsummary: s\n---\n"
line = st.sampled_from(["", "", "text", "  indented", "### topic", "### ", "```", "#### deep", "- item", "tail  "])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(line, max_size=12), min_size=5, max_size=5))
def test_any_body_splits_losslessly_or_not_at_all(bodies: list[list[str]]) -> None:
    assume(all(body.unclosed_fence("\n".join(b)) is None for b in bodies))  # else validation refuses the file
    names = protocol.SECTIONS
    text = HEAD + "".join(f"\n## {n}\n\n" + "\n".join(b) + "\n" for n, b in zip(names, bodies))
    try:
        plan = plan_split(text, "s.md")
    except Exception as exc:  # no boundary: a clear refusal is fine
        assert "no topic boundaries" in str(exc)
        return
    kids = [Child(f"20250611-1432-{n:07x}", f"sessions/2025-06-11/1432-{n:07x}.md", t,
                  HEAD + "".join(f"\n## {k}\n\n{v}\n" for k, v in c.items())) for n, (t, c) in enumerate(plan.parts)]
    rest = remainder_text(text, plan, kids)
    check_lossless(text, rest, [k.text for k in kids], "s.md")
    pieces = [contents(rest)] + [contents(k.text) for k in kids]
    for name, content in contents(text).items():
        assert "\n".join(p[name] for p in pieces if p.get(name)) == content
