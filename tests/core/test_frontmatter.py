"""Frontmatter reading: the fast path agrees with PyYAML's BaseLoader; emission follows the quoting rule."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kbsync.core import frontmatter

pieces = st.sampled_from(["a", "合同", " ", ":", ": ", "#", " #", ",", "[", "]", "{", "'", '"', "\\", "-", "?",
                          "2025-06-11T14:32:07+08:00", "null", "yes", "14", "@", "`", "%", "&", "*", "!", "|", ">",
                          "：", "，", "\t"])
values = st.lists(pieces, max_size=8).map("".join)


@settings(max_examples=2000, deadline=None)
@given(values)
def test_fast_path_agrees_with_yaml_base_loader(value: str) -> None:
    line = f"key: {value}"
    fast = frontmatter._fast_parse([line])
    if fast is None:
        return
    assert fast == yaml.load(line, Loader=yaml.CBaseLoader)


@pytest.mark.parametrize("value,quoted", [
    ("plain text", False), ("合同风险", False), ("2025-06-11", True), ("yes", True), ("off", True),
    ("null", True), ("14", True), ("3.5", True), ("a: b", True), ("a #b", True), ("合同：风险", True),
    ("x, y", True), ("", True), (" lead", True), ("trail ", True), ("it's", True), ("@home", True),
    ("100%", True), ("a|b", True), ("<b>", True), ("~", True), ("-x", True),
])
def test_quoting_rule(value: str, quoted: bool) -> None:
    emitted = frontmatter.scalar(value)
    assert emitted.startswith('"') == quoted
    assert yaml.load(f"k: {emitted}", Loader=yaml.CBaseLoader) == {"k": value}


@given(st.text(st.characters(blacklist_categories=("Cs",)), max_size=40))
def test_emitted_scalars_read_back_exactly(value: str) -> None:
    emitted = frontmatter.scalar(value)
    assert yaml.load(f"k: {emitted}", Loader=yaml.CBaseLoader) == {"k": value}


def test_split_states() -> None:
    assert frontmatter.split("no fence\n").state == "none"
    assert frontmatter.split("---\nid: x\n").state == "unterminated"
    sp = frontmatter.split("---\nid: x\n---\n\n## a\n")
    assert sp.state == "ok" and sp.lines == ["id: x"] and sp.body == "\n## a\n" and sp.body_line == 4


def test_set_field_changes_only_that_key() -> None:
    text = "---\nid: x\nstatus: open\nsummary: \"s\"\n---\nbody\n"
    assert frontmatter.set_field(text, "status", "conflict") == text.replace("status: open", "status: conflict")
    assert frontmatter.set_field(text, "new", "v") == text.replace('"s"\n', '"s"\nnew: v\n')
