"""Versions are digests of content: the same content the same version, any change another one."""

from __future__ import annotations

from kbsync.core.versions import changed_fields, version_of, version_of_fields


def test_a_version_follows_the_content() -> None:
    assert version_of("答案") == version_of("答案") != version_of("答案 ")
    assert version_of("").startswith("v1-") and len(version_of("")) == 19


def test_a_record_version_ignores_the_order_of_its_fields() -> None:
    assert version_of_fields({"a": 1, "b": ["x"]}) == version_of_fields({"b": ["x"], "a": 1})
    assert version_of_fields({"a": 1}) != version_of_fields({"a": 2})


def test_changed_fields_compare_texts_as_a_form_sends_them() -> None:
    old = {"summary": "一", "core_content": "a\nb", "scenarios": ["x"], "confidence": "high"}
    new = {"summary": "二", "core_content": "a\r\nb\r\n", "scenarios": ["x"], "confidence": "low"}
    assert changed_fields(old, new) == ["summary", "confidence"]
    assert changed_fields({"gone": "x"}, {}) == ["gone"]
