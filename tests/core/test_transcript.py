"""Reading an assistant's transcript (the documented JSON Lines) at a turn's end: prompts, tool calls and
their outcome, replies; sub-agent and client-added lines skipped; broken lines counted, never fatal."""

from __future__ import annotations

from pathlib import Path

from helpers.hook import provider_secrets
from kbsync.core.transcript import parse_transcript, withhold_secrets

FIXTURE = Path(__file__).resolve().parent.parent / "data" / "claude-code-transcript.jsonl"


def test_the_fixture_reads_as_three_turns() -> None:
    tx = parse_transcript(FIXTURE.read_bytes())
    assert tx.prompts == ["锁文件 发布", "deploy window 是哪天", "好的，记下结论"]  # the isMeta line is not a prompt
    assert [(c.name, c.failed) for c in tx.calls] == [("Bash", False), ("Read", True),
                                                        ("mcp__kbsync__write_section", False)]  # no sidechain Grep
    assert tx.model == "claude-sonnet-4-5-20250929"
    assert any("发布前确认锁文件" in r for r in tx.replies)
    assert not any("The user asks" in r for r in tx.replies)  # thinking is not a reply
    assert tx.skipped == 0


def test_a_half_written_last_line_and_hostile_lines_are_skipped() -> None:
    data = FIXTURE.read_bytes() + b'{"type": "user", "message": {"content": "cut' + b"\n[1, 2]\n" + b"[" * 100_000 + b"\n"
    tx = parse_transcript(data)
    assert len(tx.prompts) == 3 and tx.skipped == 3


def test_a_call_without_its_result_is_pending() -> None:
    lines = FIXTURE.read_bytes().split(b"\n")
    cut = next(i for i, ln in enumerate(lines) if b"toolu_01B7wLm4" in ln and b'"tool_result"' in ln)
    tx = parse_transcript(b"\n".join(lines[:cut]))
    assert [(c.name, c.failed) for c in tx.calls] == [("Bash", False), ("Read", None)]


def test_a_line_holding_a_secret_is_withheld_and_named() -> None:
    line = provider_secrets()["github-pat"]
    out = withhold_secrets(f"deploy with\n{line}\nthen check")
    assert out.split("\n")[0] == "deploy with" and out.split("\n")[2] == "then check"
    assert line not in out and "github-pat" in out
    assert withhold_secrets("nothing here") == "nothing here"
