"""The watermark scan: new or changed files of configured sources become candidate lists.

Sources are `[[scan.sources]]` tables: a `name` and either `path` (a folder, or a glob,
of Markdown/text files) or `repo` and `branch` (a local git repository). The
watermark of each source is kept in `.kbsync/scan/<name>.json`: for a folder, each
file's mtime, size and SHA-256 (so a touch without change, or a rename, is not
reported); for a repository, the last scanned commit. The watermark advances only
after the candidate list was written. Nothing is ever added to the board here.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Iterable, Iterator

from kbsync import parallel
from kbsync.board.sources import Changes, Counts, Found, folder_changes, folder_files, git_changes, resolve_path
from kbsync.config import Config
from kbsync.core import candidates, protocol
from kbsync.core.candidates import Candidate
from kbsync.core.detect import injection, secrets
from kbsync.core.detect.normalize import visible
from kbsync.errors import EXIT_ENVIRONMENT, ConfigError, InputError, KbsyncError
from kbsync.progress import Progress
from kbsync.store import fsio
from kbsync.store.guardededit import edit_file
from kbsync.store.workspace import Workspace

EXCERPT_CHARS: Final = 240
STATE_SUBDIR: Final = "scan"
_NAME_RE: Final = re.compile(r"^[\w.-]{1,40}$")
_TYPE_HINTS: Final = (
    ("踩坑", re.compile(r"坑|故障|失败|报错|复盘|超时|事故|bug|fail|error|incident|pitfall|outage|gotcha", re.I)),
    ("工具", re.compile(r"工具|命令|安装|插件|脚本|\btool|\bcli\b|install|plugin|library|command", re.I)),
    ("方法", re.compile(r"步骤|方法|流程|指南|清单|实践|how to|guide|checklist|steps|practice|workflow", re.I)),
)


class ScanWriteError(KbsyncError):
    """A candidate list could not be written; the source's watermark stays where it was."""

    exit_code = EXIT_ENVIRONMENT


@dataclass(frozen=True)
class Source:
    name: str
    path: str | None = None
    repo: str | None = None
    branch: str = "HEAD"


@dataclass
class SourceResult:
    source: str
    list_path: str | None = None
    candidates: list[Candidate] = field(default_factory=list)
    counts: Counts = field(default_factory=Counts)


# ---- configuration -------------------------------------------------------------

def sources(cfg: Config) -> list[Source]:
    """The configured sources, checked: a unique name, and `path` or `repo` (with an optional `branch`)."""
    out: list[Source] = []
    for i, raw in enumerate(cfg.scan.sources):
        where = f"scan.sources[{i}]"
        unknown = set(raw) - {"name", "path", "repo", "branch"}
        if unknown:
            raise ConfigError(f"{where}: unknown key {sorted(unknown)[0]!r}; use name, path, repo, branch", path=cfg.source)
        name = raw.get("name")
        if not isinstance(name, str) or not _NAME_RE.match(name):
            raise ConfigError(f"{where}: name must be letters, digits, '-', '_' or '.' (at most 40)", path=cfg.source)
        if ("path" in raw) == ("repo" in raw):
            raise ConfigError(f"{where} ({name}): give either path (a folder or glob) or repo", path=cfg.source)
        if any(not isinstance(raw.get(k, ""), str) for k in ("path", "repo", "branch")):
            raise ConfigError(f"{where} ({name}): path, repo and branch are strings", path=cfg.source)
        if name in (s.name for s in out):
            raise ConfigError(f"{where}: a source named {name!r} exists already", path=cfg.source)
        out.append(Source(name, raw.get("path"), raw.get("repo"), raw.get("branch", "HEAD")))
    return out


# ---- analysis -------------------------------------------------------------------------

def candidate_id(source: str, path: str, sha256: str) -> str:
    return "c-" + hashlib.sha256(f"{source}\0{path}\0{sha256}".encode()).hexdigest()[:10]


def _body(text: str) -> tuple[list[str], list[str]]:
    """(frontmatter lines, body lines)."""
    lines = text.split("\n")
    if lines and lines[0].strip() == "---":
        for i, line in enumerate(lines[1:], 1):
            if line.strip() == "---":
                return lines[1:i], lines[i + 1:]
    return [], lines


