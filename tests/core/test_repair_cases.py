"""One row per repair rule: dirty input -> expected output, and a second run changes nothing."""

from __future__ import annotations

import pytest

from kbsync.config import Config, parse_config
from kbsync.core.findings import has_errors
from kbsync.core.repair import repair_text
from kbsync.core.validate import validate_text

REL = "sessions/2025-06-11/1432-a1b2c3d-合同风险梳理.md"
FM = """---
id: 20250611-1432-a1b2c3d
ts: 2025-06-11T14:32:07+08:00
role: assistant
parent: null
tags: [合同, 风险]
status: closed
summary: "梳理了三条付款风险"
---
"""
BODY = """
## 用户输入

请梳理合同风险

## 我的判断

付款条款有三处风险

## 工具调用

## 结论

第二条需法务确认

## 待办

法务确认第二条
"""
VALID = FM + BODY


def with_fm(old: str, new: str) -> str:
    assert old in VALID
    return VALID.replace(old, new, 1)


CASES: list[tuple[str, str, str]] = [
    ("full-width colon after a key",
     with_fm("status: closed", "status： closed"), VALID),
    ("full-width colon, no space",
     with_fm("role: assistant", "role：assistant"), VALID),
    ("unquoted value with ': '",
     with_fm("status: closed\n", "status: closed\ntitle: 会议纪要: 第一阶段\n"),
     with_fm("status: closed\n", 'status: closed\ntitle: "会议纪要: 第一阶段"\n')),
    ("unquoted value with ' #' (YAML would cut a comment)",
     with_fm("status: closed\n", "status: closed\nnote: 讨论了三件事 # 预算、排期\n"),
     with_fm("status: closed\n", 'status: closed\nnote: "讨论了三件事 # 预算、排期"\n')),
    ("unquoted value with inner quotes escaped",
     with_fm("status: closed\n", 'status: closed\nnote: he said "go": now\n'),
     with_fm("status: closed\n", 'status: closed\nnote: "he said \\"go\\": now"\n')),
    ("quoted integer",
     with_fm("status: closed\n", "turns: '14'\nstatus: closed\n"),
     with_fm("status: closed\n", "turns: 14\nstatus: closed\n")),
    ("tags as a comma string",
     with_fm("tags: [合同, 风险]", "tags: 合同, 风险"), VALID),
    ("tags with full-width commas",
     with_fm("tags: [合同, 风险]", "tags: 合同，风险"), VALID),
    ("ts without offset",
     with_fm("ts: 2025-06-11T14:32:07+08:00", "ts: 2025-06-11T14:32:07"), VALID),
    ("ts with a space between date and time, no offset: the T form with the offset",
     with_fm("ts: 2025-06-11T14:32:07+08:00", "ts: 2025-06-11 14:32:07"), VALID),
    ("ts with a space, offset given: only the T",
     with_fm("ts: 2025-06-11T14:32:07+08:00", "ts: 2025-06-11 14:32:07+08:00"), VALID),
    ("ts quoted with a space: the quotes stay",
     with_fm("ts: 2025-06-11T14:32:07+08:00", 'ts: "2025-06-11 14:32:07.250"'),
     with_fm("ts: 2025-06-11T14:32:07+08:00", 'ts: "2025-06-11T14:32:07.250+08:00"')),
    ("heading at level 3",
     VALID.replace("## 结论", "### 结论"), VALID),
    ("heading at level 1",
     VALID.replace("## 我的判断", "# 我的判断"), VALID),
    ("heading without # (a line that is only 结论：)",
     VALID.replace("## 结论", "结论："), VALID),
    ("heading with a colon and a note",
     VALID.replace("## 结论\n\n第二条", "## 结论：第一阶段\n\n第二条"),
     VALID.replace("## 结论\n\n第二条", "## 结论\n\n第一阶段\n\n第二条")),
    ("heading with a note after a space",
     VALID.replace("## 结论\n", "## 结论 第一阶段\n"),
     VALID.replace("## 结论\n", "## 结论\n\n第一阶段\n")),
    ("synonym heading 下一步",
     VALID.replace("## 待办", "## 下一步"), VALID),
    ("synonym heading To-Do",
     VALID.replace("## 待办", "## To-Do"), VALID),
    ("synonym heading next steps (case-insensitive)",
     VALID.replace("## 待办", "## Next Steps"), VALID),
    ("synonym heading 总结",
     VALID.replace("## 结论", "## 总结"), VALID),
    ("synonym heading 后续事项 at level 3 with colon",
     VALID.replace("## 待办", "### 后续事项："), VALID),
    ("canonical heading with a trailing colon",
     VALID.replace("## 待办", "## 待办："), VALID),
    ("a required section missing in the middle",
     VALID.replace("## 工具调用\n\n", ""), VALID),
    ("a required section missing at the end",
     VALID.replace("\n## 待办\n\n法务确认第二条\n", ""),
     VALID.replace("\n## 待办\n\n法务确认第二条\n", "\n## 待办\n")),
    ("truncated file: last sections missing, no final newline",
     VALID.split("## 结论")[0] + "## 结论\n\n第二条需",
     VALID.split("## 结论")[0] + "## 结论\n\n第二条需\n\n## 待办\n"),
    ("no frontmatter: rebuilt from the file name, status conflict",
     BODY,
     """---
id: 20250611-1432-a1b2c3d
ts: 2025-06-11T14:32:00+08:00
role: assistant
parent: null
tags: []
status: conflict
summary: ""
---
""" + BODY),
    ("required fields missing: defaults added",
     VALID.replace("role: assistant\n", "").replace('summary: "梳理了三条付款风险"\n', ""),
     VALID.replace("role: assistant\n", "").replace('summary: "梳理了三条付款风险"\n', 'role: assistant\nsummary: ""\n')),
    ("CRLF line endings are kept",
     VALID.replace("## 结论", "### 结论").replace("\n", "\r\n"), VALID.replace("\n", "\r\n")),
    ("several defects at once",
     with_fm("status: closed", "status： closed").replace("## 待办", "## TODO").replace("## 结论", "结论："), VALID),
]


