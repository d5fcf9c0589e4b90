"""Configuration: built-in defaults, an optional TOML file, and the workspace's location.

Every key has a default, so kbsync works with no config file at all. A wrong key or
value raises ConfigError naming the key and the file.
"""

from __future__ import annotations

import dataclasses
import os
import re
import tomllib
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kbsync.errors import ConfigError

DEFAULT_WORKSPACE = "~/kb"
WORKSPACE_ENV = "KBSYNC_WORKSPACE"
STATE_DIR = ".kbsync"
CONFIG_IN_WORKSPACE = f"{STATE_DIR}/config.toml"


@dataclass(frozen=True)
class ProtocolConfig:
    default_offset: str = "+08:00"
    synonyms: dict[str, list[str]] = field(default_factory=dict)
    max_session_kb: int = 60


@dataclass(frozen=True)
class DaemonConfig:
    quiet_ms: int = 300
    commit_every: str = "1h"
    author_name: str = "kbsync"
    author_email: str = "kbsync@localhost"
    lock_wait_s: float = 5.0
    lock_ttl_s: int = 120
    job_deadline_s: float = 600.0


@dataclass(frozen=True)
class SyncConfig:
    mode: str = "git"
    remote: str = "origin"
    branch: str = "main"
    every: str = "5m"
    max_retries: int = 8
    timeout_s: float = 60.0
    max_file_mb: float = 4.0  # a remote file over this (outside artifacts/) refuses the remote commit
    max_artifact_mb: float = 25.0  # the same for a file under artifacts/


@dataclass(frozen=True)
class GithubConfig:
    api_url: str = "https://api.github.com"
    repository: str = ""
    token_env: str = "GITHUB_TOKEN"


@dataclass(frozen=True)
class HookConfig:
    fix: bool = False


@dataclass(frozen=True)
class ScanConfig:
    every: str = "1d"
    sources: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class SearchConfig:
    per_source: int = 5
    rrf_k: int = 60
    semantic: bool = True
    semantic_passages: int = 2000
    semantic_every: str = "1m"
    semantic_weight: float = 1.5
    sources: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class ContextConfig:
    budget: int = 4000
    share_facts: float = 0.15
    share_passages: float = 0.40
    share_summaries: float = 0.25
    share_references: float = 0.0
    share_input: float = 0.60


@dataclass(frozen=True)
class AssistConfig:
    budget_tokens: int = 600


@dataclass(frozen=True)
class StatsConfig:
    dsn: str = ""


@dataclass(frozen=True)
class WebConfig:
    enabled: bool = True
    host: str = "127.0.0.1"
    port: int = 8420
    allow_remote: bool = False
    max_body_kb: int = 8192
    session_days: float = 30.0


@dataclass(frozen=True)
class Config:
    workspace: str | None = None
    protocol: ProtocolConfig = field(default_factory=ProtocolConfig)
    daemon: DaemonConfig = field(default_factory=DaemonConfig)
    sync: SyncConfig = field(default_factory=SyncConfig)
    github: GithubConfig = field(default_factory=GithubConfig)
    hook: HookConfig = field(default_factory=HookConfig)
    scan: ScanConfig = field(default_factory=ScanConfig)
    search: SearchConfig = field(default_factory=SearchConfig)
    context: ContextConfig = field(default_factory=ContextConfig)
    assist: AssistConfig = field(default_factory=AssistConfig)
    stats: StatsConfig = field(default_factory=StatsConfig)
    web: WebConfig = field(default_factory=WebConfig)
    source: str | None = None  # the file it was read from, for messages


_ENUMS = {"sync.mode": ("git", "github-api")}
_DURATION = re.compile(r"^(\d+(?:\.\d+)?)(ms|s|m|h|d)$")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_OFFSET = re.compile(r"^(Z|[+-]\d{2}:\d{2})$")


def parse_duration(text: str, *, key: str = "duration", source: str | None = None) -> float:
    """Seconds in a duration such as `300ms`, `5m`, `1h`, `1d`."""
    m = _DURATION.match(text.strip())
    if not m:
        raise ConfigError(f"{key} = {text!r} is not a duration; write e.g. 300ms, 5m, 1h or 1d", path=source)
    return float(m.group(1)) * _UNITS[m.group(2)]


def _type_ok(value: Any, hint: Any) -> bool:
    origin = typing.get_origin(hint)
    if origin is typing.Union or origin is getattr(__import__("types"), "UnionType"):
        return any(_type_ok(value, h) for h in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if origin is list:
        (item,) = typing.get_args(hint)
        return isinstance(value, list) and all(_type_ok(v, item) for v in value)
    if origin is dict:
        kt, vt = typing.get_args(hint)
        return isinstance(value, dict) and all(_type_ok(k, kt) and _type_ok(v, vt) for k, v in value.items())
    if hint is Any:
        return True
    return isinstance(value, hint)


def _build(cls: type[Any], data: dict[str, Any], prefix: str, source: str | None) -> Any:
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls) if f.name != "source"}
    values: dict[str, Any] = {}
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        if key not in names:
            raise ConfigError(f"unknown key {dotted!r}; see config.example.toml for the keys", path=source)
        hint = hints[key]
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            if not isinstance(value, dict):
                raise ConfigError(f"[{dotted}] must be a table", path=source)
            values[key] = _build(hint, value, f"{dotted}.", source)
            continue
        if not _type_ok(value, hint):
            raise ConfigError(f"{dotted} = {value!r} has the wrong type; expected {_hint_name(hint)}", path=source)
        allowed = _ENUMS.get(dotted)
        if allowed and value not in allowed:
            raise ConfigError(f"{dotted} = {value!r}; expected one of {', '.join(allowed)}", path=source)
        values[key] = value
    return cls(**values)