def _title(body: list[str], path: str) -> tuple[str, int]:
    """The first heading (else the first line) and its index in `body`; the file's stem when none."""
    for i, line in enumerate(body):
        if line.strip():
            return re.sub(r"^#+\s*", "", line.strip())[:60].strip() or Path(path).stem, i
    return Path(path).stem, -1


def _topic(front: list[str], path: str, source: str) -> str:
    for line in front:
        m = re.match(r"^tags:\s*\[?\s*([^,\]\s]+)", line)
        if m:
            return m.group(1).strip("'\"")
    parent = Path(path).parent.name
    return parent or source


def _suggest_type(text: str) -> str:
    return next((t for t, rx in _TYPE_HINTS if rx.search(text)), "观点")


def _excerpt(body: list[str], skip: int) -> str:
    """The body's words (but line `skip`'s) one space apart, invisible characters shown, cut at EXCERPT_CHARS;
    only as many lines are read as the excerpt needs."""
    words: list[str] = []
    size = 0
    for i, line in enumerate(body):
        if i != skip:
            got = line.split()
            words += got
            size += sum(map(len, got)) + len(got)
            if size > EXCERPT_CHARS + 1:  # already longer than the excerpt: the rest is cut off anyway
                break
    text = visible(" ".join(words))
    return text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS].rstrip() + "…"


def _has_secret(text: str) -> bool:
    return bool(secrets.scan_text("candidate.md", text, inline_allow=False))


def _offending(flags: list[injection.Flag], found: list[secrets.SecretFinding]) -> list[str]:
    secret_lines = {f.line for f in found}
    out = [f"第 {f.line} 行 [{f.family}]: " + ("(此行含密钥，已隐去)" if f.line in secret_lines or _has_secret(f.excerpt)
                                            else f"{f.excerpt} ({f.why})") for f in flags]
    out += [f"第 {f.line} 行 [secret: {f.rule}]: (密钥内容不抄录)" for f in found]
    return out


def analyse(source: str, f: Found) -> Candidate:
    """A candidate for one file: title, excerpt, suggested type and topic, flags. Secrets are never copied."""
    text = f.data.decode("utf-8", errors="replace").replace("\r\n", "\n")
    found_secrets = secrets.scan_text(f.path, text, inline_allow=False)  # a scanned file's marker allows nothing
    flags = injection.detect(text)
    front, body = _body(text)
    title, at = _title(body, f.path)
    if found_secrets:
        title = Path(f.path).stem if _has_secret(title) else title
        excerpt = "(摘录已略去：文件含密钥，请直接打开原文件审阅)"
    else:
        excerpt = _excerpt(body, at) or _excerpt(body, -1)
    names = ([candidates.FLAG_INJECTION] if flags else []) + ([candidates.FLAG_SECRET] if found_secrets else [])
    return Candidate(
        id=candidate_id(source, f.path, f.sha256), source=source, path=f.path, title=visible(title),
        source_date=f.date, type=_suggest_type(text[:4000]), topic=_topic(front, f.path, source),
        flags=tuple(names), excerpt=excerpt, offending=tuple(_offending(flags, found_secrets)),
    )


def analyse_all(source: str, found: Iterable[Found], total: int) -> list[Candidate]:
    """`analyse` for each file, in the order of `found`, showing progress out of `total` (the first scan of a
    large source takes a while). Each file is analysed on its own, so many files are analysed on every core
    (kbsync.parallel: batches in worker processes, the results joined in input order, exactly what a run
    in this process gives; `found` is taken as batches are handed out); a few files stay in this process."""
    out: list[Candidate] = []
    with Progress(f"scan {source}", total) as shown:
        for batch, got in parallel.batches(functools.partial(_analyse_batch, source), found):
            out += got
            shown.advance(len(batch))
    return out


def _analyse_batch(source: str, found: list[Found]) -> list[Candidate]:
    return [analyse(source, f) for f in found]


# ---- the scan -----------------------------------------------------------------------------

def _mark_path(ws: Workspace, name: str) -> Path:
    return ws.state_dir / STATE_SUBDIR / f"{name}.json"


def _load_mark(ws: Workspace, name: str) -> dict[str, Any]:
    p = _mark_path(ws, name)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise InputError(f"unreadable watermark ({exc}); delete it to rescan the source from scratch",
                         path=str(p)) from exc
    return data if isinstance(data, dict) else {}


