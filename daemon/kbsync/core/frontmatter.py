"""YAML frontmatter: find it, read it without implicit typing, emit it deterministically.

Reading uses PyYAML's BaseLoader (C version where available), so every scalar
stays the string it was: timestamps, numbers, booleans, dates and nulls are never
converted. Typing is done by the caller from the protocol's field table.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Literal

FENCE = "---"
# A top-level `key: value` line; the key stops at the first ':' followed by a blank or end of line.
# Greedy where the lazy form gives the same groups (a key has no blank or ':'; the value ends at its last
# non-blank): no backtracking over a long value.
KEY_LINE = re.compile(r"^([^\s#:'\"\[\]{},&*!|>%@`-][^\s:]*)[ \t]*:(?:[ \t]+(.*[^ \t]|))?[ \t]*$")
_INDICATOR_START = tuple("\"'[{|>&*!%@`#")
_SPECIAL = set(":#'\"<>[]{},&*!|%@`")


@dataclass(frozen=True)
class Split:
    """Where the frontmatter block is. Lines are 1-based; `lines` excludes the fences."""

    state: Literal["ok", "none", "unterminated"]
    lines: list[str] = field(default_factory=list)
    body: str = ""
    body_line: int = 1  # line number of the first body line


def split(text: str) -> Split:
    """Find the `---` fenced block at the very top of `text` (LF line endings)."""
    if not (text.startswith(FENCE + "\n") or text.rstrip(" ") == FENCE):
        return Split("none", body=text, body_line=1)
    end = text.find("\n" + FENCE, 3)
    while end != -1:
        after = end + 1 + len(FENCE)
        tail = text[after : text.find("\n", after) if text.find("\n", after) != -1 else len(text)]
        if tail.strip(" \t") == "":
            break
        end = text.find("\n" + FENCE, end + 1)
    if end == -1:
        return Split("unterminated", lines=text.split("\n")[1:], body="", body_line=1)
    block = text[len(FENCE) + 1 : end + 1]
    lines = block.split("\n")[:-1] if block else []
    nl = text.find("\n", end + 1)
    body = "" if nl == -1 else text[nl + 1 :]
    return Split("ok", lines=lines, body=body, body_line=len(lines) + 3)


@dataclass(slots=True)
class Entry:
    """One top-level key with its raw value and continuation lines (0-based index into lines). Not frozen:
    every frontmatter makes a dozen of them, and a frozen dataclass is several times slower to make."""

    key: str
    index: int
    raw: str  # the value text on the key's line, as written ("" for block values)
    lines: list[str]


def entries(lines: list[str]) -> list[Entry]:
    """Top-level keys in order, each with the lines that belong to it."""
    found: list[Entry] = []
    for i, line in enumerate(lines):
        m = KEY_LINE.match(line)
        if m:
            found.append(Entry(m.group(1), i, m.group(2) or "", [line]))
        elif found and (line.startswith((" ", "\t", "-")) or not line.strip()):
            found[-1].lines.append(line)
    return found


@dataclass(frozen=True)
class Parsed:
    mapping: dict[str, Any] | None
    error: tuple[int, str] | None  # (0-based line within the block, message)


_PLAIN = re.compile(r"^[^\s\"'\[\]{}#&*!|>%@`,?:-](?:[^#:]|:(?=\S))*$")
_PLAIN_ITEM = re.compile(r"^[^\s\"'\[\]{}#&*!|>%@`,?:-][^\[\]{},#:]*$")
_DQ = re.compile(r'^"([^"\\]*)"$')


def _fast_value(raw: str) -> str | list[str] | None:
    """The BaseLoader value of a simple one-line scalar or flow list; None when YAML must decide."""
    if raw == "":
        return ""
    if _PLAIN.match(raw) and not raw.endswith(" "):
        return raw
    m = _DQ.match(raw)
    if m:
        return m.group(1)
    if raw.startswith("[") and raw.endswith("]"):
        inner = raw[1:-1].strip()
        if not inner:
            return []
        items = [i.strip() for i in inner.split(",")]
        if all(_PLAIN_ITEM.match(i) and not i.endswith(" ") for i in items):
            return items
    return None


def _fast_parse(lines: list[str], found: list[Entry] | None = None) -> dict[str, Any] | None:
    """A mapping for the common frontmatter of one-line `key: value` entries, without YAML; else None.
    `found` is `entries(lines)` when the caller has it already."""
    found = entries(lines) if found is None else found
    if len(found) != len(lines):  # a line that is no `key: value` of its own
        return None
    data: dict[str, Any] = {}
    for e in found:
        value = None if e.key in data else _fast_value(e.raw)
        if value is None:
            return None
        data[e.key] = value
    return data


def parse(lines: list[str], found: list[Entry] | None = None) -> Parsed:
    """Load the block with no implicit typing; a mapping of strings, lists and dicts. `found` is
    `entries(lines)` when the caller has it already, so that no line is matched twice."""
    fast = _fast_parse(lines, found)
    if fast is not None:
        return Parsed(fast, None)
    import yaml  # only here and in needs_quotes: most frontmatter never needs it, and it costs start-up time

    text = "\n".join(lines)
    try:
        data = yaml.load(text, Loader=_loader())
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line if mark is not None else 0
        return Parsed(None, (min(line, max(len(lines) - 1, 0)), str(exc.problem or exc.context or "YAML error")))
    except yaml.YAMLError as exc:
        return Parsed(None, (0, str(exc)))
    if data is None:
        return Parsed({}, None)
    if not isinstance(data, dict):
        return Parsed(None, (0, "frontmatter is not a mapping of `key: value` lines"))
    return Parsed(data, None)


# ---- emitting ----------------------------------------------------------------

def _fullwidth_punct(ch: str) -> bool:
    return unicodedata.category(ch).startswith("P") and unicodedata.east_asian_width(ch) in ("F", "W")


def needs_quotes(value: str) -> bool:
    """The protocol's quoting rule for a string scalar."""
    if value == "" or value != value.strip() or "\n" in value or "\r" in value or _UNPRINTABLE.search(value):
        return True
    if any(ch in _SPECIAL or _fullwidth_punct(ch) for ch in value):
        return True
    if value.startswith(("-", "?", "~")):
        return True
    import yaml

    tag: str = _resolver().resolve(yaml.ScalarNode, value, (True, False))
    return tag != "tag:yaml.org,2002:str"


