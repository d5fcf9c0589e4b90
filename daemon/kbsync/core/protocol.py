"""The file protocol as data and pure functions: layout, ids, paths, fields, headings."""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Mapping

if TYPE_CHECKING:
    from kbsync.config import Config

# ---- layout -------------------------------------------------------------

INDEX_MD: Final = "index.md"
BOARD_MD: Final = "LEARNING_BOARD.md"
SESSIONS_DIR: Final = "sessions"
MEMORY_DIR: Final = "memory"
FACTS_MD: Final = "memory/facts.md"
PREFERENCES_MD: Final = "memory/preferences.md"
ENTITIES_DIR: Final = "memory/entities"
ARTIFACTS_DIR: Final = "artifacts"
TOOL_CALLS_LOG: Final = "logs/tool-calls.md"
ERRORS_LOG: Final = "logs/errors.md"
CANDIDATES_DIR: Final = "candidates"
STATE_DIR: Final = ".kbsync"
BACKUP_DIR: Final = ".kbsync/backup"
WORKSPACE_LOCK: Final = ".kbsync/workspace.lock"
APPEND_ONLY: Final = (INDEX_MD, TOOL_CALLS_LOG, ERRORS_LOG)
IGNORED_DIRS: Final = frozenset({".git", STATE_DIR})
TEMP_SUFFIX: Final = ".tmp"
LOCK_SUFFIX: Final = ".lock"
MAX_FILE_BYTES: Final = 4 * 1024 * 1024
MAX_APPEND_ONLY_BYTES: Final = 256 * 1024 * 1024  # index.md and the logs grow with the workspace


def max_bytes(relpath: str) -> int:
    """The size over which a file is refused as input: larger for the append-only files."""
    return MAX_APPEND_ONLY_BYTES if relpath in APPEND_ONLY else MAX_FILE_BYTES

INDEX_HEADER: Final = "| 日期 | 标题 | 标签 | 摘要 | 路径 |\n| --- | --- | --- | --- | --- |\n"

# ---- sessions -----------------------------------------------------------

SESSION_FIELDS: Final = (
    "id", "ts", "role", "parent", "tags", "model",
    "turns", "tokens_in", "tokens_out", "status", "summary", "title",
)
REQUIRED_FIELDS: Final = ("id", "ts", "role", "tags", "status", "summary")
INT_FIELDS: Final = ("turns", "tokens_in", "tokens_out")
# A count has at most this many digits: within the smallest integer-string limit Python can be set to (640),
# so no value is ever refused by the interpreter instead of by the check (docs/protocol.md).
MAX_INT_DIGITS: Final = 600
ROLES: Final = ("user", "assistant", "system", "tool")
STATUSES: Final = ("open", "closed", "conflict")
MAX_TAGS: Final = 5
MAX_SUMMARY: Final = 80
SECTIONS: Final = ("用户输入", "我的判断", "工具调用", "结论", "待办")

BUILTIN_SYNONYMS: Final[Mapping[str, tuple[str, ...]]] = {
    "待办": ("后续", "后续事项", "下一步", "To-Do", "TODO", "next steps"),
    "结论": ("总结", "小结"),
}

BOARD_SECTIONS: Final = ("长期说明", "长期趋势", "学习记录")

ID_RE: Final = re.compile(r"^(\d{8})-(\d{4})-([0-9a-f]{7})$")
TS_RE: Final = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$"
)
SESSION_NAME_RE: Final = re.compile(r"^(\d{2})(\d{2})-([0-9a-f]{7})(?:-(.*))?\.md$")
DATE_FOLDER_RE: Final = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")  # sessions/<YYYY-MM-DD>/
CONFLICT_RE: Final = re.compile(r"\.conflict-(\d{8}T\d{6}Z)((?:-[0-9a-z]+)*)\.md$")
MACHINE_ID_RE: Final = re.compile(r"^[0-9a-f]{6}$")

