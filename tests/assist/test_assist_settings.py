"""`kbsync assist install|uninstall|status` on a real settings file that already holds other hooks and
settings: kbsync's hooks merged in, idempotent, removed exactly, everything else kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.cli import Cli

OTHERS = {
    "$schema": "https://json.schemastore.org/claude-code-settings.json",
    "model": "opus",
    "permissions": {"allow": ["Bash(npm run lint)"], "deny": ["Read(./.env)"]},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./scripts/guard.sh"}]}],
        "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "cat NOTES.md"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "say done", "timeout": 5}]}],
    },
    "env": {"FOO": "bar"},
}
EVENTS = {"SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    (root / ".claude").mkdir(parents=True)
    (root / ".claude" / "settings.json").write_text(json.dumps(OTHERS, indent=4) + "\n", encoding="utf-8")
    return root


def settings(project: Path) -> dict:  # type: ignore[type-arg]
    return json.loads((project / ".claude" / "settings.json").read_text(encoding="utf-8"))


def ours(data: dict) -> dict[str, list[str]]:  # type: ignore[type-arg]
    return {event: [h["command"] for g in groups for h in g["hooks"] if "assist hook" in h["command"]]
            for event, groups in data["hooks"].items()}


def test_install_merges_the_hooks_and_keeps_everything_else(ws_root: Path, project: Path, cli: Cli) -> None:
    done = cli("assist", "install", "claude-code", "--project", str(project), "--json", ws=ws_root)
    assert done.returncode == 0, done.stderr
    [state] = json.loads(done.stdout)
    assert state["changed"] is True and {h["event"] for h in state["hooks"]} == EVENTS
    assert state["backup"] and json.loads(Path(state["backup"]).read_text(encoding="utf-8")) == OTHERS
    now = settings(project)
    assert {k: v for k, v in now.items() if k != "hooks"} == {k: v for k, v in OTHERS.items() if k != "hooks"}
    for event, groups in OTHERS["hooks"].items():
        assert now["hooks"][event][:len(groups)] == groups  # the others' hooks first, untouched
    commands = ours(now)
    assert all(len(commands[e]) == 1 for e in EVENTS)
    assert commands["Stop"][0].endswith(f"-w {ws_root} assist hook claude-code Stop")
    assert list(now) == list(OTHERS)  # key order kept


def test_install_twice_changes_nothing_and_uninstall_removes_exactly_what_it_added(
        ws_root: Path, project: Path, cli: Cli) -> None:
    assert cli("assist", "install", "claude-code", "--project", str(project), ws=ws_root).returncode == 0
    once = (project / ".claude" / "settings.json").read_bytes()
    again = cli("assist", "install", "claude-code", "--project", str(project), "--json", ws=ws_root)
    assert json.loads(again.stdout)[0]["changed"] is False
    assert (project / ".claude" / "settings.json").read_bytes() == once
    gone = cli("assist", "uninstall", "claude-code", "--project", str(project), "--json", ws=ws_root)
    assert gone.returncode == 0 and json.loads(gone.stdout)[0]["hooks"] == []
    assert settings(project) == OTHERS
    assert cli("assist", "status", "claude-code", "--project", str(project), ws=ws_root, env={"HOME": str(project)}
               ).returncode == 1  # nothing installed anywhere


def test_status_names_each_file_and_its_hooks(ws_root: Path, project: Path, tmp_path: Path, cli: Cli) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home)}
    assert cli("assist", "install", "claude-code", "--user", ws=ws_root, env=env).returncode == 0
    shown = cli("assist", "status", "claude-code", "--project", str(project), "--json", ws=ws_root, env=env)
    assert shown.returncode == 0
    by_path = {s["path"]: s for s in json.loads(shown.stdout)}
    assert by_path[str(project / ".claude" / "settings.json")]["hooks"] == []
    assert {h["event"] for h in by_path[str(home / ".claude" / "settings.json")]["hooks"]} == EVENTS


def test_codex_gets_its_own_file_and_events(ws_root: Path, tmp_path: Path, cli: Cli) -> None:
    done = cli("assist", "install", "codex", "--project", str(tmp_path), "--json", ws=ws_root)
    assert done.returncode == 0, done.stderr
    data = json.loads((tmp_path / ".codex" / "hooks.json").read_text(encoding="utf-8"))
    assert set(ours(data)) == {"SessionStart", "UserPromptSubmit", "Stop"}
    assert "assist hook codex Stop" in ours(data)["Stop"][0]


def test_a_moved_workspace_updates_the_hook_in_place(ws_root: Path, project: Path, tmp_path: Path, cli: Cli) -> None:
    from kbsync.app.workspace import init_workspace

    other = tmp_path / "other-ws"
    init_workspace(other)
    assert cli("assist", "install", "claude-code", "--project", str(project), ws=ws_root).returncode == 0
    assert cli("assist", "install", "claude-code", "--project", str(project), ws=other).returncode == 0
    commands = ours(settings(project))
    assert all(len(c) == 1 and f"-w {other} " in c[0] for c in (commands[e] for e in EVENTS))


@pytest.mark.parametrize(("text", "says"), [
    ('{"hooks": {"Stop": [}', ":1: not valid JSON"),
    ('["a list"]', "not a JSON object"),
    ('{"hooks": {"Stop": {"hooks": []}}}', "`hooks.Stop` is not a JSON array"),
])
def test_a_settings_file_kbsync_cannot_read_is_left_alone(ws_root: Path, project: Path, cli: Cli, text: str,
                                                          says: str) -> None:
    path = project / ".claude" / "settings.json"
    path.write_text(text, encoding="utf-8")
    done = cli("assist", "install", "claude-code", "--project", str(project), ws=ws_root)
    assert done.returncode == 2 and says in done.stderr and str(path) in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert path.read_text(encoding="utf-8") == text
