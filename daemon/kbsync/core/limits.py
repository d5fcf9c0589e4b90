"""How much each field may hold when it reaches a file through a door (the CLI, the HTTP API, MCP): one table,
one check. Pure.

Lengths are counted in characters (code points). Past its maximum a field is refused whole with one line that
names the field, its length and the maximum, never repeating the value, and nothing is written; so no result
can echo an oversized input back either. The table is documented in docs/protocol.md ("Limits").
"""

from __future__ import annotations

import re
from typing import Final

from kbsync.errors import InputError

NAME: Final = 200  # an id, a key, a name, a tag, a heading, a log line's session, tool and status, a one-line board field
TITLE: Final = 200  # a session's or a board entry's title
SUMMARY: Final = 4_000  # a session's or an entry's summary (the protocol asks for 80 / 100 and warns past that;
# a summary imported from elsewhere, such as a dataset's session summary, runs to 1,500)
LINE: Final = 4_000  # one line of free text: a log line's detail, an error message, a fact's value, a scenario
TEXT: Final = 64_000  # a board entry's core content
REF: Final = 1_000  # a reference a caller looks something up by: a session id, a board key, a workspace path
ITEMS: Final = 100  # the items of a list: tags, scenarios, a session's sections
SHOWN: Final = 40  # at most this much of a refused name is repeated in a message

# What str.splitlines (and so every reader of the board and the memory files) takes for a line break.
LINE_BREAK: Final = re.compile("[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def check(value: str, field: str, limit: int, where: str | None = None) -> str:
    """`value` when it holds at most `limit` characters; InputError naming `field` otherwise."""
    if len(value) > limit:
        raise InputError(f"{field} is {len(value):,} characters, over the {limit:,} it may hold; shorten it "
                         "(nothing was written)", path=where)
    return value


def check_items(items: list[object] | tuple[object, ...], field: str, where: str | None = None) -> None:
    """InputError when a list holds more than ITEMS items."""
    if len(items) > ITEMS:
        raise InputError(f"{field} has {len(items):,} items, over the {ITEMS} it may hold (nothing was written)",
                         path=where)


def one_line(value: str) -> bool:
    """Whether `value` holds no line break of any kind a reader splits lines at."""
    return LINE_BREAK.search(value) is None


def shown(text: str) -> str:
    """`text` as a message may repeat it: its first SHOWN characters, quoted."""
    return repr(text) if len(text) <= SHOWN else repr(text[:SHOWN]) + "…"
