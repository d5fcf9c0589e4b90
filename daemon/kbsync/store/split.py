"""Splitting an oversize session into child sessions along marked topic boundaries.

A boundary is a level-3 heading inside a section (outside code fences), or a
line given with `--at`. Each boundary starts a topic that runs to the next
boundary in the same section, or to the section's end, and becomes one child
session (same `ts`, `parent` = the original's id, the topic in the same
section). Text of a section before its first boundary is the remainder: it
stays in the original, which also keeps its frontmatter and gets a `## 子会话`
section linking the children.

Nothing is lost. A section's content here is the exact text between its heading
and the next one, less the single blank line the renderer puts after a heading
and before the next heading. For every section of the original, its content
equals the newline-joined non-empty contents of that section in the remainder
and in the children, in order, byte for byte; the split checks this on the
rendered texts before it writes anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from kbsync.core import body, frontmatter, indexmd, protocol
from kbsync.core.session import SessionDoc, parse_session, render_session
from kbsync.errors import InputError, ProtocolError
from kbsync.store import fsio
from kbsync.store.sections import read_valid
from kbsync.store.sessions import append_index_row, find_by_id, find_given, write_session
from kbsync.store.workspace import Workspace

LINKS_SECTION = "子会话"
_H3 = "### "


@dataclass(frozen=True)
class RawSection:
    title: str
    start: int  # body line index of the first content line
    lines: list[str]


@dataclass(frozen=True)
class Child:
    sid: str
    relpath: str
    title: str
    text: str


# ---- pure: reading sections exactly, planning the parts -------------------------

def raw_sections(body_text: str) -> list[RawSection]:
    """Each level-2 section's content lines, exact but for one blank line after the heading and one at its end."""
    lines = body_text.split("\n")
    heads = body.h2_headings(lines)
    out: list[RawSection] = []
    for n, h in enumerate(heads):
        start, end = h.index + 1, heads[n + 1].index if n + 1 < len(heads) else len(lines)
        if start < end and lines[start] == "":
            start += 1
        if start < end and lines[end - 1] == "":
            end -= 1
        out.append(RawSection(h.title, start, lines[start:end]))
    return out


def section_contents(text: str) -> dict[str, str]:
    """Section title -> exact content (see `raw_sections`) of a session's text."""
    return {s.title: "\n".join(s.lines) for s in raw_sections(frontmatter.split(text).body)}


def h3_boundaries(secs: list[RawSection]) -> list[int]:
    """Body line indices of level-3 headings inside sections, outside code fences."""
    out: list[int] = []
    for s in secs:
        if s.title == LINKS_SECTION:
            continue
        mask = body.code_mask(s.lines)
        out += [s.start + i for i, line in enumerate(s.lines) if line.startswith(_H3) and not mask[i]]
    return out


def at_boundaries(secs: list[RawSection], file_lines: list[int], body_line: int, relpath: str) -> list[int]:
    """Body line indices of `--at` file lines; each must be a non-blank content line of a section."""
    out: list[int] = []
    for n in file_lines:
        i = n - body_line
        sec = next((s for s in secs if s.start <= i < s.start + len(s.lines) and s.title != LINKS_SECTION), None)
        if sec is None or not sec.lines[i - sec.start].strip():
            raise InputError(f"--at {n} is not a non-blank content line of a section", path=relpath, line=n)
        out.append(i)
    return sorted(set(out))


def cut(sec: RawSection, bounds: list[int]) -> dict[int, str]:
    """Part number -> this section's piece. Part 0 is the remainder; boundary n starts part n + 1,
    which runs to the next boundary in the same section or the section's end. No piece is blank-only."""
    inside = [(n + 1, b - sec.start) for n, b in enumerate(bounds) if sec.start <= b < sec.start + len(sec.lines)]
    edges = [(0, 0), *inside]
    pieces: dict[int, str] = {}
    carry: list[str] = []
    for j, (part, first) in enumerate(edges):
        last = edges[j + 1][1] if j + 1 < len(edges) else len(sec.lines)
        seg = carry + sec.lines[first:last]
        if not any(line.strip() for line in seg):
            carry = seg  # blank lines before a section's first boundary travel with that boundary's part
            continue
        pieces[part] = "\n".join(seg)
        carry = []
    if carry:
        pieces[0] = "\n".join(carry)  # a section of blank lines only stays where it is
    return pieces


def part_title(line: str) -> str:
    return line[len(_H3):].strip() if line.startswith(_H3) else line.strip()


def reassemble(parts: list[dict[str, str]]) -> dict[str, str]:
    """Section title -> contents of the parts (remainder first) joined in order, empty ones skipped."""
    out: dict[str, list[str]] = {}
    for part in parts:
        for title, content in part.items():
            if content:
                out.setdefault(title, []).append(content)
    return {title: "\n".join(pieces) for title, pieces in out.items()}


@dataclass(frozen=True)
class Plan:
    remainder: dict[str, str]  # every section of the original -> what stays
    parts: list[tuple[str, dict[str, str]]]  # one per child: (topic, section -> content)


