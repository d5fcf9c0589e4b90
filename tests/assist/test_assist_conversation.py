"""A whole conversation driven as Claude Code drives it: the hook commands that `kbsync assist install` wrote
into a real .claude/settings.json (beside other hooks and settings), run by a shell in the project folder
with the documented event JSON on stdin, while a real transcript file grows turn by turn and the real
daemon runs. Start, three prompts with tool calls, a Stop after each (the first asks the model, which
answers through the MCP SDK's client), the end, a resume and a second end: one valid, closed, committed
session; each tool call logged once; the cited entry marked applied; the settings file otherwise as it was."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest

from helpers.board import payload
from helpers.cli import Cli
from helpers.daemon import git, head_files, wait_for
from helpers.hook import provider_secrets
from helpers.mcp import data, stdio
from helpers.web import WebServer, configure, server_env

FIXTURE = Path(__file__).resolve().parent.parent / "data" / "claude-code-transcript.jsonl"
SID = "0b5c9f7e-3a1d-4c2e-9f10-6d2b8a7c4e51"  # the fixture's session id
KEY = "发布前确认锁文件@2025-06-11"
OTHERS = {"model": "sonnet", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}],
                                       "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
                                                                                      "command": "true"}]}]}}


def turns(secret: str) -> list[list[str]]:
    """The fixture's lines, one list per turn (a turn opens with a prompt); the second prompt holds `secret`."""
    out: list[list[str]] = [[]]
    for line in FIXTURE.read_text(encoding="utf-8").splitlines():
        obj = json.loads(line)
        content = obj.get("message", {}).get("content") if obj.get("type") == "user" else None
        if isinstance(content, str) and not obj.get("isMeta") and out[-1] and any('"assistant"' in ln for ln in out[-1]):
            out.append([])
        if content == "deploy window 是哪天":
            obj["message"]["content"] = f"deploy window 是哪天\n{secret}"
            line = json.dumps(obj, ensure_ascii=False)
        out[-1].append(line)
    return out


class Assistant:
    """Runs the installed hooks as the assistant does: `sh -c COMMAND` in the project, the event on stdin."""

    def __init__(self, project: Path, transcript: Path, env: dict[str, str]) -> None:
        settings = json.loads((project / ".claude" / "settings.json").read_text(encoding="utf-8"))
        self.commands = {event: [h["command"] for g in groups for h in g["hooks"]]
                         for event, groups in settings["hooks"].items()}
        self.project, self.transcript, self.env = project, transcript, env

    def fire(self, event: str, **fields: Any) -> list[str]:
        event_json = json.dumps({"session_id": SID, "transcript_path": str(self.transcript), "cwd": str(self.project),
                                 "permission_mode": "default", "hook_event_name": event, **fields}, ensure_ascii=False)
        outs = []
        for command in self.commands.get(event, []):
            done = subprocess.run(command, shell=True, input=event_json, capture_output=True, text=True,
                                  cwd=self.project, env=self.env, timeout=60)
            assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
            if done.stdout.strip():
                outs.append(done.stdout)
        return outs


def model_writes_its_sections(ws: Path, sid: str) -> None:
    async def run() -> None:
        async with stdio(ws) as client:
            for heading, text in (("结论", "发布前检查锁文件；部署窗口是周二上午。"), ("待办", "- 补 DEPLOY.md")):
                data(await client.call_tool("write_section", {"session_id": sid, "heading": heading, "text": text}))
    anyio.run(run)


@pytest.mark.slow
def test_a_whole_conversation_ends_as_one_closed_committed_session(ws_root: Path, tmp_path: Path, cli: Cli) -> None:
    configure(ws_root, daemon='commit_every = "1s"')
    assert cli("board", "add", ws=ws_root, stdin=json.dumps(payload())).returncode == 0
    facts = ws_root / "memory" / "facts.md"
    facts.write_text(facts.read_text(encoding="utf-8") + "- deploy window: Tuesday mornings\n", encoding="utf-8")
    project = tmp_path / "shop"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.json").write_text(json.dumps(OTHERS), encoding="utf-8")
    assert cli("assist", "install", "claude-code", "--project", str(project), ws=ws_root).returncode == 0
    secret = provider_secrets()["github-pat"]
    transcript = tmp_path / "claude" / f"{SID}.jsonl"
    transcript.parent.mkdir()
    env = server_env(tmp_path)
    daemon = WebServer(ws_root, tmp_path, command=("run",))
    try:
        claude = Assistant(project, transcript, env)
        [start] = claude.fire("SessionStart", source="startup", model="claude-sonnet-4-5")
        assert "deploy window: Tuesday mornings" in json.loads(start)["hookSpecificOutput"]["additionalContext"]
        asked = []
        for n, lines in enumerate(turns(secret)):
            prompt = json.loads(next(ln for ln in lines if '"type": "user"' in ln and '"isMeta"' not in ln
                                     and "tool_result" not in ln))["message"]["content"]
            claude.fire("UserPromptSubmit", prompt=prompt)
            with transcript.open("a", encoding="utf-8") as fh:
                fh.write("".join(line + "\n" for line in lines))
            asked += claude.fire("Stop", stop_hook_active=False)
            if n == 0:
                [ask] = asked
                reason = json.loads(ask)
                assert reason["decision"] == "block" and "write_section" in reason["reason"]
                sid = reason["reason"].split('session_id "', 1)[1].split('"', 1)[0]
                model_writes_its_sections(ws_root, sid)
                assert claude.fire("Stop", stop_hook_active=True) == []
        assert len(asked) == 1  # asked once in the whole conversation
        claude.fire("SessionEnd", reason="prompt_input_exit")
        claude.fire("SessionStart", source="resume")
        claude.fire("Stop", stop_hook_active=False)
        claude.fire("SessionEnd", reason="logout")

        files = [p for p in (ws_root / "sessions").rglob("*.md")]
        assert len(files) == 1, files
        relpath = files[0].relative_to(ws_root).as_posix()
        text = files[0].read_text(encoding="utf-8")
        assert "status: closed" in text and "锁文件 发布" in text and "发布前检查锁文件" in text
        assert secret not in text and "line withheld" in text
        assert cli("validate", ws=ws_root).returncode == 0
        wait_for(lambda: relpath in head_files(ws_root) and "status: closed" in git(ws_root, "show", f"HEAD:{relpath}"),
                 timeout=30)
        calls = [ln for ln in (ws_root / "logs" / "tool-calls.md").read_text(encoding="utf-8").splitlines() if sid in ln]
        assert [c.split(" | ")[2:4] for c in calls] == [["Bash", "ok"], ["Read", "error"],
                                                        ["mcp__kbsync__write_section", "ok"]]
        shown = json.loads(cli("board", "show", KEY, "--json", ws=ws_root).stdout)
        assert shown["feedback"]["applied"] == 1
        settings = json.loads((project / ".claude" / "settings.json").read_text(encoding="utf-8"))
        assert settings["model"] == "sonnet" and settings["hooks"]["PreToolUse"] == OTHERS["hooks"]["PreToolUse"]
        assert settings["hooks"]["Stop"][0] == OTHERS["hooks"]["Stop"][0]
    finally:
        daemon.stop()
    assert cli("assist", "uninstall", "claude-code", "--project", str(project), ws=ws_root).returncode == 0
    assert json.loads((project / ".claude" / "settings.json").read_text(encoding="utf-8")) == OTHERS
