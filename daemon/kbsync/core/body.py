"""Markdown body structure: level-2 sections, found outside code fences."""

from __future__ import annotations

import re
from dataclasses import dataclass

H2 = re.compile(r"^## +(.*?)[ \t]*$")
ANY_HEADING = re.compile(r"^(#{1,6})[ \t]*(.*?)[ \t]*#*[ \t]*$")
FENCE = re.compile(r"^[ ]{0,3}(`{3,}|~{3,})")
CONFLICT_SIDE = re.compile(r"^(<{7}|>{7}|\|{7})(?: |$)")  # git's conflict markers but the `=======` between


def code_mask(lines: list[str]) -> list[bool]:
    """For each line, whether it lies inside (or is) a fenced code block."""
    mask: list[bool] = []
    opener: str | None = None
    for line in lines:
        m = FENCE.match(line)
        if opener is None:
            if m:
                opener = m.group(1)
                mask.append(True)
                continue
            mask.append(False)
        else:
            mask.append(True)
            if m and m.group(1)[0] == opener[0] and len(m.group(1)) >= len(opener) and not line.strip()[len(m.group(1)):].strip():
                opener = None
    return mask


def unclosed_fence(text: str) -> str | None:
    """The fence that `text` leaves open at its end, if any."""
    opener: str | None = None
    for line in text.split("\n"):
        m = FENCE.match(line)
        if not m:
            continue
        if opener is None:
            opener = m.group(1)
        elif m.group(1)[0] == opener[0] and len(m.group(1)) >= len(opener) and not line.strip()[len(m.group(1)):].strip():
            opener = None
    return opener


@dataclass(frozen=True)
class Heading:
    index: int  # 0-based line index within the body
    title: str


def h2_headings(lines: list[str]) -> list[Heading]:
    """Level-2 headings outside code fences."""
    mask = code_mask(lines)
    out: list[Heading] = []
    for i, line in enumerate(lines):
        if line.startswith("## ") and not mask[i]:
            m = H2.match(line)
            if m:
                out.append(Heading(i, m.group(1)))
    return out


def sections(body: str) -> tuple[str, list[tuple[str, str]]]:
    """(preamble, [(heading, content)]) with content stripped of surrounding blank lines."""
    lines = body.split("\n")
    heads = h2_headings(lines)
    if not heads:
        return body.strip("\n"), []
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
