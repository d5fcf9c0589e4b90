"""Lossless, idempotent repairs: named fixers over a file's text. Pure: no I/O.

`repair_text` applies the protocol's repair table. Every fixer changes only the
structure around content (fences, colons, quotes, heading markers); no character
of content is dropped. A text whose frontmatter stays unparseable is returned
unchanged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

from kbsync.config import Config
from kbsync.core import board, body, facts, frontmatter, protocol
from kbsync.core.findings import Finding, has_errors
from kbsync.core.session import field_line
from kbsync.core.validate import plain_value_defect, validate_text

REBUILT = "rebuilt-frontmatter"
_FULLWIDTH_KEY = re.compile(r"^([^\s:：#'\"\[\]{}-][^\s:：]*?)[ \t]*：[ \t]*(.*)$")
_QUOTED_INT = re.compile(r"""^(['"])\s*(-?\d+)\s*\1$""")
_TAG_SPLIT = re.compile(r"[,，、]")
_COLON_NOTE = re.compile(r"^(.*?)[ \t]*[:：][ \t]*(.*)$")


@dataclass(frozen=True)
class RepairContext:
    relpath: str
    default_offset: str
    synonyms: dict[str, str]  # casefolded synonym -> canonical heading


@dataclass
class RepairResult:
    text: str
    fixes: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)  # what remains after the repair


FmFixer = Callable[[list[str], RepairContext], tuple[list[str], list[str]]]


# ---- frontmatter fixers (lines between the fences) -------------------------------

def fix_fullwidth_colon(lines: list[str], ctx: RepairContext) -> tuple[list[str], list[str]]:
    out, fixes = [], []
    for line in lines:
        m = _FULLWIDTH_KEY.match(line)
        if m and not frontmatter.KEY_LINE.match(line):
            line = f"{m.group(1)}: {m.group(2)}" if m.group(2) else f"{m.group(1)}:"
            fixes.append(f"full-width colon after {m.group(1)!r}")
        out.append(line)
    return out, fixes


def fix_unquoted_values(lines: list[str], ctx: RepairContext) -> tuple[list[str], list[str]]:
    out, fixes = list(lines), []
    for e in frontmatter.entries(lines):
        if plain_value_defect(e.raw):
            out[e.index] = f"{e.key}: {frontmatter.quote(e.raw)}"
            fixes.append(f"quoted the value of {e.key!r}")
    return out, fixes


def fix_types(lines: list[str], ctx: RepairContext) -> tuple[list[str], list[str]]:
    parsed = frontmatter.parse(lines)
    if parsed.mapping is None:
        return lines, []
    out, fixes = list(lines), []
    for e in frontmatter.entries(lines):
        value = parsed.mapping.get(e.key)
        if e.key in protocol.INT_FIELDS:
            m = _QUOTED_INT.match(e.raw)
            if m and len(m.group(2).lstrip("-")) <= protocol.MAX_INT_DIGITS:  # longer: kept as text, a finding
                out[e.index] = f"{e.key}: {int(m.group(2))}"
                fixes.append(f"{e.key} coerced to an integer")
        elif e.key == "tags" and isinstance(value, str) and len(e.lines) == 1:
            items = [t.strip() for t in _TAG_SPLIT.split(value) if t.strip()]
            out[e.index] = f"tags: {frontmatter.emit_value(items)}"
            fixes.append("tags coerced to a list")
    return out, fixes


def fix_ts_form(lines: list[str], ctx: RepairContext) -> tuple[list[str], list[str]]:
    """`ts` in ISO 8601's own form: a space between date and time becomes `T`, a missing offset is appended."""
    out = list(lines)
    for e in frontmatter.entries(lines):
        if e.key != "ts" or len(e.lines) != 1:
            continue
        raw = e.raw
        quoted = raw[:1] in ("'", '"') and raw[-1:] == raw[:1] and len(raw) > 1
        value = raw[1:-1] if quoted else raw
        ts = protocol.parse_ts(value)
        if ts is None or (ts.offset and not ts.spaced):
            continue
        fixed = protocol.iso_ts(value, ctx.default_offset)
        out[e.index] = f"ts: {raw[0] + fixed + raw[0] if quoted else fixed}"
        fixes = [f"ts {value!r} had a space between date and time; wrote it as {fixed}"] if ts.spaced else []
        return out, fixes + ([] if ts.offset else [f"ts had no offset; appended {ctx.default_offset}"])
    return out, []


def fix_missing_fields(lines: list[str], ctx: RepairContext) -> tuple[list[str], list[str]]:
    parsed = frontmatter.parse(lines)
    if parsed.mapping is None:
        return lines, []
    present = {e.key for e in frontmatter.entries(lines)}
    defaults = _defaults(ctx, status="open")
    missing = [k for k in protocol.REQUIRED_FIELDS if k not in present and k in defaults]
    if not missing:
        return lines, []
    added = [field_line(k, defaults[k]) for k in missing]
    return lines + added, [f"added missing field {k!r}" for k in missing]


FM_FIXERS: tuple[FmFixer, ...] = (fix_fullwidth_colon, fix_unquoted_values, fix_types, fix_ts_form, fix_missing_fields)


def _defaults(ctx: RepairContext, *, status: str) -> dict[str, object]:
    out: dict[str, object] = {"role": "assistant", "tags": [], "summary": "", "status": status}
    sid = protocol.id_from_relpath(ctx.relpath)
    if sid:
        d, t = sid[:8], sid[9:13]
        out["id"] = sid
        out["ts"] = f"{d[:4]}-{d[4:6]}-{d[6:]}T{t[:2]}:{t[2:]}:00{ctx.default_offset}"
    return out


def rebuild_frontmatter(text: str, ctx: RepairContext) -> tuple[str, list[str]]:
    """A session file with no frontmatter gets one from its folder and file name."""
    d = _defaults(ctx, status="conflict")
    if "id" not in d:
        return text, []
    lines = [field_line(k, d[k]) for k in ("id", "ts", "role")]
    lines += ["parent: null", field_line("tags", d["tags"]), "status: conflict", 'summary: ""']
    sep = "" if text.startswith("\n") else "\n"
    return frontmatter.join(lines, sep + text), [REBUILT]


# ---- body fixers --------------------------------------------------------------

def _heading_name(text: str) -> tuple[str, str]:
    m = _COLON_NOTE.match(text)
    return (m.group(1).strip(), m.group(2).strip()) if m else (text.strip(), "")


def _canonical(name: str, ctx: RepairContext) -> str | None:
    if name in protocol.SECTIONS:
        return name
    return ctx.synonyms.get(name.casefold())


def _candidate(line: str, target: str, ctx: RepairContext) -> str | None:
    """If `line` is a drifted form of heading `target`, the note that follows it ("" if none)."""
    hm = body.ANY_HEADING.match(line)
    if hm and hm.group(1):
        name, note = _heading_name(hm.group(2))
        if _canonical(name, ctx) == target:
            return note
        if len(hm.group(1)) == 2 and hm.group(2).startswith(target + " "):
            return hm.group(2)[len(target):].strip()
        return None
    bare = re.match(r"^[ \t]*(.+?)[ \t]*[:：][ \t]*$", line)
    if bare and _canonical(bare.group(1), ctx) == target:
        return ""
    return None


def fix_headings(text: str, ctx: RepairContext) -> tuple[str, list[str]]:
    lines = text.split("\n")
    mask = body.code_mask(lines)
    present = {h.title for h in body.h2_headings(lines)}
    fixes: list[str] = []
    for target in protocol.SECTIONS:
        if target in present:
            continue
        for i, line in enumerate(lines):
            h2 = body.H2.match(line)
            if mask[i] or (h2 and h2.group(1) in protocol.SECTIONS):
                continue
            note = _candidate(line, target, ctx)
            if note is None:
                continue
            lines[i : i + 1] = [f"## {target}", "", note] if note else [f"## {target}"]
            mask[i : i + 1] = [False, False, False] if note else [False]
            present.add(target)
            fixes.append(f"heading {line.strip()!r} -> '## {target}'")
            break
    return "\n".join(lines), fixes


def fix_missing_sections(text: str, ctx: RepairContext) -> tuple[str, list[str]]:
    lines = text.split("\n")
    heads = body.h2_headings(lines)
    fixes: list[str] = []
    for pos, target in enumerate(protocol.SECTIONS):
        if any(h.title == target for h in heads):
            continue
        later = [h for h in heads if h.title in protocol.SECTIONS[pos + 1 :]]
        if later:
            at = later[0].index
            lines[at:at] = [f"## {target}", ""] if at == 0 or lines[at - 1] == "" else ["", f"## {target}", ""]
        else:
            while lines and lines[-1] == "":
                lines.pop()
            lines += ["", f"## {target}", ""] if lines else [f"## {target}", ""]
        heads = body.h2_headings(lines)
        fixes.append(f"added empty section '## {target}'")
    return "\n".join(lines), fixes


# ---- driver ---------------------------------------------------------------------

def context_for(relpath: str, cfg: Config) -> RepairContext:
    return RepairContext(relpath, cfg.protocol.default_offset, protocol.synonyms_table(cfg))


def repair_session(text: str, ctx: RepairContext) -> tuple[str, list[str]]:
    fixes: list[str] = []
    sp = frontmatter.split(text)
    if sp.state == "none":
        text, fixes = rebuild_frontmatter(text, ctx)
        sp = frontmatter.split(text)
    if sp.state != "ok":
        return text, fixes
    lines = sp.lines
    for fixer in FM_FIXERS:
        lines, done = fixer(lines, ctx)
        fixes += done
    if frontmatter.parse(lines).mapping is None:
        return text, []
    body_text, done = fix_headings(sp.body, ctx)
    fixes += done
    body_text, done = fix_missing_sections(body_text, ctx)
    fixes += done
    return frontmatter.join(lines, body_text), fixes


def repair_text(relpath: str, text: str, cfg: Config) -> RepairResult:
    """The repaired text, the fixes applied and the findings that remain.

    Line endings are kept (CRLF files stay CRLF). A text with no error finding is
    returned unchanged, as is one whose frontmatter stays unparseable.
    """
    crlf = "\r\n" in text
    lf = text.replace("\r\n", "\n")
    before = validate_text(relpath, lf, cfg)
    if not has_errors(before):
        return RepairResult(text, [], before)
    kind = protocol.classify(relpath)
    new, fixes = lf, list[str]()
    if kind == "session":
        new, fixes = repair_session(lf, context_for(relpath, cfg))
    elif kind == "board":
        new, fixes = board.repair_board(lf)
    elif kind == "index":
        new, fixes = _repair_index(lf)
    elif kind == "memory":
        new, fixes = facts.repair(lf)
    after = validate_text(relpath, new, cfg)
    if not fixes:
        return RepairResult(text, [], before)
    return RepairResult(new.replace("\n", "\r\n") if crlf else new, fixes, after)


def _repair_index(text: str) -> tuple[str, list[str]]:
    lines = text.split("\n")
    if [ln.strip() for ln in lines[:2]] == [ln for ln in protocol.INDEX_HEADER.splitlines()]:
        return text, []
    return protocol.INDEX_HEADER + text, ["added the index.md header"]
