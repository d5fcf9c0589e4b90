"""An assistant's transcript as kbsync reads it at the end of a turn: the person's prompts, the tool calls and
their outcome, the assistant's replies, the model. Pure; the input is untrusted.

The format is Claude Code's (docs/assist.md): JSON Lines, one object per line with `type` ("user",
"assistant", and others kbsync skips), `uuid`, `timestamp`, `isSidechain` (a sub-agent's line: skipped) and
`isMeta` (text the assistant's client added: skipped), and `message` whose `content` is a string or a list of
blocks: "text" (`text`), "tool_use" (`id`, `name`, `input`) in assistant lines, "tool_result" (`tool_use_id`,
`is_error`) in user lines. A line that is not a JSON object (the last one may be half-written) is skipped
and counted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

MAX_LINE = 4 * 1024 * 1024  # longer lines (a pasted file, an image) are skipped unread


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    failed: bool | None = None  # None while no result was seen


@dataclass
class Transcript:
    prompts: list[str] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    replies: list[str] = field(default_factory=list)
    model: str = ""
    skipped: int = 0  # lines that were not a JSON object


def _blocks(message: Any) -> list[Any]:
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _texts(blocks: list[Any]) -> str:
    return "\n".join(b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)).strip()


def parse_transcript(data: bytes) -> Transcript:
    out = Transcript()
    results: dict[str, bool] = {}
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        try:
            line = json.loads(raw) if len(raw) <= MAX_LINE else None
        except (ValueError, RecursionError):
            line = None
        if not isinstance(line, dict):
            out.skipped += 1
            continue
        if line.get("isSidechain") is True or line.get("isMeta") is True:
            continue
        _take(out, line, results)
    out.calls = [ToolCall(c.id, c.name, results.get(c.id)) for c in out.calls]
    return out


def _take(out: Transcript, line: dict[str, Any], results: dict[str, bool]) -> None:
    message = line.get("message")
    blocks = _blocks(message)
    if line.get("type") == "user":
        for b in blocks:
            if b.get("type") == "tool_result" and isinstance(b.get("tool_use_id"), str):
                results[b["tool_use_id"]] = b.get("is_error") is True
        text = _texts(blocks)
        if text and not any(b.get("type") == "tool_result" for b in blocks):
            out.prompts.append(text)
    elif line.get("type") == "assistant":
        if isinstance(message, dict) and isinstance(message.get("model"), str):
            out.model = message["model"]
        for b in blocks:
            if b.get("type") == "tool_use" and isinstance(b.get("id"), str) and isinstance(b.get("name"), str):
                out.calls.append(ToolCall(b["id"], b["name"]))
        text = _texts(blocks)
        if text:
            out.replies.append(text)


def withhold_secrets(text: str) -> str:
    """`text` with every line that holds a secret (the commit hook's rules) replaced by a note naming the rule."""
    from kbsync.core.detect.secrets import scan_text

    found = {f.line: f.rule for f in scan_text("transcript", text, inline_allow=False)}
    if not found:
        return text
    lines = text.split("\n")
    for number, rule in found.items():
        if 0 < number <= len(lines):
            lines[number - 1] = f"[line withheld: a secret ({rule})]"
    return "\n".join(lines)