@functools.cache
def _loader() -> Any:
    """PyYAML's BaseLoader, in its C version where libyaml is there."""
    import yaml

    return getattr(yaml, "CBaseLoader", yaml.BaseLoader)


@functools.cache
def _resolver() -> Any:
    import yaml.resolver

    return yaml.resolver.Resolver()


_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r"}
_UNPRINTABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufeff\u2028\u2029\ufffe\uffff]")


def _escape(ch: str) -> str:
    if ch in _ESCAPES:
        return _ESCAPES[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def quote(value: str) -> str:
    """A YAML double-quoted scalar that reads back as exactly `value`."""
    out = re.sub(r'[\\"\n\t\r]', lambda m: _escape(m.group(0)), value)
    return '"' + _UNPRINTABLE.sub(lambda m: _escape(m.group(0)), out) + '"'


def scalar(value: str) -> str:
    return quote(value) if needs_quotes(value) else value


def emit_value(value: Any) -> str:
    """Flow-style YAML for a typed field value: null, int, list of strings, string."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(scalar(str(v)) for v in value) + "]"
    return scalar(str(value))


def set_field(text: str, key: str, raw_value: str) -> str:
    """Set top-level `key` to `raw_value` (already YAML) in the text's frontmatter.

    Only that key's lines change; a missing key is added before the closing fence.
    Text without parseable fences is returned unchanged.
    """
    sp = split(text)
    if sp.state != "ok":
        return text
    lines = list(sp.lines)
    for e in entries(lines):
        if e.key == key:
            lines[e.index : e.index + len(e.lines)] = [f"{key}: {raw_value}"]
            break
    else:
        lines.append(f"{key}: {raw_value}")
    return join(lines, sp.body)


def join(lines: list[str], body: str) -> str:
    """A document from frontmatter lines and a body."""
    head = "\n".join([FENCE, *lines, FENCE])
    return f"{head}\n{body}"
