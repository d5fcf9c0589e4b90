"""Test helpers for export, section writes and split: tiny real images, session files, the CLI."""

from __future__ import annotations

import struct
import zlib
from html.parser import HTMLParser


def png(rgb: tuple[int, int, int] = (255, 0, 0)) -> bytes:
    """A valid 1x1 PNG of one colour (distinct colours give distinct bytes)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(bytes([0, *rgb]))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


SESSION_HEAD = """---
id: 20250611-1432-a1b2c3d
ts: 2025-06-11T14:32:07+08:00
role: assistant
parent: null
tags: [合同, 风险]
status: open
summary: "梳理了付款风险：三条"
---
"""


def session_text(sections: dict[str, str], head: str = SESSION_HEAD) -> str:
    body = "".join(f"\n## {name}\n" + (f"\n{text}\n" if text else "") for name, text in sections.items())
    return head + body


class Images(HTMLParser):
    """Every <img> src and every table cell of an HTML page."""

    def __init__(self) -> None:
        super().__init__()
        self.srcs: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag == "img":
            self.srcs.append(dict(attrs).get("src") or "")


def parse_html(text: str) -> Images:
    parser = Images()
    parser.feed(text)
    parser.close()
    return parser
