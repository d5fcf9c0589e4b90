"""The tool list as a model's context pays for it: each schema as pydantic makes it, less what says nothing.

Dropped: every `title` (pydantic's "Session Id" beside the property `session_id`); an optional value's
`anyOf [X, null]` with `default: null` becomes X (leaving it out means the same); a `$ref` into `$defs`
is replaced by the definition it names; `additionalProperties: true` (the default). A value that may be null
(an output's `anyOf [X, null]`) is X with `"type": [X's type, "null"]`. The server still checks arguments
against the full models, and results against their shapes (kbsync.mcp.results)."""

from __future__ import annotations

from typing import Any

_NESTED_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")


def compact(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` without titles, nullable wrappers of optional values and references."""
    defs = schema.get("$defs", {})
    out: dict[str, Any] = _node({k: v for k, v in schema.items() if k != "$defs"}, defs)
    return out


def _node(node: Any, defs: dict[str, Any]) -> Any:
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/") and ref[8:] in defs:
        node = {**defs[ref[8:]], **{k: v for k, v in node.items() if k != "$ref"}}
    out: dict[str, Any] = {}
    for key, value in node.items():
        if (key == "title" and isinstance(value, str)) or (key == "additionalProperties" and value is True):
            continue
        if key in ("properties", "$defs") and isinstance(value, dict):
            out[key] = {name: _node(sub, defs) for name, sub in value.items()}
        elif key in _NESTED_LISTS and isinstance(value, list):
            out[key] = [_node(sub, defs) for sub in value]
        elif key in ("items", "additionalProperties", "not"):
            out[key] = _node(value, defs)
        else:
            out[key] = value
    return _optional(out)


def _optional(node: dict[str, Any]) -> dict[str, Any]:
    """`{"anyOf": [X, {"type": "null"}], "default": null, ...}` as X with the other keys; without the default (a
    value that is there but may be null), X with `"type": [X's type, "null"]` when X is of one type and lists no
    values."""
    options = node.get("anyOf")
    if not isinstance(options, list) or len(options) != 2:
        return node
    kept = [o for o in options if o != {"type": "null"}]
    if len(kept) != 1 or not isinstance(kept[0], dict):
        return node
    rest = {k: v for k, v in node.items() if k not in ("anyOf", "default")}
    if "default" in node and node["default"] is None:
        return {**kept[0], **rest}
    one = kept[0]
    if "default" in node or not isinstance(one.get("type"), str) or "enum" in one or "const" in one:
        return node
    return {**one, "type": [one["type"], "null"], **rest}
