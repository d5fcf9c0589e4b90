"""The SDK's server as kbsync runs it. Arguments a client got wrong are told in one line: a tool's as its error
result (`Error executing tool NAME: argument `top`: ...`), a prompt's as JSON-RPC invalid params (-32602),
never pydantic's multi-line text, an internal error or a traceback (a result that failed its own output schema
would be kbsync's fault: the SDK's bare `Error executing tool NAME`, nothing of it told). The tool list's schemas
are compact (kbsync.mcp.listing)."""

from __future__ import annotations

import json
from typing import Any

from mcp import MCPError
from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.types import INVALID_PARAMS, CallToolResult, GetPromptResult, InputRequiredResult, TextContent, Tool
from pydantic import ValidationError


def one_line(exc: ValidationError) -> str:
    """Each wrong argument and what is wrong with it, on one line."""
    from kbsync.app.guard import field_path

    parts = []
    for err in exc.errors(include_url=False, include_input=False):
        where = field_path(err["loc"]) or "arguments"
        parts.append(f"argument `{where}`: {err['msg']}")
    return "; ".join(parts)


def compact_text(result: CallToolResult) -> CallToolResult:
    """The result with its JSON text written compactly (the SDK indents it: tokens of every answer)."""
    content = []
    for block in result.content:
        if isinstance(block, TextContent):
            try:
                block = block.model_copy(update={"text": json.dumps(json.loads(block.text), ensure_ascii=False,
                                                                    separators=(",", ":"))})
            except ValueError:
                pass  # not JSON: as it is
        content.append(block)
    return result.model_copy(update={"content": content})


class Server(MCPServer[Any]):
    """The SDK's server with kbsync's one-line argument errors and compact tool schemas."""

    async def list_tools(self) -> list[Tool]:
        from kbsync.mcp.listing import compact

        return [t.model_copy(update={"input_schema": compact(t.input_schema),
                                     "output_schema": compact(t.output_schema) if t.output_schema else None})
                for t in await super().list_tools()]

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None
                        ) -> CallToolResult | InputRequiredResult:
        try:
            result = await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError) and not isinstance(exc, UnexpectedToolError):
                raise ToolError(f"Error executing tool {name}: {one_line(exc.__cause__)}") from exc.__cause__
            raise
        return compact_text(result) if isinstance(result, CallToolResult) else result

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None, context: Any = None
                         ) -> GetPromptResult | InputRequiredResult:
        prompt = self._prompt_manager.get_prompt(name)
        if prompt is None:
            raise MCPError(code=INVALID_PARAMS, message=f"no prompt {name!r}; list the prompts to see their names")
        known = {a.name for a in prompt.arguments or []}
        missing = sorted(a.name for a in prompt.arguments or [] if a.required and a.name not in (arguments or {}))
        unknown = sorted(set(arguments or {}) - known)
        if missing or unknown:
            said = [f"missing argument(s) {', '.join(missing)}" if missing else "",
                    f"unknown argument(s) {', '.join(unknown)}" if unknown else ""]
            raise MCPError(code=INVALID_PARAMS, message=f"prompt {name}: {'; '.join(s for s in said if s)}; "
                           f"it takes {', '.join(sorted(known)) or 'no arguments'}")
        try:
            return await super().get_prompt(name, arguments, context)
        except ValueError as exc:
            if isinstance(exc.__cause__, ValidationError):  # an argument of the wrong type
                raise MCPError(code=INVALID_PARAMS, message=f"prompt {name}: {one_line(exc.__cause__)}") from exc
            raise