@pytest.mark.parametrize("name,dirty,expected", CASES, ids=[c[0] for c in CASES])
def test_repair_case(name: str, dirty: str, expected: str) -> None:
    cfg = Config()
    assert has_errors(validate_text(REL, dirty, cfg)), "the dirty input must be reported by validate"
    result = repair_text(REL, dirty, cfg)
    assert result.text == expected
    assert result.fixes
    assert not has_errors(validate_text(REL, result.text, cfg))
    again = repair_text(REL, result.text, cfg)
    assert again.text == result.text and again.fixes == []


def test_valid_file_is_returned_unchanged() -> None:
    result = repair_text(REL, VALID, Config())
    assert result.text == VALID and result.fixes == [] and not has_errors(result.findings)


def test_configured_synonym_and_offset() -> None:
    cfg = parse_config('[protocol]\ndefault_offset = "-05:00"\n[protocol.synonyms]\n"待办" = ["跟进事项"]\n')
    dirty = with_fm("ts: 2025-06-11T14:32:07+08:00", "ts: 2025-06-11T14:32:07").replace("## 待办", "## 跟进事项")
    out = repair_text(REL, dirty, cfg).text
    assert "ts: 2025-06-11T14:32:07-05:00" in out and "## 待办" in out and "跟进事项" not in out


@pytest.mark.parametrize("dirty", [
    with_fm("tags: [合同, 风险]", "tags: [合同, 风险"),            # unclosed flow list
    with_fm("status: closed\n", "status: closed\n  - stray: [\n"),  # broken block
    "---\nid: x\n" + BODY,                                           # fence never closed
    "---\n- a\n- b\n---\n" + BODY,                                   # not a mapping
])
def test_unparseable_frontmatter_is_left_untouched(dirty: str) -> None:
    result = repair_text(REL, dirty, Config())
    assert result.text == dirty and result.fixes == []
    assert has_errors(result.findings)


