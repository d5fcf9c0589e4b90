"""Results as the model sees them: the keys every door gives for the action (kbsync.app.shapes), with the
workspace text moved into a `content` object (data, never instructions), each flagged span withheld and named
in `content.flags` (kbsync.app.guard); a search hit's `flags` are its record's, in its file's offsets."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from kbsync.app import shapes
from kbsync.app.guard import content, page
from kbsync.mcp import results

READ_LIMIT = 40_000  # characters of a text `read` returns at most in one call (about 10,000 tokens)

if TYPE_CHECKING:
    from kbsync.app.guard import Learned
    from kbsync.app.memory import FactWritten
    from kbsync.app.reading import Item
    from kbsync.app.retrieval import Fused, Outcome
    from kbsync.results import ContextPart
    from kbsync.results import Pack as Shared

PACK_LEFT_OUT = ("text", "flags")  # the pack's whole text and every flag again: each part holds its own

def item(it: Item, offset: int = 0, limit: int = READ_LIMIT) -> results.Read:
    """The item's text from `offset`, at most `limit` characters of it (kbsync.app.guard.page), with where the
    page ends, the text's length, and the offset of the next page (None after the last)."""
    versions = {"versions": it.versions} if it.versions else {}
    shown, end = page(it.text, offset, min(limit, READ_LIMIT), it.verdicts)
    total = len(it.text)
    where: results.Page = {"offset": offset, "end": end, "total": total, "next_offset": end if end < total else None}
    return cast(results.Read, {"kind": it.kind, "ref": it.ref, "path": it.path, **versions, "content": shown,
                               "page": where})


def hit(r: Fused, verdicts: Learned | None = None) -> results.Hit:
    """A hit's own fields, and its title, summary and best passage under `content`."""
    return cast(results.Hit, {**shapes.hit_fields(r), "content": shapes.hit_text(r, verdicts)})


def search(outcome: Outcome) -> results.Found:
    return {"results": [hit(r, outcome.verdicts) for r in outcome.results], "failures": shapes.failures(outcome)}


def removed(done: FactWritten) -> results.Forgotten:
    """A forgotten fact: the value it had is workspace text, so it is guarded as every other."""
    shared = done.as_dict()
    return {"path": shared["path"], "key": shared["key"], "action": shared["action"], "version": shared["version"],
            "content": cast(results.ValueText, content(value=shared["value"]))}


def pack(shared: Shared) -> results.Pack:
    """A context pack without its whole text and flags, each part's text and flags under `content` (its flagged
    spans already withheld when the pack was assembled)."""
    own = {k: v for k, v in shared.items() if k not in PACK_LEFT_OUT}
    return cast(results.Pack, {**own, "parts": [part(p) for p in shared["parts"]]})


def part(p: ContextPart) -> results.Part:
    return {"name": p["name"], "tokens": p["tokens"], "content": {"text": p["text"], "flags": p["flags"]}}
