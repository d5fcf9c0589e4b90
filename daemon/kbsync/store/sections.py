"""Section-level writes: replace or append to one section of an existing session.

A model is given one section name and returns only that section's text; the
program keeps the skeleton. The text is placed with `session.normalize_content`,
so a heading the model writes inside it (`## 结论` again, `# Title`) stays text
and cannot add or break a section. Only the lines of the named section change:
the frontmatter and every other section keep their bytes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kbsync.core import body, frontmatter, limits, protocol, textguard, versions
from kbsync.core.session import normalize_content, parse_session
from kbsync.core.validate import validate_text
from kbsync.errors import InputError, ProtocolError, StaleError
from kbsync.store import fsio
from kbsync.store.sessions import find_given, write_session
from kbsync.store.workspace import Workspace, decode


@dataclass(frozen=True)
class SectionResult:
    relpath: str
    section: str
    changed: bool
    version: str = ""  # the section's version after the write


def canonical_name(name: str, synonyms: dict[str, str]) -> str:
    """The section a given name means: a protocol heading, a configured synonym, or the name itself."""
    name = name.strip()
    if name.startswith("#") or "\n" in name or not name:
        raise InputError(f"section name {name!r} must be a plain heading name such as 结论")
    return protocol.canonical_heading(name, synonyms)


def guard_headings(content: str, synonyms: dict[str, str]) -> str:
    """Model text made safe to place under a heading (see `session.normalize_content`).

    Besides what normalize_content escapes (levels 1 and 2), a deeper heading that
    names a protocol section (`### 待办`, `#### 总结：`) is escaped too, so that no
    repair can ever take it for that section's heading. Nothing is removed.
    """
    lines = normalize_content(content).split("\n")
    mask = body.code_mask(lines)
    for i, line in enumerate(lines):
        m = body.ANY_HEADING.match(line)
        if m and not mask[i] and _names_section(m.group(2), synonyms):
            lines[i] = "\\" + line
    return "\n".join(lines)


def _names_section(title: str, synonyms: dict[str, str]) -> bool:
    name = re.split(r"[ \t]*[:：]", title, maxsplit=1)[0].strip()
    return bool(name) and (name in protocol.SECTIONS or synonyms.get(name.casefold()) in protocol.SECTIONS)


def _span(lines: list[str], name: str, relpath: str) -> tuple[int, int]:
    """[start, end) of the content lines under `## name` in the body lines."""
    heads = body.h2_headings(lines)
    found = [n for n, h in enumerate(heads) if h.title == name]
    if not found:
        have = ", ".join(h.title for h in heads) or "none"
        raise InputError(f"no section '## {name}' in the session (its sections: {have}); nothing written", path=relpath)
    if len(found) > 1:
        raise ProtocolError(f"section '## {name}' appears {len(found)} times; merge them by hand first", path=relpath)
    n = found[0]
    end = heads[n + 1].index if n + 1 < len(heads) else len(lines)
    return heads[n].index + 1, end


def set_section(text: str, name: str, content: str, *, append: bool = False, relpath: str = "",
                synonyms: dict[str, str] | None = None) -> str:
    """`text` with the content of section `name` replaced by (or extended with) `content`. Pure."""
    sp = frontmatter.split(text)
    if sp.state != "ok":
        raise ProtocolError(f"no readable frontmatter; run `kbsync repair {relpath}` first", path=relpath)
    lines = sp.body.split("\n")
    start, end = _span(lines, name, relpath)
    new = guard_headings(content, synonyms or {})
    if append:
        old = "\n".join(lines[start:end]).strip("\n")
        new = f"{old}\n\n{new}" if old and new else old or new
    lines[start:end] = ["", *new.split("\n"), ""] if new else [""]
    return frontmatter.join(sp.lines, "\n".join(lines))


def read_valid(ws: Workspace, relpath: str) -> tuple[str, fsio.Fingerprint]:
    """A session's text and fingerprint; ProtocolError (run repair first) when it has an error."""
    data, fp = fsio.read_with_fingerprint(ws.checked_path(relpath))
    text = decode(data, relpath)
    bad = next((f for f in validate_text(relpath, text, ws.config) if f.level == "error"), None)
    if bad is not None or "\r\n" in text:
        why = bad.message if bad else "CRLF line endings"
        raise ProtocolError(f"the session is not valid ({why}); run `kbsync repair {relpath}` first",
                            path=relpath, line=bad.line if bad else None)
    return text, fp


def check_base(text: str, section: str, base: str | None, relpath: str) -> None:
    """StaleError unless section `section` of the session `text` is at version `base` (None: no check)."""
    if base is None:
        return
    current = next((c for h, c in parse_session(text).sections if h == section), "")
    if versions.version_of(current) != base:
        raise StaleError(f"section '## {section}' changed since version {base} was read (now "
                         f"{versions.version_of(current)}); read it again and redo your change on it", path=relpath,
                         version=versions.version_of(current), current=current)


def write_section(ws: Workspace, sid: str, name: str, content: str, *, append: bool = False,
                  base: str | None = None) -> SectionResult:
    """Replace (or append to) one section of session `sid` under its lock, with the core's guarantees; with
    `base`, only while the section is still at that version (its content's, as `kbsync.core.versions` gives)."""
    relpath = find_given(ws, sid)
    section = canonical_name(textguard.clean(limits.check(name, "the section name", limits.NAME), "the section name"),
                             ws.synonyms())
    content = textguard.clean(content, "the text", multiline=True)
    cfg = ws.config.daemon
    with fsio.locked(ws.path(relpath), ttl_s=cfg.lock_ttl_s, wait_s=cfg.lock_wait_s):
        text, fp = read_valid(ws, relpath)
        check_base(text, section, base, relpath)
        new = set_section(text, section, content, append=append, relpath=relpath, synonyms=ws.synonyms())
        if new != text:
            write_session(ws, relpath, new, fp)
    written = next((c for h, c in parse_session(new).sections if h == section), "")
    return SectionResult(relpath, section, new != text, versions.version_of(written))