_UNSAFE_TITLE = re.compile(r'[/\\:*?"<>|\x00-\x1f\x7f]')
_DASHES = re.compile(r"-{2,}")
MAX_TITLE: Final = 20


def h7(raw_session_id: str) -> str:
    """First 7 hex digits of SHA-1 of the caller's raw session id."""
    return hashlib.sha1(raw_session_id.encode("utf-8")).hexdigest()[:7]


def title_slug(title: str) -> str:
    """The file-name form of a title: at most 20 characters, safe on common systems."""
    text = unicodedata.normalize("NFC", title).strip()
    text = _UNSAFE_TITLE.sub("", text)
    text = re.sub(r"\s", "-", text)
    text = _DASHES.sub("-", text)[:MAX_TITLE]
    return _DASHES.sub("-", text).strip("-")


@dataclass(frozen=True)
class Timestamp:
    """The parts of an ISO 8601 timestamp, kept as written."""

    date: str  # YYYY-MM-DD
    hhmm: str  # HHMM
    offset: str | None  # as written, e.g. "+08:00" or "Z"; None when absent
    spaced: bool = False  # a space between date and time, where ISO 8601 has `T`


@functools.lru_cache(maxsize=64)  # a file's checks ask for its ts more than once
def parse_ts(value: str) -> Timestamp | None:
    m = TS_RE.match(value)
    if not m:
        return None
    y, mo, d, hh, mm, _ss, off = m.groups()
    return Timestamp(f"{y}-{mo}-{d}", f"{hh}{mm}", off, value[10] == " ")


def iso_ts(value: str, default_offset: str) -> str:
    """`value` in the ISO 8601 form the protocol writes: `T` between date and time, and an offset (the default
    one where it had none); every other character as written."""
    ts = parse_ts(value)
    if ts is None:
        return value
    fixed = value[:10] + "T" + value[11:] if ts.spaced else value
    return fixed if ts.offset else fixed + default_offset


def session_id(ts: str, raw_session_id: str) -> str:
    """`YYYYMMDD-HHMM-<h7>` from the creation time as written in `ts`."""
    parts = parse_ts(ts)
    if parts is None:
        raise ValueError(f"not an ISO 8601 timestamp: {ts!r}")
    return f"{parts.date.replace('-', '')}-{parts.hhmm}-{h7(raw_session_id)}"


def session_relpath(sid: str, title: str) -> str:
    """`sessions/YYYY-MM-DD/HHMM-<h7>-<title>.md`; a pure function of id and title."""
    m = ID_RE.match(sid)
    if not m:
        raise ValueError(f"not a session id: {sid!r}")
    day, hhmm, short = m.groups()
    folder = f"{day[:4]}-{day[4:6]}-{day[6:]}"
    slug = title_slug(title)
    name = f"{hhmm}-{short}-{slug}.md" if slug else f"{hhmm}-{short}.md"
    return f"{SESSIONS_DIR}/{folder}/{name}"


@functools.lru_cache(maxsize=64)  # a file's checks ask for its id more than once
def id_from_relpath(relpath: str) -> str | None:
    """The session id that a session file's folder and name encode, if they do."""
    parts = relpath.replace("\\", "/").split("/")
    if len(parts) != 3 or parts[0] != SESSIONS_DIR:
        return None
    folder, name = parts[1], parts[2]
    m = SESSION_NAME_RE.match(CONFLICT_RE.sub(".md", name))
    fm = DATE_FOLDER_RE.match(folder)
    if not m or not fm:
        return None
    hh, mm, short = m.group(1), m.group(2), m.group(3)
    return f"{''.join(fm.groups())}-{hh}{mm}-{short}"


def id_prefix(sid: str) -> str:
    """The relative path prefix every file of this session id starts with."""
    m = ID_RE.match(sid)
    if not m:
        raise ValueError(f"not a session id: {sid!r}")
    day, hhmm, short = m.groups()
    return f"{SESSIONS_DIR}/{day[:4]}-{day[4:6]}-{day[6:]}/{hhmm}-{short}"


