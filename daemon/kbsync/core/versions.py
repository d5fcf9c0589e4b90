"""Versions of what a door lets a caller edit: a board entry, a session's section, a fact.

A caller reads a thing with its version and sends that version back with its update; the write is made only
when the thing is still at that version, so an edit based on an older read never overwrites a newer change
(a stale web form, two tabs, an orchestrator and a person). A version is a digest of the thing's content as
the file holds it, so two machines with the same files give the same versions. Pure.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Mapping

PREFIX = "v1-"


def version_of(text: str) -> str:
    """The version of a text: `v1-` and 16 hex digits of its SHA-256."""
    return PREFIX + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def version_of_fields(fields: Mapping[str, Any]) -> str:
    """The version of a record of fields (a board entry): the same fields, the same version, whatever their
    order."""
    return version_of(json.dumps(fields, ensure_ascii=False, sort_keys=True, separators=(",", ":")))


def changed_fields(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """The names of the fields whose values differ between two records, in `new`'s order (texts compared as
    a form sends them back: line endings and the blank edges aside)."""
    return [k for k in new if _same(old.get(k)) != _same(new.get(k))] + [k for k in old if k not in new]


def _same(value: Any) -> Any:
    if isinstance(value, str):
        return value.replace("\r\n", "\n").strip()
    if isinstance(value, (list, tuple)):
        return [_same(v) for v in value]
    return value
