"""The command line as a user meets it: init, validate, repair, log, configuration, bad input, help and docs."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from helpers.cli import Cli
from helpers.core import new_workspace, one_line_error, save, snapshot
from kbsync.core import protocol
from kbsync.main import build_parser, command_modules, command_named, main

REPO = Path(__file__).resolve().parents[2]
REL = "sessions/2025-06-11/1432-a9993e3-合同.md"
VALID = """---
id: 20250611-1432-a9993e3
ts: 2025-06-11T14:32:07+08:00
role: assistant
parent: null
tags: [合同]
status: open
summary: "梳理"
---

## 用户输入

问题

## 我的判断

## 工具调用

## 结论

## 待办
"""
UTC_FIRST = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z ")


def _write(root: Path, rel: str, data: str | bytes, age_s: float = 0) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    if age_s:
        t = p.stat().st_mtime - age_s
        os.utime(p, (t, t))
    return p


def _tree(root: Path) -> dict[str, tuple[bytes | None, int]]:
    """Everything under `root`, .git included, folders too: content (None for a folder) and mtime_ns."""
    out: dict[str, tuple[bytes | None, int]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            out[p.relative_to(root).as_posix()] = (None if p.is_dir() else p.read_bytes(), p.lstat().st_mtime_ns)
    return out


# ---- init -----------------------------------------------------------------------------------

def test_init_creates_the_layout_ignores_union_merge_and_a_repository(tmp_path: Path, cli: Cli) -> None:
    root = tmp_path / "kb"
    proc = cli("init", ws=root)
    assert proc.returncode == 0, proc.stderr
    for rel in (protocol.INDEX_MD, protocol.BOARD_MD, protocol.FACTS_MD, protocol.PREFERENCES_MD,
                protocol.TOOL_CALLS_LOG, protocol.ERRORS_LOG):
        assert (root / rel).is_file(), rel
    for rel in (protocol.SESSIONS_DIR, protocol.ENTITIES_DIR, protocol.ARTIFACTS_DIR, protocol.CANDIDATES_DIR,
                protocol.STATE_DIR):
        assert (root / rel).is_dir(), rel
    assert (root / "index.md").read_text(encoding="utf-8") == protocol.INDEX_HEADER
    board = (root / protocol.BOARD_MD).read_text(encoding="utf-8")
    assert [ln for ln in board.splitlines() if ln.startswith("## ")] == [f"## {s}" for s in protocol.BOARD_SECTIONS]
    assert {".kbsync/", "*.tmp", "*.lock"} <= set((root / ".gitignore").read_text().split())
    attrs = subprocess.run(["git", "check-attr", "merge", "--", "index.md", "logs/errors.md", "logs/tool-calls.md",
                            "sessions/x.md"], cwd=root, capture_output=True, text=True, check=True).stdout
    assert attrs.splitlines() == ["index.md: merge: union", "logs/errors.md: merge: union",
                                  "logs/tool-calls.md: merge: union", "sessions/x.md: merge: unspecified"]
    top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=root, capture_output=True, text=True, check=True)
    assert Path(top.stdout.strip()) == root.resolve()
    assert cli("validate", ws=root).returncode == 0
    ignored = subprocess.run(["git", "check-ignore", ".kbsync/x", "a.md.tmp", "a.md.lock"], cwd=root,
                             capture_output=True, text=True)
    assert ignored.stdout.split() == [".kbsync/x", "a.md.tmp", "a.md.lock"]


def test_init_twice_changes_no_byte_and_no_mtime(tmp_path: Path, cli: Cli) -> None:
    root = tmp_path / "kb"
    assert cli("init", ws=root).returncode == 0
    before = _tree(root)
    second = cli("init", ws=root)
    assert second.returncode == 0
    assert "nothing changed" in second.stdout
    assert _tree(root) == before


def test_init_on_an_existing_repository_keeps_what_is_there(tmp_path: Path, cli: Cli) -> None:
    root = tmp_path / "kb"
    root.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "trunk"], cwd=root, check=True)
    _write(root, ".gitignore", "node_modules/\n")
    _write(root, "index.md", protocol.INDEX_HEADER + "| 2025-06-11 | t | a | s | sessions/x.md |\n")
    kept = {rel: (root / rel).read_bytes() for rel in (".gitignore", "index.md")}
    proc = cli("init", ws=root)
    assert proc.returncode == 0
    assert {rel: (root / rel).read_bytes() for rel in kept} == kept
    head = subprocess.run(["git", "symbolic-ref", "HEAD"], cwd=root, capture_output=True, text=True).stdout
    assert head.strip() == "refs/heads/trunk"
    assert "missing '.kbsync/'" in proc.stderr and "Traceback" not in proc.stderr
    assert (root / protocol.BOARD_MD).is_file()


@pytest.mark.parametrize("args", [["validate"], ["repair"], ["index", "rebuild"], ["log", "error", "x"],
                                  ["session", "save"]], ids=" ".join)
def test_a_missing_workspace_is_a_usage_error_not_a_silent_success(tmp_path: Path, args: list[str], cli: Cli) -> None:
    missing = tmp_path / "typo"
    proc = cli(*args, ws=missing, stdin='{"session_id": "a"}')
    one_line_error(proc, str(missing))
    assert proc.returncode == 2 and "init" in proc.stderr
    assert not missing.exists()


# ---- validate --------------------------------------------------------------------------------

@pytest.fixture()
def ws_root(tmp_path: Path) -> Path:
    return new_workspace(tmp_path / "ws").root


def test_validate_exit_codes_and_finding_lines(ws_root: Path, cli_process: Cli) -> None:
    _write(ws_root, REL, VALID)
    assert cli_process("validate", ws=ws_root).returncode == 0
    _write(ws_root, REL, VALID.replace('summary: "梳理"', f'summary: "{"长" * 100}"'))
    warned = cli_process("validate", ws=ws_root)
    assert warned.returncode == 0 and f"{REL}:8: warning:" in warned.stdout
    _write(ws_root, REL, VALID.replace("role: assistant", "role: boss"))
    bad = cli_process("validate", ws=ws_root)
    assert bad.returncode == 1
    assert re.fullmatch(rf"{re.escape(REL)}:4: error: .*boss.*", bad.stdout.strip())
    assert cli_process("validate", "--no-such-option", ws=ws_root).returncode == 2


def test_validate_json(ws_root: Path, cli: Cli) -> None:
    _write(ws_root, REL, VALID.replace("role: assistant", "role: boss"))
    proc = cli("validate", "--json", ws=ws_root)
    assert proc.returncode == 1
    findings = json.loads(proc.stdout)
    assert findings == [{"path": REL, "line": 4, "level": "error", "message": findings[0]["message"]}]
    _write(ws_root, "sessions/2025-06-11/1433-a9993e3-合同.md", VALID.replace("role: assistant", "role: boss"))
    two = cli("validate", "--json", ws=ws_root)  # written as the files are checked: as one json.dump writes it
    assert two.stdout == json.dumps(json.loads(two.stdout), ensure_ascii=False, indent=2) + "\n"
    assert len(json.loads(two.stdout)) >= 2
    (ws_root / "sessions/2025-06-11/1433-a9993e3-合同.md").unlink()
    _write(ws_root, REL, VALID)
    clean = cli("validate", "--json", ws=ws_root)
    assert clean.returncode == 0 and clean.stdout == "[]\n"


def test_validate_walk_skips_state_git_temp_and_lock_files_but_checks_conflict_copies(ws_root: Path, cli: Cli) -> None:
    broken = VALID.replace("role: assistant", "role: boss")
    for rel in (".kbsync/backup/20250101T000000Z/" + REL, "sessions/2025-06-11/.1432-a9993e3-合同.md.0123abcd.tmp",
                REL + ".lock", ".git/notes.md"):
        _write(ws_root, rel, broken)
    _write(ws_root, REL, VALID)
    assert cli("validate", ws=ws_root).stdout == ""
    copy = protocol.conflict_name(REL, "20250611T063207Z")
    _write(ws_root, copy, broken)
    proc = cli("validate", ws=ws_root)
    assert proc.returncode == 1 and proc.stdout.startswith(f"{copy}:")


# ---- bad input -------------------------------------------------------------------------------

BAD_CONTENT = {
    "not-utf8": ("---\nid: x\n".encode() + b"\xff\xfe caf\xe9\n", "UTF-8"),
    "binary": (b"---\nid: x\x00\x01\n---\n", "binary"),
    "5MB": (b"---\n" + b"a" * (5 * 1024 * 1024) + b"\n", "limit"),
}


@pytest.mark.parametrize("command", ["validate", "repair"])
@pytest.mark.parametrize("kind", sorted(BAD_CONTENT))
def test_bad_files_are_one_line_errors_and_nothing_is_written(ws_root: Path, command: str, kind: str, cli: Cli) -> None:
    data, words = BAD_CONTENT[kind]
    _write(ws_root, REL, data)
    before = snapshot(ws_root)
    for args in ([REL], []):  # named, and found by the walk
        proc = cli(command, *args, ws=ws_root, cwd=ws_root)
        assert proc.returncode == 1 and "Traceback" not in proc.stderr + proc.stdout
        lines = proc.stdout.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"{REL}:") and " error: " in lines[0] and words in lines[0]
    assert snapshot(ws_root) == before


@pytest.mark.parametrize("command", ["validate", "repair"])
def test_paths_leading_out_of_the_workspace_are_refused(ws_root: Path, tmp_path: Path, command: str, cli: Cli) -> None:
    outside = _write(tmp_path, "outside/x.md", VALID.replace("role: assistant", "role: boss"))
    link = ws_root / "sessions/2025-06-11/1432-a9993e3-link.md"
    link.parent.mkdir(parents=True)
    link.symlink_to(outside)
    before = snapshot(ws_root), outside.read_bytes(), outside.stat().st_mtime_ns
    for given in (str(outside), "sessions/2025-06-11/1432-a9993e3-link.md", "../outside/x.md"):
        proc = cli(command, given, ws=ws_root, cwd=ws_root)
        one_line_error(proc, given)
        assert proc.returncode == 2
    walked = cli(command, ws=ws_root)
    assert walked.returncode == 1 and "Traceback" not in walked.stderr
    assert walked.stdout.startswith("sessions/2025-06-11/1432-a9993e3-link.md:1: error:") and "symlink" in walked.stdout
    assert (snapshot(ws_root), outside.read_bytes(), outside.stat().st_mtime_ns) == before


def test_missing_file_and_folder_arguments(ws_root: Path, cli: Cli) -> None:
    for command in ("validate", "repair"):
        proc = cli(command, "sessions/none.md", ws=ws_root, cwd=ws_root)
        assert proc.returncode != 0 and "Traceback" not in proc.stderr
        assert "sessions/none.md" in proc.stdout + proc.stderr


# ---- repair ----------------------------------------------------------------------------------

def test_repair_dry_run_prints_a_diff_and_writes_nothing(ws_root: Path, cli: Cli) -> None:
    _write(ws_root, REL, VALID.replace("status: open", "status： open"))
    before = snapshot(ws_root)
    proc = cli("repair", "--dry-run", ws=ws_root)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.splitlines()
    assert out[:2] == [f"--- a/{REL}", f"+++ b/{REL}"]
    assert "-status： open" in out and "+status: open" in out
    assert snapshot(ws_root) == before


def test_repair_of_a_valid_file_keeps_bytes_and_mtime(ws_root: Path, cli: Cli) -> None:
    _write(ws_root, REL, VALID, age_s=3600)
    before = snapshot(ws_root)
    for args in ([REL], []):
        proc = cli("repair", *args, ws=ws_root, cwd=ws_root)
        assert proc.returncode == 0 and proc.stdout == ""
    assert snapshot(ws_root) == before
    assert not (ws_root / protocol.BACKUP_DIR).exists()


def test_repair_fixes_backs_up_and_a_second_run_changes_nothing(ws_root: Path, cli: Cli) -> None:
    dirty = VALID.replace("status: open", "status： open")
    _write(ws_root, REL, dirty)
    proc = cli("repair", ws=ws_root)
    assert proc.returncode == 0 and proc.stdout.startswith(f"{REL}: repaired")
    assert (ws_root / REL).read_text(encoding="utf-8") == VALID
    assert [p.read_text(encoding="utf-8") for p in (ws_root / protocol.BACKUP_DIR).glob(f"*/{REL}")] == [dirty]
    after = snapshot(ws_root)
    assert cli("repair", ws=ws_root).stdout == ""
    assert snapshot(ws_root) == after


# ---- configuration ---------------------------------------------------------------------------

def test_config_file_offset_and_synonyms(ws_root: Path, tmp_path: Path, cli: Cli) -> None:
    conf = _write(tmp_path, "conf/kbsync.toml",
                  '[protocol]\ndefault_offset = "-05:00"\n\n[protocol.synonyms]\n"待办" = ["跟进事项"]\n')
    saved = cli("--config", str(conf), "session", "save", "--json", ws=ws_root, stdin=json.dumps({"session_id": "s1", "ts": "2025-06-11T09:00:00"}))
    assert saved.returncode == 0, saved.stderr
    assert json.loads(saved.stdout)["ts"] == "2025-06-11T09:00:00-05:00"
    followup = VALID.replace("## 待办\n", "## 跟进事项\n\n- 一件事\n")
    _write(ws_root, REL, followup)
    plain = cli("repair", "--dry-run", REL, ws=ws_root, cwd=ws_root)
    assert "-## 跟进事项" not in plain.stdout
    fixed = cli("--config", str(conf), "repair", REL, ws=ws_root, cwd=ws_root)
    assert fixed.returncode == 0, fixed.stdout
    assert (ws_root / REL).read_text(encoding="utf-8") == VALID.replace("## 待办\n", "## 待办\n\n- 一件事\n")


def test_workspace_config_is_read_by_default(ws_root: Path) -> None:
    _write(ws_root, ".kbsync/config.toml", '[protocol]\ndefault_offset = "Z"\n')
    saved = save(ws_root, {"session_id": "s1", "ts": "2025-06-11T09:00:00"}, "--json")
    assert json.loads(saved.stdout)["ts"] == "2025-06-11T09:00:00Z"


def test_workspace_from_environment_and_from_the_config_file(tmp_path: Path, cli: Cli) -> None:
    env_root = tmp_path / "from-env"
    proc = cli("init", env={"KBSYNC_WORKSPACE": str(env_root)}, cwd=tmp_path)
    assert proc.returncode == 0 and (env_root / "index.md").is_file()
    logged = cli("log", "error", "via env", env={"KBSYNC_WORKSPACE": str(env_root)}, cwd=tmp_path)
    assert logged.returncode == 0
    assert (env_root / protocol.ERRORS_LOG).read_text(encoding="utf-8").endswith("| via env\n")
    conf_root = tmp_path / "from-config"
    conf = _write(tmp_path, "c.toml", f'workspace = "{conf_root.as_posix()}"\n')
    assert cli("--config", str(conf), "init", cwd=tmp_path).returncode == 0
    assert (conf_root / "index.md").is_file()
    # -w wins over the environment
    other = tmp_path / "from-flag"
    assert cli("init", ws=other, env={"KBSYNC_WORKSPACE": str(env_root)}).returncode == 0
    assert (other / "index.md").is_file()


@pytest.mark.parametrize("text, key", [
    ("[protocol]\nbogus = 1\n", "protocol.bogus"),
    ('[protocol]\ndefault_offset = "8 hours"\n', "protocol.default_offset"),
    ('[protocol]\ndefault_offset = 8\n', "protocol.default_offset"),
    ('[protocol.synonyms]\n"不存在" = ["x"]\n', "protocol.synonyms"),
    ("[daemon]\nlock_wait_s = \"soon\"\n", "daemon.lock_wait_s"),
    ("[protocol\n", "TOML"),
])
def test_config_errors_name_the_key_and_the_file(ws_root: Path, tmp_path: Path, text: str, key: str, cli: Cli) -> None:
    conf = _write(tmp_path, "bad.toml", text)
    before = snapshot(ws_root)
    for args in (["validate"], ["repair"], ["session", "save"]):
        proc = cli("--config", str(conf), *args, ws=ws_root, stdin='{"session_id": "a"}')
        one_line_error(proc, str(conf))
        assert proc.returncode == 2 and key in proc.stderr
    assert snapshot(ws_root) == before


def test_missing_config_file(ws_root: Path, tmp_path: Path, cli: Cli) -> None:
    proc = cli("--config", str(tmp_path / "nope.toml"), "validate", ws=ws_root)
    one_line_error(proc, "nope.toml")
    assert proc.returncode == 2


# ---- logs ------------------------------------------------------------------------------------

def test_log_tool_call_and_error_append_one_utc_line_each(ws_root: Path, cli: Cli) -> None:
    tc = cli("log", "tool-call", "--session", "20250611-1432-a9993e3", "--tool", "web_search", "--status", "error", "--detail", "timeout\nafter 30 s | retried", ws=ws_root)
    assert tc.returncode == 0, tc.stderr
    cli("log", "tool-call", "--session", "20250611-1432-a9993e3", "--tool", "read_file", ws=ws_root)
    lines = (ws_root / protocol.TOOL_CALLS_LOG).read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 and all(UTC_FIRST.match(ln) for ln in lines)
    assert lines[0].endswith("| 20250611-1432-a9993e3 | web_search | error | timeout after 30 s \\| retried")
    assert lines[1].endswith("| read_file | ok")
    assert tc.stdout.strip() == lines[0]
    for msg in ("first error", "second\nerror"):
        assert cli("log", "error", msg, ws=ws_root).returncode == 0
    errors = (ws_root / protocol.ERRORS_LOG).read_text(encoding="utf-8").splitlines()
    assert len(errors) == 2 and all(UTC_FIRST.match(ln) for ln in errors)
    assert errors[1].endswith("| second error")
    assert cli("validate", ws=ws_root).returncode == 0


# ---- every command: --help, docs/cli.md -------------------------------------------------------

def _command_paths(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out.append(prefix + (name,))
                out.extend(_command_paths(sub, prefix + (name,)))
    return out


COMMANDS = _command_paths(build_parser())


def test_every_command_module_registers_a_command() -> None:
    top = {path[0] for path in COMMANDS}
    assert set(command_modules()) <= top | {"common"}
    assert {"init", "session", "log", "validate", "repair", "index"} <= top


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_every_command_has_help(path: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main([*path, "--help"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: kbsync {' '.join(path)}")


def test_help_from_a_real_process(cli_process: Cli) -> None:
    proc = cli_process("--help")
    assert proc.returncode == 0
    for path in COMMANDS:
        if len(path) == 1:
            assert path[0] in proc.stdout


@pytest.mark.parametrize("command", sorted(command_modules()))
def test_every_command_starts_as_a_process_of_its_own(command: str, cli_process: Cli) -> None:
    """Most tests call main() in the test's process (the `cli` fixture); each command also starts for real."""
    proc = cli_process(command, "--help")
    assert proc.returncode == 0 and proc.stdout.startswith(f"usage: kbsync {command}"), proc.stderr


def test_every_command_is_documented_in_docs_cli_md() -> None:
    doc = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    missing = [" ".join(path) for path in COMMANDS if f"kbsync {' '.join(path)}" not in doc]
    assert not missing, f"document these commands in docs/cli.md: {', '.join(missing)}"


@pytest.mark.parametrize("argv,expected", [
    (["sync"], "sync"),
    (["-w", "sync", "status", "--json"], "status"),  # a workspace folder named like a command is a value
    (["--workspace=ws", "-v", "commit", "-m", "x"], "commit"),
    (["--config", "c.toml", "session", "new"], "session"),
    (["-h", "sync"], None),
    (["--version"], None),
    (["nonsense"], None),
    ([], None),
])
def test_only_the_named_command_is_loaded(argv: list[str], expected: str | None) -> None:
    assert command_named(argv, command_modules()) == expected


def test_usage_errors_and_top_level_help_still_list_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["-h"], ["nonsense"]):
        with pytest.raises(SystemExit):
            main(argv)
        listed = capsys.readouterr()
        assert all(name in listed.out + listed.err for name in command_modules())
