"""When a query names a time, pure: the days it names, as a window a record's date is matched against.

People ask about what happened then: "what did we decide on 13 October 2023", "the deploy in July 2022",
"2023年10月的发布". A record's date (a session's start, a board entry's source date) is a field like its
title, so a query that names a day, a month or a year holds one more term: the record's date falling in
that time (kbsync.retrieval.relevance weighs it as a term of the head, its weight the idf of the records
dated then). Nothing is filtered out: `since:`/`until:` do that.

What is read, in English and Chinese (the first one found):
- a day: `13 October 2023`, `October 13, 2023`, `13th Oct, 2023`, `2023-10-13`, `2023年10月13日`;
- a month: `October 2023`, `2023-10`, `2023年10月`;
- a year alone: `in 2023`, `2023年`.

A month or day without a year (`in July`, `7月`) is not read: which July is the record's to know, and the
month's name is still a word of the query. Relative times ("last week") need the date the question is asked
in and are not read.

The window runs from the first day named to `AFTER` days past the last: a record written soon after an
event (a session that says "yesterday I…") is about it too.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re

AFTER = 7  # days after the time named that a record dated then still matches

_MONTHS = {name: i for i, name in enumerate(
    ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
     "november", "december"), start=1)}
_MONTHS |= {name[:3]: i for name, i in list(_MONTHS.items())} | {"sept": 9}
_MONTH = "(?P<m>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<d>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<y>(?:19|20)\d\d)"
_SEP = r"[\s,]+"
_PATTERNS = [re.compile(p, re.IGNORECASE) for p in (
    rf"\b{_YEAR}-(?P<mn>[01]\d)(?:-(?P<dn>[0-3]\d))?(?![-\w])",
    rf"(?<!\d){_YEAR}\s*年\s*(?:(?P<mn>[01]?\d)\s*月\s*(?:(?P<dn>[0-3]?\d)\s*[日号])?)?",
    rf"\b{_DAY}(?:\s+of)?{_SEP}{_MONTH}{_SEP}{_YEAR}\b",
    rf"\b{_MONTH}{_SEP}{_DAY}{_SEP}{_YEAR}\b",
    rf"\b{_MONTH}{_SEP}{_YEAR}\b",
    rf"\b(?:in|of|during|since|from|year)\s+{_YEAR}(?![-\w])",
)]


def window(text: str) -> tuple[str, str] | None:
    """The first and last day (ISO dates) a record's date matches for the time `text` names, or None."""
    for pattern in _PATTERNS:
        for m in pattern.finditer(text):
            span = _span(m)
            if span:
                first, last = span
                return first.isoformat(), (last + dt.timedelta(days=AFTER)).isoformat()
    return None


def _span(m: re.Match[str]) -> tuple[dt.date, dt.date] | None:
    """The days a match names, or None when they are no real date (31 February)."""
    found = m.groupdict()
    year = int(found["y"])
    month = _MONTHS[found["m"].casefold()] if found.get("m") else int(found.get("mn") or 0)
    day = int(found.get("d") or found.get("dn") or 0)
    try:
        if not month:
            return dt.date(year, 1, 1), dt.date(year, 12, 31)
        if not day:
            return dt.date(year, month, 1), dt.date(year, month, calendar.monthrange(year, month)[1])
        return dt.date(year, month, day), dt.date(year, month, day)
    except ValueError:
        return None
