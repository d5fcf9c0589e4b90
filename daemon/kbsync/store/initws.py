"""The workspace layout (folders and skeleton files), created idempotently; the repository is git's part
(kbsync.app.workspace puts the two together)."""

from __future__ import annotations

from pathlib import Path

from kbsync.core import protocol
from kbsync.store import fsio

BOARD_SKELETON = """# LEARNING_BOARD

## 长期说明

经验看板：跨会话保留的观点、方法、踩坑与工具。每条记录以三级标题开头，键为 标题 + source_date。

## 长期趋势

## 学习记录
"""

FILES: dict[str, str] = {
    protocol.INDEX_MD: protocol.INDEX_HEADER,
    protocol.BOARD_MD: BOARD_SKELETON,
    protocol.FACTS_MD: "# 长期事实\n",
    protocol.PREFERENCES_MD: "# 偏好\n",
    protocol.TOOL_CALLS_LOG: "",
    protocol.ERRORS_LOG: "",
    ".gitignore": ".kbsync/\n*.tmp\n*.lock\n",
    ".gitattributes": "index.md merge=union\nlogs/*.md merge=union\n",
}
DIRS = (protocol.SESSIONS_DIR, protocol.ENTITIES_DIR, protocol.ARTIFACTS_DIR, protocol.CANDIDATES_DIR,
        protocol.STATE_DIR, "logs")
KEEP = ".gitkeep"


def lay_out(root: Path) -> list[str]:
    """Create the folders and skeleton files that are missing; return what was created.

    Nothing that exists is changed.
    """
    created: list[str] = []
    root.mkdir(parents=True, exist_ok=True)
    for d in DIRS:
        p = root / d
        if not p.is_dir():
            p.mkdir(parents=True)
            created.append(d + "/")
            if d not in (protocol.STATE_DIR, "logs"):
                fsio.atomic_write(p / KEEP, b"")
    for rel, content in FILES.items():
        p = root / rel
        if not p.exists():
            fsio.atomic_write(p, content.encode("utf-8"))
            created.append(rel)
    return created


def missing_ignores(root: Path) -> list[str]:
    """Lines of the required .gitignore that an existing one lacks."""
    try:
        have = set((root / ".gitignore").read_text(encoding="utf-8").split())
    except FileNotFoundError:
        return FILES[".gitignore"].split()
    return [ln for ln in FILES[".gitignore"].split() if ln not in have]
