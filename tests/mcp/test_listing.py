"""The compact schemas of the tool list (kbsync.mcp.listing) say the same as pydantic's, in fewer tokens."""

from __future__ import annotations

from kbsync.mcp.listing import compact


def test_an_optional_argument_loses_its_null_wrapper_and_a_nullable_result_field_keeps_null_as_a_type() -> None:
    schema = {"title": "Out", "type": "object", "additionalProperties": True, "properties": {
        "base": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None, "title": "Base"},
        "pid": {"anyOf": [{"type": "integer"}, {"type": "null"}], "title": "Pid"},
        "jobs": {"anyOf": [{"type": "object", "additionalProperties": True}, {"type": "null"}]},
        "mode": {"anyOf": [{"enum": ["a", "b"], "type": "string"}, {"type": "null"}]}}}
    assert compact(schema) == {"type": "object", "properties": {
        "base": {"type": "string"},
        "pid": {"type": ["integer", "null"]},
        "jobs": {"type": ["object", "null"]},
        "mode": {"anyOf": [{"enum": ["a", "b"], "type": "string"}, {"type": "null"}]}}}


def test_a_reference_is_replaced_by_its_definition() -> None:
    schema = {"$defs": {"Flag": {"title": "Flag", "type": "object", "properties": {"why": {"type": "string"}}}},
              "type": "object", "properties": {"flags": {"type": "array", "items": {"$ref": "#/$defs/Flag"}}}}
    assert compact(schema) == {"type": "object", "properties": {"flags": {"type": "array", "items": {
        "type": "object", "properties": {"why": {"type": "string"}}}}}}
