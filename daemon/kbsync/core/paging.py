"""Numbered pages of a list: which page is shown and how many there are. Pure.

Every list a person pages through (the board's entries and decay candidates, the candidates, the sessions
listed and searched, the memory facts) is cut by these, so a page asked for before the first is the first,
one past the last is the last, and an empty list is one empty page."""

from __future__ import annotations

from typing import Sequence, TypeVar

T = TypeVar("T")


def page_count(total: int, size: int) -> int:
    """How many pages of `size` hold `total` items (at least one)."""
    return max(1, -(-total // size))


def clamped(page: int, total: int, size: int) -> tuple[int, int]:
    """Page `page` (1-based) brought within the pages of `total` items, and how many pages there are."""
    pages = page_count(total, size)
    return min(max(page, 1), pages), pages


def paged(items: Sequence[T], page: int, size: int) -> tuple[list[T], int, int]:
    """Page `page` of `items` (see `clamped`), its number, and how many pages there are."""
    page, pages = clamped(page, len(items), size)
    return list(items[(page - 1) * size:page * size]), page, pages


def page_holding(index: int, total: int, size: int) -> int:
    """The page that holds the `index`-th (0-based) of `total` items; for an index past the end (a place just
    after the last item), the last page."""
    return clamped(index // size + 1, total, size)[0]
