"""Form bodies of the pages: application/x-www-form-urlencoded, read whole (the guard has checked its csrf
field and its size already)."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qs

from fastapi import Request


@dataclass(frozen=True)
class Form:
    fields: dict[str, list[str]]

    def one(self, name: str) -> str:
        """The field's first value ('' when absent)."""
        return self.fields.get(name, [""])[0]

    def all(self, name: str) -> list[str]:
        return self.fields.get(name, [])

    def lines(self, name: str) -> list[str]:
        """The field's non-blank lines, stripped (a textarea holding one item a line)."""
        return [ln.strip() for ln in self.one(name).splitlines() if ln.strip()]

    def ticked(self, name: str) -> bool:
        return bool(self.one(name))


async def read_form(request: Request) -> Form:
    body = (await request.body()).decode("utf-8", "replace")
    return Form(parse_qs(body, keep_blank_values=True))


def refusal_status(exc: Exception) -> int:
    """The status the API answers for `exc` (422 for bad input, 409 for a lock or conflict, ...)."""
    from kbsync.web.problems import STATUS_OF

    return next((s for cls, s, _code in STATUS_OF if isinstance(exc, cls)), 500)


def local_target(given: str, fallback: str) -> str:
    """`given` when it is a path of this server (a form's "back" field), else `fallback`: never another site."""
    return given if given.startswith("/") and not given.startswith(("//", "/\\")) else fallback
