"""Hostile text at the door: control characters, lone surrogates, stray carriage returns, deep nesting. Pure.

Every text that arrives from outside (JSON on stdin, an argument, a section's text) passes here before
anything is written. Refused, with one line naming the field: NUL and the other C0 control characters
except tab, line feed and carriage return; lone surrogates (what invalid UTF-8 or a `\\ud800` JSON escape
becomes); JSON nested deeper than MAX_DEPTH. Normalised, as docs/protocol.md records: in multi-line text
CRLF and a lone CR become LF, so a CR cannot hide a line (a heading) from kbsync that a renderer would show.
"""

from __future__ import annotations

import json
import re
from typing import Any

from kbsync.errors import InputError

MAX_DEPTH = 64
_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff]")
_CR = re.compile("\r\n?")


def problem(text: str) -> str | None:
    """What is wrong with `text` as input (its first refused character), or None."""
    m = _BAD.search(text)
    if m is None:
        return None
    code = ord(m.group())
    what = "a lone surrogate (not valid Unicode)" if code >= 0xD800 else "a NUL character" if code == 0 \
        else "a control character"
    return f"holds {what} U+{code:04X} at character {m.start() + 1}; remove it"


def clean(text: str, field: str, *, where: str | None = None, multiline: bool = False) -> str:
    """`text` if it is acceptable input (with CR line breaks made LF when `multiline`); InputError naming
    `field` (and `where`, the input it came from) otherwise."""
    why = problem(text)
    if why:
        raise InputError(f"{field} {why}", path=where)
    return _CR.sub("\n", text) if multiline and "\r" in text else text


def check_tree(value: Any, where: str, field: str = "", depth: int = 0) -> None:
    """Every key and string of a parsed JSON value is acceptable, and it nests at most MAX_DEPTH deep."""
    if depth > MAX_DEPTH:
        raise InputError(f"{field or 'the input'} nests deeper than {MAX_DEPTH} levels; flatten it", path=where)
    if isinstance(value, str):
        clean(value, field or "the input", where=where)
    elif isinstance(value, dict):
        for key, item in value.items():
            name = f"{field}.{key}" if field else str(key)
            clean(str(key), f"the key of {field or 'the input'}", where=where)
            check_tree(item, where, name, depth + 1)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            check_tree(item, where, f"{field}[{i}]", depth + 1)


def loads_object(raw: bytes, where: str) -> dict[str, Any]:
    """One JSON object from untrusted bytes, checked by check_tree; InputError (one line) otherwise."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise InputError(f"input is not UTF-8 (byte {exc.start + 1}); send UTF-8 JSON", path=where) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON ({exc.msg}); send one JSON object", path=where, line=exc.lineno) from None
    except RecursionError:
        raise InputError(f"the input nests deeper than {MAX_DEPTH} levels; flatten it", path=where) from None
    except ValueError as exc:  # e.g. an integer of more digits than Python converts
        raise InputError(f"not acceptable JSON ({exc}); send one JSON object", path=where) from None
    if not isinstance(data, dict):
        raise InputError("expected a JSON object", path=where)
    check_tree(data, where)
    return data