def known_ids(ws: Workspace) -> set[str]:
    """Ids of every item in every candidate list (pending or decided): never proposed twice."""
    folder = ws.root / protocol.CANDIDATES_DIR
    out: set[str] = set()
    for p in sorted(folder.glob("*.md")) if folder.is_dir() else []:
        try:
            out |= candidates.known_ids(fsio.read_regular(p)[0].decode("utf-8", errors="replace"))
        except (FileNotFoundError, fsio.UnreadableError):
            continue  # not a list kbsync can read (`kbsync status` names it)
    return out


def _offset_tz(cfg: Config) -> dt.tzinfo:
    off = cfg.protocol.default_offset
    if off == "Z":
        return dt.timezone.utc
    sign = -1 if off[0] == "-" else 1
    return dt.timezone(sign * dt.timedelta(hours=int(off[1:3]), minutes=int(off[4:6])))


def _changes(ws: Workspace, src: Source, mark: dict[str, Any]) -> tuple[Changes, dict[str, Any]]:
    """What changed, and the next watermark (complete once the changes' files are used up)."""
    if src.repo is not None:
        found, head, counts = git_changes(resolve_path(ws, src.repo), src.branch, mark.get("commit"))
        return Changes(found, {}, counts, len(found)), {"kind": "git", "commit": head}
    assert src.path is not None
    base, files = folder_files(ws, src.path)
    changes = folder_changes(base, files, mark.get("files", {}), _offset_tz(ws.config))
    return changes, {"kind": "folder", "files": changes.mark}


def _fresh(source: str, changes: Changes, seen: set[str]) -> Iterator[Found]:
    """The changed files not proposed before, as they are read; those proposed before are counted."""
    for f in changes.found:
        if candidate_id(source, f.path, f.sha256) in seen:
            changes.counts.proposed_before += 1
        else:
            yield f


def list_relpath(source: str, now: dt.datetime, tz: dt.tzinfo) -> str:
    return f"{protocol.CANDIDATES_DIR}/{now.astimezone(tz).date().isoformat()}-{source}.md"


def scan_source(ws: Workspace, src: Source, now: dt.datetime) -> SourceResult:
    """Scan one source: write its candidate list, then advance its watermark."""
    mark = _load_mark(ws, src.name)
    changes, next_mark = _changes(ws, src, mark)
    fresh = _fresh(src.name, changes, known_ids(ws))
    result = SourceResult(src.name, counts=changes.counts, candidates=analyse_all(src.name, fresh, changes.total))
    if result.candidates:
        tz = _offset_tz(ws.config)
        rel = list_relpath(src.name, now, tz)
        day = rel.rsplit("/", 1)[1][:10]
        items = "".join(candidates.render_item(c) for c in result.candidates)
        try:
            edit_file(ws, rel, lambda old: (old or candidates.header(src.name, day)) + items, keep_backup=False)
        except OSError as exc:
            raise ScanWriteError(f"cannot write the candidate list ({exc.strerror or exc}); the watermark of "
                                 f"{src.name!r} was not advanced, so the next scan proposes the same files",
                                 path=rel) from exc
        result.list_path = rel
    fsio.atomic_write(_mark_path(ws, src.name), json.dumps(next_mark, ensure_ascii=False).encode("utf-8"))
    return result


def run_scan(ws: Workspace, now: dt.datetime, names: list[str] | None = None) -> list[SourceResult]:
    """Scan the configured sources (or those named); the job the daemon runs on `[scan] every`."""
    configured = sources(ws.config)
    unknown = [n for n in names or [] if n not in {s.name for s in configured}]
    if unknown:
        raise InputError(f"no scan source named {unknown[0]!r}; see [[scan.sources]] in the config")
    return [scan_source(ws, s, now) for s in configured if not names or s.name in names]


def sources_configured(ws: Workspace) -> bool:
    """Whether the daemon's timed scan has anything to do."""
    return bool(ws.config.scan.sources)


def scheduled_scan(ws: Workspace) -> str:
    """The daemon's timed job: scan every source now; a one-line summary for `kbsync status`."""
    results = run_scan(ws, dt.datetime.now(dt.timezone.utc))
    return "; ".join(f"{r.source}: {len(r.candidates)} candidates" + (f", {len(r.counts.left_out)} file(s) left out"
                     if r.counts.left_out else "") for r in results)