def plan_split(text: str, relpath: str, at: list[int] | None = None) -> Plan:
    """Which text goes where; InputError when there is no boundary to split at."""
    sp = frontmatter.split(text)
    if body.unclosed_fence(sp.body):
        raise ProtocolError("a code fence (```) is opened and never closed; close it first", path=relpath)
    secs = raw_sections(sp.body)
    titles = [s.title for s in secs]
    dup = next((t for t in titles if titles.count(t) > 1), None)
    if dup is not None:
        raise ProtocolError(f"section '## {dup}' appears more than once; merge them by hand first", path=relpath)
    bounds = at_boundaries(secs, at, sp.body_line, relpath) if at else h3_boundaries(secs)
    if not bounds:
        raise InputError("no topic boundaries: mark each topic with a `### ` heading inside its section, "
                         "or give --at LINE", path=relpath)
    parts: list[dict[str, str]] = [{} for _ in range(len(bounds) + 1)]
    for sec in secs:
        for k, piece in cut(sec, bounds).items():
            parts[k][sec.title] = piece
    lines = sp.body.split("\n")
    topics = [part_title(lines[b]) or f"topic {n + 1}" for n, b in enumerate(bounds)]
    return Plan({t: parts[0].get(t, "") for t in titles}, list(zip(topics, parts[1:])))


def child_doc(original: SessionDoc, sid: str, topic: str, contents: dict[str, str]) -> SessionDoc:
    """A full protocol session holding one part; `parent` is the original's id."""
    keep = ("ts", "role", "tags", "model", "status")
    fields: dict[str, Any] = {k: original.fields[k] for k in keep if k in original.fields}
    fields.update(id=sid, parent=original.fields["id"], summary=topic[: protocol.MAX_SUMMARY], title=topic)
    secs = [(name, contents.get(name, "")) for name in protocol.SECTIONS]
    secs += [(t, c) for t, c in contents.items() if t not in protocol.SECTIONS]
    return SessionDoc(fields, [], "", secs)


def links(children: list[Child]) -> str:
    """One Markdown list item per child: its topic linked to its file (same folder), and its id."""
    def text(title: str) -> str:
        return title.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")

    return "\n".join(f"- [{text(c.title)}](<{c.relpath.rsplit('/', 1)[1]}>) `{c.sid}`" for c in children)


def remainder_text(text: str, plan: Plan, children: list[Child]) -> str:
    """The original: its frontmatter lines as they are, what stays of each section, links to the children."""
    sp = frontmatter.split(text)
    preamble, _ = body.sections(sp.body)
    secs = [(t, c) for t, c in plan.remainder.items() if t != LINKS_SECTION]
    listed = "\n".join(x for x in (plan.remainder.get(LINKS_SECTION, ""), links(children)) if x)
    return frontmatter.join(sp.lines, body.render(preamble, [*secs, (LINKS_SECTION, listed)]))


def check_lossless(original: str, remainder: str, children: list[str], relpath: str) -> None:
    """ProtocolError unless every section's content is exactly the join of its pieces."""
    before = section_contents(original)
    after = section_contents(remainder)
    old_links, new_links = before.pop(LINKS_SECTION, ""), after.pop(LINKS_SECTION, "")
    joined = reassemble([after, *(section_contents(c) for c in children)])
    if joined != {t: c for t, c in before.items() if c} or not new_links.startswith(old_links):
        raise ProtocolError("the split would not keep every character of the sections; nothing written", path=relpath)


# ---- I/O: ids, writes ---------------------------------------------------------------

def child_ids(original: SessionDoc, count: int, taken: Callable[[str], bool]) -> list[str]:
    """Ids for the children: the original's `ts`, a hash of `<parent id>/split-<n>`, skipping ids in use."""
    out: list[str] = []
    n = 1
    while len(out) < count:
        sid = protocol.session_id(original.fields["ts"], f"{original.fields['id']}/split-{n}")
        if sid not in out and not taken(sid):
            out.append(sid)
        n += 1
    return out


@dataclass(frozen=True)
class SplitResult:
    relpath: str
    children: list[Child]


def _taken(ws: Workspace, sid: str) -> bool:
    try:
        find_by_id(ws, sid)
    except InputError:
        return False
    return True


def plan_children(ws: Workspace, text: str, relpath: str, at: list[int] | None) -> tuple[Plan, list[Child]]:
    plan = plan_split(text, relpath, at)
    original = parse_session(text)
    ids = child_ids(original, len(plan.parts), lambda sid: _taken(ws, sid))
    children = []
    for sid, (topic, contents) in zip(ids, plan.parts):
        rel = protocol.session_relpath(sid, topic)
        children.append(Child(sid, rel, topic, render_session(child_doc(original, sid, topic, contents))))
    return plan, children


def split_session(ws: Workspace, sid: str, at: list[int] | None = None) -> SplitResult:
    """Split session `sid` into children under its lock; children are written before the original changes."""
    relpath = find_given(ws, sid)
    cfg = ws.config.daemon
    with fsio.locked(ws.path(relpath), ttl_s=cfg.lock_ttl_s, wait_s=cfg.lock_wait_s):
        text, fp = read_valid(ws, relpath)
        plan, children = plan_children(ws, text, relpath, at)
        rest = remainder_text(text, plan, children)
        check_lossless(text, rest, [c.text for c in children], relpath)
        for child in children:
            with fsio.locked(ws.path(child.relpath), ttl_s=cfg.lock_ttl_s, wait_s=cfg.lock_wait_s):
                write_session(ws, child.relpath, child.text, None)
        write_session(ws, relpath, rest, fp)
    for child in children:
        record = {**parse_session(child.text).fields, "path": child.relpath}
        append_index_row(ws, indexmd.row_for(record, child.title))
    return SplitResult(relpath, children)