def test_heading_inside_code_fence_is_not_taken() -> None:
    dirty = VALID.replace("## 结论\n\n第二条需法务确认\n", "```\n### 结论\n```\n")
    out = repair_text(REL, dirty, Config()).text
    assert "```\n### 结论\n```" in out and "## 结论\n" in out.replace("### 结论", "")


def test_type_drift_that_cannot_be_coerced_is_kept_and_reported() -> None:
    dirty = with_fm("status: closed\n", "turns: 'many'\nstatus: closed\n")
    result = repair_text(REL, dirty, Config())
    assert "turns: 'many'" in result.text
    assert any("turns" in f.message and f.level == "error" for f in result.findings)


def test_an_inserted_section_gets_a_blank_line_before_it() -> None:
    dirty = VALID.replace("付款条款有三处风险\n\n## 工具调用\n\n", "付款条款有三处风险\n")
    out = repair_text(REL, dirty, Config()).text
    assert "付款条款有三处风险\n\n## 工具调用\n\n## 结论" in out


def test_a_session_file_outside_a_date_folder_is_reported() -> None:
    findings = validate_text("sessions/x.md", VALID, Config())
    assert any(f.level == "warning" and "sessions/YYYY-MM-DD/" in f.message for f in findings)
    assert has_errors(validate_text("sessions/x.md", BODY, Config()))
    assert repair_text("sessions/x.md", BODY, Config()).text == BODY  # no id to rebuild from: left alone


def test_validate_flags_the_space_form_of_ts_and_repair_says_what_it_did() -> None:
    spaced = with_fm("ts: 2025-06-11T14:32:07+08:00", "ts: 2025-06-11 14:32:07+08:00")
    errors = [f for f in validate_text(REL, spaced, Config()) if f.level == "error"]
    assert len(errors) == 1 and errors[0].line == 3 and "space between date and time" in errors[0].message
    result = repair_text(REL, spaced, Config())
    assert result.fixes == ["ts '2025-06-11 14:32:07+08:00' had a space between date and time; "
                            "wrote it as 2025-06-11T14:32:07+08:00"]
    assert result.text.replace("T14:32", " 14:32", 1) == spaced  # one character changed, nothing lost


@pytest.mark.parametrize("digits", [601, 4301, 20000])
@pytest.mark.parametrize("quote", ['"', "'", ""])
def test_an_integer_of_thousands_of_digits_is_kept_as_text_with_a_finding(digits: int, quote: str) -> None:
    """Longer than Python's int-str limit (4300 digits) or not: never converted, never a traceback; the
    other fixes of the file are still made."""
    huge = "9" * digits
    dirty = with_fm("status: closed\n", f"turns: {quote}{huge}{quote}\ntokens_in: '12'\nstatus: closed\n")
    dirty = dirty.replace("## 结论", "### 结论")
    result = repair_text(REL, dirty, Config())
    assert f"turns: {quote}{huge}{quote}\n" in result.text  # kept as written
    assert "tokens_in: 12\n" in result.text and "\n## 结论\n" in result.text  # the rest is repaired
    [finding] = [f for f in result.findings if f.level == "error"]
    assert finding.line == 7 and f"turns has {digits} digits" in finding.message
    assert "kbsync repair" not in finding.message and "write the real count" in finding.message
    assert repair_text(REL, result.text, Config()).text == result.text


def test_a_count_of_six_hundred_digits_is_still_a_count() -> None:
    text = with_fm("status: closed\n", f"turns: {'9' * 600}\nstatus: closed\n")
    assert not has_errors(validate_text(REL, text, Config()))
    assert repair_text(REL, with_fm("status: closed\n", f"turns: '{'9' * 600}'\nstatus: closed\n"),
                       Config()).text == text
