"""Numbered pages: a page asked for outside the list is its nearest end; an empty list is one empty page; the
place just past the last item is on the last page."""

from __future__ import annotations

from kbsync.core.paging import clamped, page_count, page_holding, paged


def test_pages_cover_every_item_once() -> None:
    items = list(range(101))
    pages = page_count(len(items), 50)
    assert pages == 3 and [x for n in range(1, pages + 1) for x in paged(items, n, 50)[0]] == items
    assert paged(items, 3, 50) == ([100], 3, 3)


def test_a_page_outside_the_list_is_its_nearest_end() -> None:
    assert clamped(0, 120, 50) == (1, 3) and clamped(-4, 120, 50) == (1, 3) and clamped(9, 120, 50) == (3, 3)
    assert paged([], 2, 50) == ([], 1, 1)


def test_the_page_holding_a_place() -> None:
    assert [page_holding(i, 100, 50) for i in (0, 49, 50, 99)] == [1, 1, 2, 2]
    assert page_holding(100, 100, 50) == 2  # just past the last: the last page, not an empty third
    assert page_holding(50, 51, 50) == 2 and page_holding(0, 0, 50) == 1
