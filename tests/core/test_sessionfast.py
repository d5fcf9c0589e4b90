"""The fast path of a session's check: it proves clean only what the full check finds clean, and it is taken."""

from __future__ import annotations

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kbsync.config import Config
from kbsync.core import sessionfast
from kbsync.core.validate import check_session, check_session_fully

CFG = Config()
LIMIT = CFG.protocol.max_session_kb * 1024
REL = "sessions/2025-06-11/1432-3f9a2c1-合同评审.md"
FIELDS = ["id: 20250611-1432-3f9a2c1", "ts: 2025-06-11T14:32:07+08:00", "role: assistant", "parent: null",
          "tags: [合同, review]", "model: internal-chat-v4", "turns: 8", "tokens_in: 4561", "tokens_out: 1081",
          "status: closed", 'summary: "合同：比对了两版条款"', "title: 合同评审"]
BODY = ["", "## 用户输入", "", "看合同。", "", "## 我的判断", "", "```", "## 结论", "```", "", "## 工具调用", "",
        "## 结论", "", "签。", "", "## 待办", "", "- 无"]


def text(fields: list[str], body: list[str]) -> str:
    return "\n".join(["---", *fields, "---", *body]) + "\n"


def agrees(relpath: str, doc: str) -> None:
    full = check_session_fully(relpath, doc, CFG)
    if sessionfast.is_clean(relpath, doc, LIMIT):
        assert full == []
    assert check_session(relpath, doc, CFG) == full


def test_the_protocols_own_form_is_proven_clean_without_the_full_check() -> None:
    doc = text(FIELDS, BODY)
    assert check_session_fully(REL, doc, CFG) == [] and sessionfast.is_clean(REL, doc, LIMIT)
    extras = text([*FIELDS, "source: cli", 'client: "vs code"'], BODY)
    assert sessionfast.is_clean(REL, extras, LIMIT)
    minimal = [f for f in FIELDS if f.split(":")[0] in ("id", "ts", "role", "tags", "status", "summary")]
    assert sessionfast.is_clean(REL, text(minimal, BODY), LIMIT)


@example(lines=["summary: " + "长" * 80], index=10)  # the summary's limit, as plain text, and one over it
@example(lines=["summary: " + "长" * 81], index=10)
@example(lines=['summary: "' + "长" * 81 + '"'], index=10)
@example(lines=["tags: [a, b, c, d, e, f]"], index=4)
@example(lines=["tags: [a , b]"], index=4)
@example(lines=["tags: []"], index=4)
@example(lines=["id: 20250611-1433-3f9a2c1"], index=0)  # the file name's id, and ts, disagree
@example(lines=["ts: 2025-06-11T14:33:07+08:00"], index=1)
@example(lines=["ts: 2025-06-11 14:32:07+08:00"], index=1)
@example(lines=["ts: 2025-06-11T14:32:07"], index=1)
@example(lines=["status： closed"], index=9)
@example(lines=["model: a: b"], index=5)
@example(lines=["model: a #b"], index=5)
@example(lines=["turns: '8'"], index=6)
@example(lines=["parent: 20250101-0000-abcdef0"], index=3)
@example(lines=["source: x", "source: y"], index=12)
@example(lines=["title: x", "title: y"], index=12)
@example(lines=["---"], index=5)
@given(lines=st.lists(st.text(st.characters(blacklist_categories=("Cs",)), max_size=24).map(
    lambda s: s.replace("\n", "")), max_size=3), index=st.integers(0, len(FIELDS)))
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_changed_frontmatter_lines_get_the_full_checks_findings(lines: list[str], index: int) -> None:
    for replace in (0, 1):
        fields = FIELDS[:index] + lines + FIELDS[index + replace :]
        agrees(REL, text(fields, BODY))


KEYS = st.sampled_from(["id", "ts", "role", "parent", "tags", "model", "turns", "status", "summary", "title", "x"])
VALUES = st.sampled_from(["null", "~", "", "[]", "[a]", "[a,b]", "[ a ]", '"q"', "'q'", '"a\\"b"', "8", "-8", "0x1",
                          "user", "open", "closed", "20250611-1432-3f9a2c1", "2025-06-11T14:32:07Z", "a:b", "a:",
                          "@x", "`x`", "%x", "合同：风险", "x ", "\tx", "yes", "{a: b}", "|", ">", "&a", "*a", "!t"])


SEPS = st.sampled_from([": ", ":", ":  ", " : ", "：", ":\t"])


@st.composite
def near_canonical(draw: st.DrawFn) -> list[str]:
    """The protocol's fields, each kept, dropped or given a drawn value, and a drawn field or two after them."""
    lines = []
    for line in FIELDS:
        fate = draw(st.integers(0, 5))
        key = line.split(":")[0]
        lines += [] if fate == 0 else [f"{key}{draw(SEPS)}{draw(VALUES)}"] if fate == 1 else [line]
    return lines + [f"{k}{sep}{v}" for k, v, sep in draw(st.lists(st.tuples(KEYS, VALUES, SEPS), max_size=2))]


@given(near_canonical())
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_frontmatter_of_drawn_fields_gets_the_full_checks_findings(fields: list[str]) -> None:
    agrees(REL, text(fields, BODY))


@example(body=["## 用户输入", "## 我的判断", "## 工具调用", "## 结论", "## 待办"])
@example(body=["## 用户输入", "## 我的判断", "## 工具调用", "## 待办", "## 结论"])
@example(body=["## 用户输入", "## 我的判断", "## 工具调用", "## 结论", "## 结论", "## 待办"])
@example(body=["## 用户输入", "## 我的判断", "```", "## 工具调用", "```", "## 结论", "## 待办"])
@example(body=["## 用户输入", "## 我的判断", "## 工具调用 ", "## 结论", "~~~~", "## 待办", "~~~"])
@given(body=st.lists(st.sampled_from(["## 用户输入", "## 我的判断", "## 工具调用", "## 结论", "## 待办", "##  结论",
                                      "## 附录", "### 结论", "```", "~~~", "````", "   ```py", "    ```", "text", "",
                                      "## 结论 ##", "##结论", "<<<<<<< a", "======="]), max_size=12))
@settings(max_examples=200, deadline=None)
def test_changed_bodies_get_the_full_checks_findings(body: list[str]) -> None:
    agrees(REL, text(FIELDS, body))


def test_a_body_over_the_limit_and_a_path_that_is_no_sessions_get_the_full_checks_findings() -> None:
    big = text(FIELDS, [*BODY, "字" * (LIMIT // 3)])
    assert check_session(REL, big, CFG) != [] and not sessionfast.is_clean(REL, big, LIMIT)
    near = text(FIELDS, [*BODY, "x" * (LIMIT - 200)])  # ASCII: under the limit in bytes, though long
    assert sessionfast.is_clean(REL, near, LIMIT)
    for rel in ("sessions/2025-06-11/1432-3f9a2c2-合同评审.md", "sessions/2025-06-12/1432-3f9a2c1-x.md",
                "sessions/x/1432-3f9a2c1.md", "sessions/2025-06-11/1432-3f9a2c1.conflict-20250611T143207Z.md"):
        agrees(rel, text(FIELDS, BODY))
