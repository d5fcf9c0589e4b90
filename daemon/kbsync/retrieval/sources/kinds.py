"""The registry of search source kinds run in the pool, by the `kind` a `[[search.sources]]` table names (the
workspace's own kinds, searched together in the caller's thread, are kbsync.retrieval.search's)."""

from __future__ import annotations

from kbsync.retrieval.sources import command, folder, semantic
from kbsync.retrieval.sources.base import Kind

KINDS: dict[str, Kind] = {
    "folder": folder.KIND,
    "command": command.KIND,
    semantic.SEMANTIC: semantic.KIND,
}
