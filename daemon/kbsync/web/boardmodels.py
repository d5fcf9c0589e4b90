"""The knowledge board's and the candidate lists' requests (their answers are shapes of kbsync.results)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from kbsync.app import board
from kbsync.web.models import Request, one_of

BOARD_KEY = ("An entry's key: its title, `@`, its source date as YYYY-MM-DD (`部署回滚流程@2025-06-11`), "
             "percent-encoded in a URL (`%E9%83%A8...%402025-06-11`); the last `@` separates the date.")


class EntryFields(Request):
    """A full board entry (the knowledge-board seed's schema): every field but status is required."""

    title: str = Field(min_length=1)
    type: Annotated[str, one_of(board.TYPES, "English synonyms (pitfall, method, ...) are accepted")]
    topic: str = Field(min_length=1)
    summary: str = Field(min_length=1, description="one line, at most 100 characters")
    core_content: str = Field(min_length=1)
    source: str = Field(min_length=1)
    source_date: str = Field(description="YYYY-MM-DD", examples=["2025-06-11"])
    scenarios: list[str] = Field(min_length=1, description="when the entry applies; at least one")
    confidence: Annotated[str, one_of(board.CONFIDENCES)]
    status: Annotated[str, one_of(board.STATUSES)] = "active"


class Vote(Request):
    vote: Literal["helpful", "harmful"]


class Applied(Request):
    now: str | None = Field(default=None, description="when it was applied, ISO 8601 (default: now)")


# ---- candidates ----------------------------------------------------------------------------------------


class Accept(Request):
    """Fields over what the item holds (empty: keep the item's); a flagged item needs allow_flagged."""

    title: str | None = None
    type: Annotated[str, one_of(board.TYPES)] | None = None
    topic: str | None = None
    summary: str | None = None
    scenarios: list[str] = Field(default_factory=list)
    confidence: Annotated[str, one_of(board.CONFIDENCES)] | None = None
    allow_flagged: bool = False


