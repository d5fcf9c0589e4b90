"""Property tests: generated sessions round-trip byte-stable; repair never loses content."""

from __future__ import annotations

import datetime as dt
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kbsync.config import Config
from kbsync.core import protocol
from kbsync.core.findings import has_errors
from kbsync.core.repair import repair_text
from kbsync.core.session import parse_session, render_session
from kbsync.core.sessioninput import parse_input
from kbsync.core.validate import validate_text
from kbsync.store.sessions import _new_doc

CFG = Config()
chars = st.characters(blacklist_categories=("Cs", "Cc"))
line_text = st.text(chars, max_size=30)
tricky = st.sampled_from(["yes", "no", "null", "true", "14", "2025-01-01", "a: b", "x #y", "'q'", '"dq"',
                          "@at", "%p", "`b`", "合同：风险", " pad ", "-dash", "[x]", "{y}", "~"])
scalar = st.one_of(line_text, tricky)
block = st.lists(st.one_of(line_text, st.sampled_from(["## 结论", "# top", "```", "~~~", "### sub", "结论：", "",
                                                        "## 待办：x", "---"])), max_size=8).map("\n".join)
offsets = st.sampled_from(["+08:00", "-05:00", "Z", "+00:00", "+05:30"])


@st.composite
def payloads(draw: st.DrawFn) -> dict[str, object]:
    t = draw(st.datetimes(min_value=dt.datetime(2000, 1, 1), max_value=dt.datetime(2099, 12, 31)))
    ts = t.replace(microsecond=0).isoformat() + draw(offsets)
    names = draw(st.lists(st.sampled_from([*protocol.SECTIONS, "附录", "Notes"]), unique=True, max_size=7))
    return {
        "session_id": draw(st.text(chars, min_size=1, max_size=40).filter(str.strip)),
        "title": draw(line_text),
        "ts": ts,
        "role": draw(st.sampled_from(protocol.ROLES)),
        "tags": draw(st.lists(scalar.filter(lambda s: s.strip()), max_size=6)),
        "model": draw(scalar),
        "turns": draw(st.integers(0, 10**6)),
        "status": draw(st.sampled_from(protocol.STATUSES)),
        "summary": draw(scalar),
        "sections": {n: draw(block) for n in names},
    }


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(payloads())
def test_saved_session_round_trips_byte_stable(payload: dict[str, object]) -> None:
    inp = parse_input(payload, "+08:00")
    doc = _new_doc(inp, "+08:00", {})
    text = render_session(doc)
    rel = protocol.session_relpath(doc.fields["id"], inp.title)
    assert not has_errors(validate_text(rel, text, CFG)), validate_text(rel, text, CFG)
    parsed = parse_session(text)
    assert render_session(parsed) == text
    assert parsed.fields == doc.fields  # no implicit typing: every string stays the string it was
    assert repair_text(rel, text, CFG).text == text  # a valid file is never changed


DAMAGE = [
    lambda t: t.split("---\n", 2)[2],
    lambda t: t.replace("status: ", "status： ", 1),
    lambda t: t.replace("role: ", "note: 会议纪要: 第一阶段\nrole: ", 1),
    lambda t: t.replace("role: ", "note: 三件事 # 预算\nrole: ", 1),
    lambda t: re.sub(r"^turns: (\d+)$", r"turns: '\1'", t, count=1, flags=re.M),
    lambda t: t.replace("## 结论", "### 结论", 1),
    lambda t: t.replace("## 待办", "## 下一步", 1),
    lambda t: t.replace("## 结论", "结论：", 1),
    lambda t: re.sub(r"^ts: (\S+?)(Z|[+-]\d\d:\d\d)$", r"ts: \1", t, count=1, flags=re.M),
    lambda t: t.replace("## 我的判断\n", "", 1),
]


SYNONYMS = sorted((n for names in protocol.BUILTIN_SYNONYMS.values() for n in names), key=len, reverse=True)


def content_chars(text: str) -> str:
    """What repair must keep: every character except structure (fences, '#', colons, quotes, whitespace,
    and a synonym heading's name, which the protocol replaces by the canonical one)."""
    lines = []
    for line in text.split("\n"):
        if line.startswith("#"):
            for name in SYNONYMS:
                line = line.replace(name, "")
        lines.append(line)
    return re.sub(r"[#:：\"'\s\\-]", "", "\n".join(lines))


def is_subsequence(small: str, big: str) -> bool:
    it = iter(big)
    return all(ch in it for ch in small)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(payloads(), st.lists(st.sampled_from(range(len(DAMAGE))), min_size=1, max_size=3, unique=True))
def test_repair_never_loses_content_and_is_idempotent(payload: dict[str, object], damage: list[int]) -> None:
    inp = parse_input(payload, "+08:00")
    doc = _new_doc(inp, "+08:00", {})
    rel = protocol.session_relpath(doc.fields["id"], inp.title)
    dirty = render_session(doc)
    for d in sorted(damage):
        dirty = DAMAGE[d](dirty)
    once = repair_text(rel, dirty, CFG)
    twice = repair_text(rel, once.text, CFG)
    assert twice.text == once.text
    body = dirty.split("\n---\n", 1)[-1] if dirty.startswith("---\n") else dirty
    assert is_subsequence(content_chars(body), content_chars(once.text))
