"""The fast path of a session file's check: one match that proves a file has no finding, or leaves it to the full check.

Most session files are written by kbsync or an assistant in the protocol's own form: the fields in the
protocol's order, one `key: value` line each, the five sections in order. `is_clean` proves such a file
clean with one regular expression over its frontmatter (each value in a form whose full check is certain
to pass: the id that the file name encodes, a `ts` that agrees with it, a known role and status, at most
five plain tags, a summary within its length) and one scan of its body for headings and code fences. It
says False for anything else, including every file with a finding: the full check
(`kbsync.core.validate`) then runs as before, so the findings are the full check's, always.
"""

from __future__ import annotations

import re

from kbsync.core import body, protocol

_ID = r"(?P<id>(?P<y>[0-9]{4})(?P<mo>[0-9]{2})(?P<d>[0-9]{2})-(?P<h>[0-9]{2})(?P<mi>[0-9]{2})-[0-9a-f]{7})"
# The id's date and time again (what the full check's "id does not match ts" compares), with a T and an offset.
_TS = r"(?P=y)-(?P=mo)-(?P=d)T(?P=h):(?P=mi)(?::[0-9]{2}(?:\.[0-9]+)?)?(?:Z|[+-][0-9]{2}:?[0-9]{2})"
_ANY_ID = r"[0-9]{8}-[0-9]{4}-[0-9a-f]{7}"
# A plain scalar that the full check reads as itself with no defect: no indicator first, no `#`, a `:` only
# before a non-blank, a non-blank last. Possessive: a value that fails is never tried again in pieces.
_PLAIN = r"[^\s\"'\[\]{}#&*!|>%@`,?:-](?:[^#:\n]|:(?=\S))*+(?<=\S)"
_DQ = r'"[^"\\\n]*+"'  # a double-quoted scalar without escapes
_VALUE = f"(?:{_PLAIN}|{_DQ})"
_ITEM = r"[^\s\"'\[\]{}#&*!|>%@`,?:-](?:[^\[\]{},#:\n]*+(?<=\S))?"
_S = protocol.MAX_SUMMARY


def _one_of(values: tuple[str, ...]) -> str:
    return "(?:" + "|".join(map(re.escape, values)) + ")"


_FIELDS: dict[str, str] = {
    "id": _ID, "ts": _TS, "role": _one_of(protocol.ROLES), "parent": f"(?:null|{_ANY_ID})",
    "tags": rf"\[(?:{_ITEM}(?:,[ ]?{_ITEM}){{0,{protocol.MAX_TAGS - 1}}})?\]", "model": _VALUE,
    **{key: f"[0-9]{{1,{protocol.MAX_INT_DIGITS}}}+" for key in protocol.INT_FIELDS}, "status": _one_of(protocol.STATUSES),
    "summary": rf"(?:(?=[^\n]{{1,{_S}}}\n){_PLAIN}|\"[^\"\\\n]{{0,{_S}}}\")", "title": _VALUE,
}
assert tuple(_FIELDS) == protocol.SESSION_FIELDS  # the protocol's order: the only one this path knows


def _line(key: str) -> str:
    line = f"{key}: {_FIELDS[key]}\n"
    return line if key in protocol.REQUIRED_FIELDS else f"(?:{line})?"


# Then fields of the user's own (the full check reads them, and passes them when plain and named once).
_EXTRA = rf"(?P<extra>(?:[a-z_][a-z0-9_]*: {_VALUE}\n)*+)"
_FRONTMATTER = re.compile("---\n" + "".join(map(_line, protocol.SESSION_FIELDS)) + _EXTRA + "---[ \t]*\n")
_EXTRA_KEY = re.compile(r"^[^:]+", re.M)
_KNOWN = frozenset(protocol.SESSION_FIELDS)
# A body line that is a level-2 heading (its title in the first group) or may open or close a code fence (the
# second): what `body.h2_in` looks at, each led by its line break.
_H2_OR_FENCE = re.compile(r"\n(?:## +(.*?)[ \t]*|([ ]{0,3}(?:`{3,}|~{3,}).*))$", re.M)
_SECTIONS = frozenset(protocol.SECTIONS)
_IN_ORDER = list(protocol.SECTIONS)


def is_clean(relpath: str, text: str, max_body_bytes: int) -> bool:
    """True only when the full check of the session file `relpath` with this text (LF line endings) finds
    nothing; False when it may find something (then run it)."""
    m = _FRONTMATTER.match(text)
    if m is None or m.group("id") != protocol.id_from_relpath(relpath) or not _extras_clean(m.group("extra")):
        return False
    return _sections_clean(text, m.end() - 1, max_body_bytes)


def _extras_clean(extra: str) -> bool:
    """Whether the fields after the protocol's are each named once, none of them a protocol field."""
    if not extra:
        return True
    keys = _EXTRA_KEY.findall(extra)
    return len(set(keys)) == len(keys) and _KNOWN.isdisjoint(keys)


def _sections_clean(text: str, start: int, max_body_bytes: int) -> bool:
    """Whether the body that follows the line break at `start` has each protocol section once, in order,
    outside code fences, and is within the size limit."""
    if (len(text) - start) * 4 > max_body_bytes and len(text[start + 1 :].encode("utf-8")) > max_body_bytes:
        return False
    titles: list[str] = []
    opener: str | None = None
    for title, fence in _H2_OR_FENCE.findall(text, start):
        if fence:
            opener = body.fence_step(opener, fence)[0]
        elif opener is None and title in _SECTIONS:
            titles.append(title)
    return titles == _IN_ORDER
