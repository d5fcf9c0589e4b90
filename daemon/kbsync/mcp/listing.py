"""The tool list as a model's context pays for it: each schema as pydantic makes it, less what says nothing.

Dropped: every `title` (pydantic's "Session Id" beside the property `session_id`); an optional value's
`anyOf [X, null]` with `default: null` becomes X (leaving it out means the same); a `$ref` into `$defs`
is replaced by the definition it names. The server still checks arguments against the full models."""

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
        if key == "title" and isinstance(value, str):
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
    """`{"anyOf": [X, {"type": "null"}], "default": null, ...}` as X with the other keys."""
    options = node.get("anyOf")
    if "default" not in node or node["default"] is not None or not isinstance(options, list) or len(options) != 2:
        return node
    kept = [o for o in options if o != {"type": "null"}]
    if len(kept) != 1:
        return node
    rest = {k: v for k, v in node.items() if k not in ("anyOf", "default")}
    return {**kept[0], **rest}
