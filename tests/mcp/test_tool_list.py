"""The tool list an assistant's context pays for: the exact small set, each annotated, every tool's
definition as a model is given it (name, description, input schema, annotations) together under 3,000 tokens
(2,500 before save_session, board_add and board_update listed their fields, which are required and the values
allowed: some 600 tokens a model is better off paying than guessing the fields and being refused). The output
schemas, which the client checks results against (the tool formats of the Anthropic and OpenAI APIs have no
field for one), are under 2,500 tokens together.

Tokens are counted with kbsync's documented estimate (kbsync.retrieval.context.estimate_tokens: one token
per 3 characters, 1.5 per CJK character, rounded up per piece). JSON schema text runs at about 4 characters
per token in the tokenizers assistants use, so the estimate overcounts: the real cost is lower.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from kbsync.app.workspace import open_workspace
from kbsync.mcp.server import build
from kbsync.retrieval.context import estimate_tokens

TOOLS = {"search", "get_context", "read", "status", "save_session", "write_section", "log_tool_call",
         "board_add", "board_update", "board_feedback", "board_applied", "remember", "forget"}
READ_ONLY = {"search", "get_context", "read", "status"}
BUDGET = 3000  # names, descriptions, input schemas and annotations
OUTPUT_BUDGET = 2500  # the output schemas


def tool_list(root: Path) -> list[dict[str, Any]]:
    ws = open_workspace(str(root), None)

    async def run() -> list[dict[str, Any]]:
        async with Client(build(lambda: ws)) as client:
            listed = await client.list_tools()
            return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed.tools]

    return anyio.run(run)


def test_the_tool_list_costs_under_its_token_budget(ws_root: Path) -> None:
    tools = tool_list(ws_root)
    outputs = {t["name"]: estimate_tokens(json.dumps(t.pop("outputSchema"), ensure_ascii=False)) for t in tools}
    cost = {t["name"]: estimate_tokens(json.dumps(t, ensure_ascii=False)) for t in tools}
    assert sum(cost.values()) < BUDGET, cost
    assert sum(outputs.values()) < OUTPUT_BUDGET, outputs
    assert max(len(t["description"]) for t in tools) <= 200


def test_the_tools_are_the_small_set_and_none_accepts_candidates(ws_root: Path) -> None:
    names = {t["name"] for t in tool_list(ws_root)}
    assert names == TOOLS
    assert not [n for n in names if "candidate" in n or "accept" in n]


def test_every_tool_says_whether_it_reads_or_destroys(ws_root: Path) -> None:
    for t in tool_list(ws_root):
        hints = t["annotations"]
        assert hints["readOnlyHint"] is (t["name"] in READ_ONLY), t["name"]
        if not hints["readOnlyHint"]:
            assert isinstance(hints.get("destructiveHint"), bool), t["name"]
    by_name = {t["name"]: t["annotations"] for t in tool_list(ws_root)}
    assert by_name["board_update"]["destructiveHint"] is True
    assert by_name["log_tool_call"]["destructiveHint"] is False


def test_the_writing_tools_list_their_fields_required_ones_and_allowed_values(ws_root: Path) -> None:
    from kbsync.app.board import CONFIDENCES, TYPES
    from kbsync.app.sessions import ROLES, STATUSES

    by_name = {t["name"]: t["inputSchema"] for t in tool_list(ws_root)}
    session = by_name["save_session"]["properties"]["session"]
    assert session["required"] == ["session_id"] and session["additionalProperties"] is False
    assert {"title", "tags", "status", "summary", "sections"} <= set(session["properties"])
    assert tuple(session["properties"]["status"]["enum"]) == STATUSES
    assert tuple(session["properties"]["role"]["enum"]) == ROLES
    for tool in ("board_add", "board_update"):
        entry = by_name[tool]["properties"]["entry"]
        assert set(entry["required"]) == {"title", "type", "topic", "summary", "core_content", "source", "source_date",
                                          "scenarios", "confidence"}
        assert tuple(entry["properties"]["type"]["enum"]) == TYPES
        assert tuple(entry["properties"]["confidence"]["enum"]) == CONFIDENCES
    dumped = json.dumps(by_name)
    assert '"title": "' not in dumped and "$ref" not in dumped  # compact: no pydantic titles, no references


def test_results_are_compact_json(ws_root: Path) -> None:
    ws = open_workspace(str(ws_root), None)

    async def run() -> str:
        async with Client(build(lambda: ws)) as client:
            result = await client.call_tool("save_session", {"session": {"session_id": "compact", "title": "t"}})
            return "".join(getattr(c, "text", "") for c in result.content)

    text = anyio.run(run)
    assert json.loads(text)["created"] is True and "\n" not in text and ": " not in text
