"""The tool list an assistant's context pays for: the exact small set, each annotated, every tool's
definition (name, description, input and output schema, annotations) together under 2,500 tokens.

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
BUDGET = 2500


def tool_list(root: Path) -> list[dict[str, Any]]:
    ws = open_workspace(str(root), None)

    async def run() -> list[dict[str, Any]]:
        async with Client(build(lambda: ws)) as client:
            listed = await client.list_tools()
            return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed.tools]

    return anyio.run(run)


def test_the_tool_list_costs_under_its_token_budget(ws_root: Path) -> None:
    tools = tool_list(ws_root)
    cost = {t["name"]: estimate_tokens(json.dumps(t, ensure_ascii=False)) for t in tools}
    assert sum(cost.values()) < BUDGET, cost
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
