"""What a settled conflict leaves in the file, pure: `kept(relpath, theirs, mine, keep)`.

`theirs` is the file as it stands, `mine` the conflict copy's text. For the memory entry
files and the board, a copy holds just the entries in conflict, so "mine" puts the copy's
entries in the place of the file's entries with the same keys (the text around them stays
the file's), and "both" (memory files only) keeps both versions of a fact in one bullet: the
file's as written, then the copy's value on a continuation line below it (one key stays one
fact, so the file stays valid, and neither text is lost). For any other file "mine" is the copy's text (a session
copy's `status: conflict` becomes the file's status again, or `open`).
"""

from __future__ import annotations

from kbsync.core import board, facts, frontmatter, protocol


def kept(relpath: str, theirs: str, mine: str, keep: str) -> str:
    """The file's text after keeping `keep` ("mine", "theirs" or "both"); ValueError where it cannot apply."""
    if keep == "theirs":
        return theirs
    if facts.is_entry_file(relpath):
        return _facts(theirs, mine, both=keep == "both")
    if keep == "both":
        raise ValueError(f"--keep both applies to the memory files, whose facts can stand side by side; for "
                         f"{relpath} keep mine or theirs and carry the rest by hand")
    if relpath == protocol.BOARD_MD:
        return _board(theirs, mine)
    if protocol.classify(relpath) == "session":
        return _session(theirs, mine)
    return mine


def _facts(theirs: str, mine: str, *, both: bool) -> str:
    """The file's facts with the copy's: in place of the same keys ("mine") or joined to them ("both")."""
    ff = facts.parse(theirs)
    extra: list[str] = []
    blocks: list[facts.Block] = list(ff.blocks)
    for fact in facts.parse(mine).facts():
        at = next((i for i, b in enumerate(blocks) if isinstance(b, facts.Fact) and b.key == fact.key), None)
        same = blocks[at] if at is not None else None
        if at is None:
            extra.append(fact.raw)
        elif isinstance(same, facts.Fact) and same.raw != fact.raw:
            blocks[at] = _joined(same, fact) if both else eol(fact.raw)
    return facts.insert_after_last(facts.parse("".join(b if isinstance(b, str) else b.raw for b in blocks)),
                                   extra).render()


def _joined(theirs: facts.Fact, mine: facts.Fact) -> str:
    """One fact holding both versions: the file's bullet as written, then the copy's value and its own
    continuation lines, each indented as a continuation of the same bullet."""
    lines = [mine.value] + mine.raw.splitlines()[1:]
    return eol(theirs.raw) + "".join(f"  {line.strip()}\n" for line in lines if line.strip())


def eol(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


def _board(theirs: str, mine: str) -> str:
    """The board with each of the copy's entries in place of the entry with its key (added if absent)."""
    text = theirs
    for block in board.parse_board(mine).entries():
        text = board.upsert(text, block.entry)[0]
    return text


def _session(theirs: str, mine: str) -> str:
    """The copy's text with the file's status (or `open`) in place of `status: conflict`."""
    status = _status(theirs)
    return frontmatter.set_field(mine.replace("\r\n", "\n"), "status", status if status in ("open", "closed") else "open")


def _status(text: str) -> str | None:
    sp = frontmatter.split(text.replace("\r\n", "\n"))
    mapping = frontmatter.parse(sp.lines).mapping if sp.state == "ok" else None
    value = mapping.get("status") if mapping else None
    return value if isinstance(value, str) else None
