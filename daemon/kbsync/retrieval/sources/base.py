"""What every search source shares: its configuration (SourceSpec), its entry in the registry (Kind), and the
hit a stored record makes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from kbsync.retrieval.fusion import Hit

if TYPE_CHECKING:
    from kbsync.retrieval.db import Row
    from kbsync.retrieval.text import Query
    from kbsync.store.workspace import Workspace

MAX_SUMMARY = 100
DEFAULT_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class SourceSpec:
    name: str
    kind: str
    path: str = ""
    command: tuple[str, ...] = ()
    timeout_s: float = DEFAULT_TIMEOUT_S


Table = dict[str, Any]  # a [[search.sources]] table as read from the configuration file


@dataclass(frozen=True)
class Kind:
    """A kind of source that reads files or waits on a program (run in the search's pool of threads)."""

    configured: Callable[[Table, str, str, str | None], SourceSpec | None]  # (table, name, where in the file, the file):
    # the source the table configures, None when it lacks what the kind needs; ConfigError for a bad value
    hits: Callable[[Workspace, SourceSpec, Query, int], list[Hit]]  # (workspace, source, query, limit), best first
    usage: str  # how a table names this kind, in the error that lists the kinds
    runs_program: bool = False  # configured only in a file a person on this machine controls
    uses_index: bool = False  # reads the search database (built before the pool's threads read it)


def row_hit(source: str, rank: int, row: Row, path: str) -> Hit:
    """The hit a stored record makes, naming its best passage."""
    best = row.passages[0][1] if row.passages else None
    return Hit(source=source, rank=rank, title=row.title, key=row.key, path=path, summary=clip(row.summary),
               flags=row.flags, heading=best.heading if best else "", passage=best.text if best else "",
               score=row.score, cover=row.cover, kind=row.kind)


def clip(text: str, limit: int = MAX_SUMMARY) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