def is_conflict_copy(relpath: str) -> bool:
    return bool(CONFLICT_RE.search(relpath))


def conflict_name(relpath: str, utc_stamp: str, machine: str = "") -> str:
    """`<stem>.conflict-<UTC yyyymmddTHHMMSSZ>-<machine id>.md` beside the file; a copy of a copy is named
    after the original file, so copies never nest."""
    original = original_of(relpath)
    stem = original[:-3] if original.endswith(".md") else original
    return f"{stem}.conflict-{utc_stamp}{'-' + machine if machine else ''}.md"


def original_of(relpath: str) -> str:
    """The file a conflict copy stands beside (`relpath` itself when it is no copy); nested copies too."""
    while (m := CONFLICT_RE.search(relpath)) is not None:
        relpath = relpath[: m.start()] + ".md"
    return relpath


@dataclass(frozen=True)
class CopyName:
    """What a conflict copy's name says: the file it belongs to, when (UTC) and on which machine it was made."""

    original: str
    stamp: str  # yyyymmddTHHMMSSZ
    machine: str | None  # None for copies named before machine ids


def parse_conflict_name(relpath: str) -> CopyName | None:
    m = CONFLICT_RE.search(relpath)
    if m is None:
        return None
    tail = [part for part in m.group(2).split("-") if part]
    machine = next((part for part in tail if MACHINE_ID_RE.match(part)), None)
    return CopyName(original_of(relpath), m.group(1), machine)


FileKind = str  # "session" | "board" | "index" | "memory" | "log" | "artifact" | "candidate" | "other"


def classify(relpath: str) -> FileKind:
    """Which protocol rules apply to a workspace-relative path."""
    p = relpath.replace("\\", "/")
    if p == INDEX_MD:
        return "index"
    if p == BOARD_MD or (p.startswith("LEARNING_BOARD.conflict-") and p.endswith(".md")):
        return "board"
    if not p.endswith(".md"):
        return "other"
    top = p.split("/", 1)[0]
    if top == SESSIONS_DIR:
        return "session"
    kinds = {MEMORY_DIR: "memory", "logs": "log", ARTIFACTS_DIR: "artifact", CANDIDATES_DIR: "candidate"}
    return kinds.get(top, "other")


# Where the protocol's files live, as git pathspecs (a folder stands for everything under it).
PROTOCOL_PATHSPECS: Final = (INDEX_MD, BOARD_MD, "LEARNING_BOARD.conflict-*.md", SESSIONS_DIR, MEMORY_DIR, "logs",
                             ARTIFACTS_DIR, CANDIDATES_DIR)


def is_protocol_file(relpath: str) -> bool:
    """Whether the protocol's rules apply to the path (kbsync commits it whatever .gitignore says)."""
    return classify(relpath) != "other"


def canonical_heading(name: str, table: Mapping[str, str]) -> str:
    """The section a heading name means: a protocol heading, a synonym of one (case-insensitive), or itself."""
    return name if name in SECTIONS else table.get(name.casefold(), name)


def synonyms_table(cfg: Config) -> dict[str, str]:
    """Lower-cased heading synonym -> canonical heading, built-ins merged with config (ConfigError naming
    `protocol.synonyms` for a synonym of a heading the protocol does not have)."""
    from kbsync.errors import ConfigError

    table: dict[str, str] = {}
    for canon, builtin in BUILTIN_SYNONYMS.items():
        for name in builtin:
            table[name.casefold()] = canon
    for canon, names in cfg.protocol.synonyms.items():
        if canon not in SECTIONS:
            raise ConfigError(
                f"protocol.synonyms: {canon!r} is not a section heading; use one of {', '.join(SECTIONS)}",
                path=cfg.source,
            )
        for name in names:
            table[name.casefold()] = canon
    return table
