"""Markdown body structure: level-2 sections, found outside code fences."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Iterator

H2 = re.compile(r"^## +(.*?)[ \t]*$")
ANY_HEADING = re.compile(r"^(#{1,6})[ \t]*(.*?)[ \t]*#*[ \t]*$")
FENCE = re.compile(r"^[ ]{0,3}(`{3,}|~{3,})")
CONFLICT_SIDE = re.compile(r"^(<{7}|>{7}|\|{7})(?: |$)")  # git's conflict markers but the `=======` between


def code_mask(lines: list[str]) -> list[bool]:
    """For each line, whether it lies inside (or is) a fenced code block."""
    mask = [False] * len(lines)
    opener: str | None = None
    start = 0
    for i in _fence_candidates(lines):
        after, fence = fence_step(opener, lines[i])
        if fence and opener is None:
            start = i
        elif fence and after is None:
            mask[start : i + 1] = [True] * (i + 1 - start)
        opener = after
    if opener is not None:
        mask[start:] = [True] * (len(lines) - start)
    return mask


def fence_step(opener: str | None, line: str) -> tuple[str | None, bool]:
    """After `line`, the fence of the code block left open (None outside one), and whether `line` is a fence
    line (inside the block, or opening or closing it)."""
    m = FENCE.match(line)
    if not m:
        return opener, False
    if opener is None:
        return m.group(1), True
    return (None if _closes(line, m.group(1), opener) else opener), True


def unfenced(lines: Iterable[str]) -> Iterator[tuple[int, str]]:
    """(0-based index, line) of each line outside fenced code blocks, one line at a time: what `code_mask`
    leaves False, for lines that are not all at hand at once."""
    opener: str | None = None
    for i, line in enumerate(lines):
        fence = False
        if "```" in line or "~~~" in line:
            opener, fence = fence_step(opener, line)
        if not fence and opener is None:
            yield i, line


def _fence_candidates(lines: list[str]) -> list[int]:
    """The indexes of the lines that may open or close a fence (a cheap superset of FENCE's matches)."""
    return [i for i, line in enumerate(lines) if "```" in line or "~~~" in line]


def _closes(line: str, fence: str, opener: str) -> bool:
    return fence[0] == opener[0] and len(fence) >= len(opener) and not line.strip()[len(fence):].strip()


def unclosed_fence(text: str) -> str | None:
    """The fence that `text` leaves open at its end, if any."""
    opener: str | None = None
    for line in text.split("\n"):
        m = FENCE.match(line)
        if not m:
            continue
        if opener is None:
            opener = m.group(1)
        elif _closes(line, m.group(1), opener):
            opener = None
    return opener


@dataclass(frozen=True)
class Heading:
    index: int  # 0-based line index within the body
    title: str


def h2_headings(lines: list[str]) -> list[Heading]:
    """Level-2 headings outside code fences."""
    return h2_in("\n".join(lines))


# The start of a line that is a level-2 heading (its title in the group) or may open or close a fence (FENCE's
# matches): what decides the headings. Led by the line break before it, so that the scan looks for that
# character alone rather than trying every position of the text.
_H2_OR_FENCE = re.compile(r"\n(?:## +(.*?)[ \t]*|[ ]{0,3}(?:`{3,}|~{3,}).*)$", re.M)


def h2_in(text: str) -> list[Heading]:
    """`h2_headings` of `text.split("\\n")`, found by one scan of the text rather than line by line."""
    out: list[Heading] = []
    opener: str | None = None
    led = "\n" + text  # line k of `text` follows the (k+1)-th line break of `led`
    line = pos = 0
    for m in _H2_OR_FENCE.finditer(led):
        line += led.count("\n", pos, m.start())
        pos = m.start()
        if m.group(1) is None:
            opener = fence_step(opener, m.group(0)[1:])[0]
        elif opener is None:
            out.append(Heading(line, m.group(1)))
    return out


def sections(body: str) -> tuple[str, list[tuple[str, str]]]:
    """(preamble, [(heading, content)]) with content stripped of surrounding blank lines."""
    heads = h2_in(body)
    if not heads:
        return body.strip("\n"), []
    lines = body.split("\n")
    preamble = "\n".join(lines[: heads[0].index]).strip("\n")
    out: list[tuple[str, str]] = []
    for n, h in enumerate(heads):
        end = heads[n + 1].index if n + 1 < len(heads) else len(lines)
        out.append((h.title, "\n".join(lines[h.index + 1 : end]).strip("\n")))
    return preamble, out


def render(preamble: str, secs: list[tuple[str, str]]) -> str:
    """Inverse of `sections` for normalised content: blank line after each heading and between sections."""
    parts: list[str] = []
    if preamble:
        parts.append(f"\n{preamble}\n")
    for title, content in secs:
        parts.append(f"\n## {title}\n" + (f"\n{content}\n" if content else ""))
    return "".join(parts)