def _hint_name(hint: Any) -> str:
    return getattr(hint, "__name__", None) or str(hint).replace("typing.", "")


def _check(cfg: Config) -> None:
    src = cfg.source
    if not _OFFSET.match(cfg.protocol.default_offset):
        raise ConfigError(
            f"protocol.default_offset = {cfg.protocol.default_offset!r}; write it as +08:00, -05:00 or Z",
            path=src,
        )
    for key, text in (("daemon.commit_every", cfg.daemon.commit_every), ("sync.every", cfg.sync.every),
                      ("scan.every", cfg.scan.every), ("search.semantic_every", cfg.search.semantic_every)):
        parse_duration(text, key=key, source=src)
    if not 0 <= cfg.web.port <= 65535:
        raise ConfigError(f"web.port = {cfg.web.port}; give a port from 1 to 65535, or 0 for any free port", path=src)
    if not 0 < cfg.web.session_days <= 3650:
        raise ConfigError(f"web.session_days = {cfg.web.session_days}; give a number of days from 0 to 3650",
                          path=src)
    if cfg.assist.budget_tokens <= 0:
        raise ConfigError(f"assist.budget_tokens = {cfg.assist.budget_tokens}; give a positive number of tokens",
                          path=src)
    if not 0 < cfg.search.semantic_weight <= 10:
        raise ConfigError(f"search.semantic_weight = {cfg.search.semantic_weight}; give a number above 0, at most 10",
                          path=src)
    if cfg.search.semantic_passages < 0:
        raise ConfigError(f"search.semantic_passages = {cfg.search.semantic_passages}; give 0 or more passages",
                          path=src)
    for key, mb in (("sync.max_file_mb", cfg.sync.max_file_mb), ("sync.max_artifact_mb", cfg.sync.max_artifact_mb)):
        if not 0 < mb <= 4096:
            raise ConfigError(f"{key} = {mb}; give a size in MB above 0 and at most 4096", path=src)
    if cfg.web.max_body_kb <= 0:
        raise ConfigError(f"web.max_body_kb = {cfg.web.max_body_kb}; give a positive size in KB", path=src)


def parse_config(text: str, source: str | None = None) -> Config:
    """Pure: a Config from TOML text."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"not valid TOML ({exc}); fix the file", path=source) from exc
    cfg: Config = _build(Config, data, "", source)
    cfg = dataclasses.replace(cfg, source=source)
    _check(cfg)
    return cfg


def load_file(path: Path) -> Config:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ConfigError("config file not found; check --config", path=str(path)) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read config file ({exc})", path=str(path)) from exc
    return parse_config(text, str(path))


def is_workspace(folder: Path) -> bool:
    """Whether `folder` is a workspace: it holds `.kbsync/`, or the protocol's `index.md` and `sessions/`."""
    return (folder / STATE_DIR).is_dir() or ((folder / "index.md").is_file() and (folder / "sessions").is_dir())


def enclosing_workspace(start: Path) -> Path | None:
    """The nearest folder at or above `start` that is a workspace, as git finds a repository; None if none."""
    for folder in (start, *start.parents):
        if is_workspace(folder):
            return folder
    return None


def _current_folder() -> Path | None:
    try:
        return Path.cwd()
    except OSError:  # the current folder was deleted
        return None


def workspace_text(workspace_arg: str | None, cfg: Config | None) -> str:
    """Which workspace the options name: `-w`, else $KBSYNC_WORKSPACE, else the workspace that contains the
    current folder, else the config file's `workspace`, else ~/kb."""
    if workspace_arg or os.environ.get(WORKSPACE_ENV):
        return workspace_arg or os.environ[WORKSPACE_ENV]
    here = _current_folder()
    found = enclosing_workspace(here) if here is not None else None
    if found is not None:
        return str(found)
    return (cfg.workspace if cfg else None) or DEFAULT_WORKSPACE


def resolve(workspace_arg: str | None, config_arg: str | None) -> tuple[Path, Config]:
    """The workspace folder and its configuration, by the command-line contract.

    Workspace: see `workspace_text`. Config: `--config`, else <workspace>/.kbsync/config.toml, else defaults.
    """
    cfg = load_file(Path(config_arg).expanduser()) if config_arg else None
    root = Path(workspace_text(workspace_arg, cfg)).expanduser().absolute()
    if cfg is None:
        in_ws = root / CONFIG_IN_WORKSPACE
        cfg = load_file(in_ws) if in_ws.is_file() else Config()
    return root, cfg
