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
