"""config.example.toml documents every key with its default; errors name the key and the file."""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path
from typing import Any

import pytest

from kbsync.config import Config, load_file, parse_config, parse_duration
from kbsync.errors import ConfigError

EXAMPLE = Path(__file__).resolve().parent.parent / "config.example.toml"
EXAMPLES_NOT_DEFAULTS = {"protocol.synonyms"}  # shown with an example value


def leaves(obj: Any, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in dataclasses.fields(obj):
        if f.name == "source":
            continue
        value = getattr(obj, f.name)
        if dataclasses.is_dataclass(value):
            out.update(leaves(value, f"{prefix}{f.name}."))
        else:
            out[f"{prefix}{f.name}"] = value
    return out


def test_example_loads_and_shows_every_default() -> None:
    cfg = load_file(EXAMPLE)
    example, defaults = leaves(cfg), leaves(Config())
    text = EXAMPLE.read_text(encoding="utf-8")
    for key, default in defaults.items():
        name = key.rsplit(".", 1)[-1]
        documented = f"{name} =" in text or f"[[{key}]]" in text or f"[{key}]" in text
        assert documented, f"{key} is not documented in config.example.toml"
        if key not in EXAMPLES_NOT_DEFAULTS and key != "workspace":
            assert example[key] == default, f"{key}: example shows {example[key]!r}, default is {default!r}"
    for line in text.splitlines():
        if " = " in line and not line.lstrip().startswith("#") and not line.startswith('"'):
            assert "#" in line.split(" = ", 1)[1], f"key without a comment: {line}"
    tomllib.loads(text)


@pytest.mark.parametrize("text,key", [
    ("[daemon]\nquiet_ms = 'fast'\n", "daemon.quiet_ms"),
    ("[daemon]\nbogus = 1\n", "daemon.bogus"),
    ("[sync]\nmode = 'ftp'\n", "sync.mode"),
    ("[protocol]\ndefault_offset = '8'\n", "protocol.default_offset"),
    ("[daemon]\ncommit_every = 'hourly'\n", "daemon.commit_every"),
    ("nonsense = = 1\n", "TOML"),
    ("[sync]\nmax_file_mb = 0\n", "sync.max_file_mb"),
    ("[sync]\nmax_artifact_mb = -1\n", "sync.max_artifact_mb"),
])
def test_config_errors_name_the_key_and_the_file(text: str, key: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(text, "cfg.toml")
    assert key in str(info.value) and "cfg.toml" in str(info.value)
    assert info.value.exit_code == 2


def test_durations() -> None:
    assert parse_duration("300ms") == 0.3 and parse_duration("5m") == 300 and parse_duration("1h") == 3600
    assert parse_duration("1d") == 86400


# ---- which workspace: as git finds a repository ------------------------------------------------

def _where(cli: Any, *args: str, cwd: Path, env: dict[str, str] | None = None) -> str:
    proc = cli(*args, "status", "--json", cwd=cwd, env=env)
    assert proc.returncode in (0, 1), proc.stderr
    import json

    return str(json.loads(proc.stdout)["workspace"])


def test_the_workspace_containing_the_current_folder_is_found(tmp_path: Path, cli: Any) -> None:
    home, ws_b, elsewhere = tmp_path / "home", tmp_path / "wsB", tmp_path / "elsewhere"
    for folder in (home / "kb", ws_b, elsewhere):
        assert cli("-w", str(folder), "init").returncode == 0
    env = {"HOME": str(home)}
    deep = ws_b / "sessions" / "2025-06-11"
    deep.mkdir(parents=True)
    assert _where(cli, cwd=deep, env=env) == str(ws_b)  # walked up to the folder holding .kbsync/
    assert _where(cli, cwd=tmp_path, env=env) == str(home / "kb")  # in no workspace: ~/kb
    assert _where(cli, "-w", str(elsewhere), cwd=deep, env=env) == str(elsewhere)  # -w first
    env_ws = {**env, "KBSYNC_WORKSPACE": str(elsewhere)}
    assert _where(cli, cwd=deep, env=env_ws) == str(elsewhere)  # then $KBSYNC_WORKSPACE
    config = tmp_path / "kbsync.toml"
    config.write_text(f'workspace = "{elsewhere}"\n')
    assert _where(cli, "--config", str(config), cwd=deep, env=env) == str(ws_b)  # the current folder wins
    assert _where(cli, "--config", str(config), cwd=tmp_path, env=env) == str(elsewhere)  # over the config


def test_a_clone_without_kbsync_state_is_found_by_its_layout(tmp_path: Path, cli: Any) -> None:
    clone = tmp_path / "clone"
    (clone / "sessions").mkdir(parents=True)
    (clone / "index.md").write_text("| 日期 | 标题 | 标签 | 摘要 | 路径 |\n| --- | --- | --- | --- | --- |\n")
    assert _where(cli, cwd=clone / "sessions", env={"HOME": str(tmp_path / "home")}) == str(clone)


def test_sync_in_a_workspace_folder_syncs_that_one(tmp_path: Path, cli: Any) -> None:
    home, ws_b = tmp_path / "home", tmp_path / "wsB"
    assert cli("-w", str(ws_b), "init").returncode == 0
    proc = cli("sync", cwd=ws_b, env={"HOME": str(home)})
    assert proc.returncode == 2 and "no git remote 'origin'" in proc.stderr and str(ws_b) in proc.stderr
    assert not (home / "kb").exists()  # ~/kb was not touched, let alone synced
