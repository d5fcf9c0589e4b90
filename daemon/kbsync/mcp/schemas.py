"""The typed inputs of the tools that write a session or a board entry: every field a model may send, which
are required and the values allowed, so the tool list tells a model what `kbsync session save` and
`kbsync board add` take. The allowed values are the protocol's (a test holds them equal to kbsync.app's)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

BoardType = Literal["观点", "方法", "踩坑", "工具"]
Confidence = Literal["high", "medium", "low"]
EntryStatus = Literal["active", "decaying", "retired"]
Role = Literal["user", "assistant", "system", "tool"]
SessionStatus = Literal["open", "closed", "conflict"]
Count = Field(default=None, ge=0)


class SessionIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    session_id: str = Field(min_length=1, description="your id for this conversation; the same id updates it")
    title: str | None = None
    ts: str | None = Field(default=None, description="creation time, ISO 8601 with offset")
    role: Role | None = None
    tags: list[str] | None = None
    model: str | None = None
    turns: int | None = Count
    tokens_in: int | None = Count
    tokens_out: int | None = Count
    status: SessionStatus | None = Field(default=None, description="closed: the daemon commits it")
    summary: str | None = Field(default=None, description="one line, at most 80 characters")
    parent: str | None = Field(default=None, description="a session id")
    sections: dict[str, str] | None = Field(default=None, description="heading -> text: 用户输入, 我的判断, 工具调用, "
                                            "结论, 待办")

    def payload(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)


class EntryIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    title: str = Field(min_length=1)
    type: BoardType
    topic: str = Field(min_length=1)
    summary: str = Field(min_length=1, max_length=100)
    core_content: str = Field(min_length=1, description="Markdown")
    source: str = Field(min_length=1, description="a workspace path or URL")
    source_date: str = Field(description="YYYY-MM-DD")
    scenarios: list[str] = Field(min_length=1)
    confidence: Confidence
    status: EntryStatus | None = None

    def payload(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)
