"""Workspace text handed to a model: what the injection detector flags is named and neutralised.

Memory is data, never instructions. A line that tries to steer an assistant (or an HTML comment that
addresses one, or text hidden by invisible characters) is reported as a flag naming the rule and the
span, and the span is replaced in the text given out by a marker that names the rule. The file itself
is never changed: a person reads it as it is.
"""

from __future__ import annotations

from dataclasses import dataclass

from kbsync.core.injection import HTML_COMMENT, detect

WITHHELD = "[kbsync: flagged as {rules}; text withheld, read the file to see it]"


@dataclass(frozen=True)
class Flag:
    rule: str  # override, role, answer, conceal, address, hidden-comment, hidden-chars
    line: int  # 1-based line of the span's start in the original text
    start: int  # character offsets of the span in the original text, end exclusive
    end: int

    def as_dict(self) -> dict[str, object]:
        return {"rule": self.rule, "line": self.line, "start": self.start, "end": self.end}


@dataclass(frozen=True)
class Guarded:
    text: str  # the text with every flagged span replaced by a marker
    flags: list[Flag]


def _line_starts(text: str) -> list[int]:
    starts = [0]
    starts += [i + 1 for i, ch in enumerate(text) if ch == "\n"]
    return starts


def _span(text: str, starts: list[int], line: int, rule: str) -> tuple[int, int]:
    """The characters a flag covers: the HTML comment that starts on `line`, or the whole line."""
    begin = starts[line - 1]
    end = text.find("\n", begin)
    end = len(text) if end < 0 else end
    if rule == "hidden-comment":
        found = next((m for m in HTML_COMMENT.finditer(text, begin) if m.start() <= end), None)
        if found:
            return found.start(), found.end()
    return begin, end


def flags_of(text: str) -> list[Flag]:
    """Every flag the injection detector raises on `text`, with its span."""
    starts = _line_starts(text)
    return [Flag(f.rule, f.line, *_span(text, starts, f.line, f.rule)) for f in detect(text)]


def _merged(flags: list[Flag]) -> list[tuple[int, int, list[str]]]:
    spans: list[tuple[int, int, list[str]]] = []
    for f in sorted(flags, key=lambda f: (f.start, f.end)):
        if spans and f.start <= spans[-1][1]:
            start, end, rules = spans[-1]
            spans[-1] = (start, max(end, f.end), rules + [f.rule] if f.rule not in rules else rules)
        else:
            spans.append((f.start, f.end, [f.rule]))
    return spans


def guard(text: str) -> Guarded:
    """`text` as it may be handed to a model, and the flags it raised."""
    flags = flags_of(text)
    if not flags:
        return Guarded(text, [])
    out, at = [], 0
    for start, end, rules in _merged(flags):
        out += [text[at:start], WITHHELD.format(rules=", ".join(rules))]
        at = end
    out.append(text[at:])
    return Guarded("".join(out), flags)
