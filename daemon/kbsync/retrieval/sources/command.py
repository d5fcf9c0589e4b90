"""The `command` source: an external program that prints JSON lines, best first.

The caller chooses a command's query, never its options: `{query}` is a word of its own after `--` (checked
when the configuration is read), the query is also in the program's environment as KBSYNC_QUERY, and a query
that starts with `-` is given to no program (see docs/retrieval.md, "Command sources and the query").
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from kbsync import proc
from kbsync.errors import ConfigError, KbsyncError, UsageError
from kbsync.retrieval.fusion import Hit
from kbsync.retrieval.sources.base import DEFAULT_TIMEOUT_S, Kind, SourceSpec, Table, clip
from kbsync.retrieval.text import Query
from kbsync.store.workspace import Workspace

QUERY_WORD = "{query}"
END_OF_OPTIONS = "--"
QUERY_ENV = "KBSYNC_QUERY"


def configured(t: Table, name: str, here: str, where: str | None) -> SourceSpec | None:
    cmd = t.get("command")
    if not (isinstance(cmd, list) and cmd and all(isinstance(c, str) for c in cmd)):
        return None
    timeout = t.get("timeout_s", DEFAULT_TIMEOUT_S)
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0:
        raise ConfigError(f"{here}.timeout_s must be a positive number of seconds", path=where)
    _check_query_place(cmd, f"{here} ({name})", where)
    return SourceSpec(name, "command", command=tuple(cmd), timeout_s=float(timeout))


def _check_query_place(cmd: list[str], here: str, where: str | None) -> None:
    """ConfigError unless every `{query}` is a word of its own after `--`, where a program reads no options:
    inside a word (`--q={query}`, `sh -c "... {query}"`) or before `--` the caller's words could be options."""
    fix = (f"write command = [..., \"{END_OF_OPTIONS}\", \"{QUERY_WORD}\"], or leave {QUERY_WORD} out and "
           f"read the query from ${QUERY_ENV}")
    for i, arg in enumerate(cmd):
        if QUERY_WORD not in arg:
            continue
        if arg != QUERY_WORD:
            raise ConfigError(f"{here}: command[{i}] {arg!r} holds {QUERY_WORD} inside a word, where the query "
                              f"could become an option or a shell's code; {fix}", path=where)
        if END_OF_OPTIONS not in cmd[:i]:
            raise ConfigError(f"{here}: command[{i}] {QUERY_WORD} does not follow \"{END_OF_OPTIONS}\", so a "
                              f"query such as --pre=sh would be read as an option; {fix}", path=where)


def hits(ws: Workspace, spec: SourceSpec, query: Query, limit: int) -> list[Hit]:
    if not query.terms:
        return []  # field filters mean nothing to another program
    if query.text.startswith("-"):
        raise UsageError("the query starts with '-', which a program could read as an option; no program is "
                         "given it (reword the query's first word)")
    argv = [query.text if a == QUERY_WORD else a for a in spec.command]
    out = run_bounded(argv, spec.timeout_s, cwd=ws.root, env={**os.environ, QUERY_ENV: query.text})
    return parse_command_output(spec.name, out)[:limit]


def run_bounded(argv: list[str], timeout_s: float, cwd: Path, env: dict[str, str] | None = None) -> str:
    """Standard output of `argv`; KbsyncError if it cannot start, fails, or outlives `timeout_s` (then killed)."""
    done = proc.run(argv, cwd=cwd, timeout=timeout_s, check=False, env=env)
    if done.returncode != 0:
        raise KbsyncError(f"exited with status {done.returncode}: {proc.last_line(done)}")
    return done.stdout.decode("utf-8", "replace")


def parse_command_output(source: str, out: str) -> list[Hit]:
    """Hits from JSON lines (rank = line number among non-blank lines); KbsyncError on the first bad line."""
    hits: list[Hit] = []
    for n, line in enumerate((ln for ln in out.splitlines() if ln.strip()), start=1):
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            raise KbsyncError(f"output line {n} is not JSON; print one JSON object per line") from None
        hit = _command_hit(source, n, obj)
        if hit is None:
            raise KbsyncError(f"output line {n} needs a string title and at least one of key, path, url")
        hits.append(hit)
    return hits


def _command_hit(source: str, rank: int, obj: Any) -> Hit | None:
    if not isinstance(obj, dict) or not isinstance(obj.get("title"), str):
        return None
    vals = {k: obj.get(k) for k in ("key", "path", "url", "summary")}
    if any(v is not None and not isinstance(v, str) for v in vals.values()):
        return None
    if not (vals["key"] or vals["path"] or vals["url"]):
        return None
    return Hit(source=source, rank=rank, title=obj["title"], key=vals["key"] or "", path=vals["path"] or "",
               url=vals["url"] or "", summary=clip(vals["summary"] or ""))


KIND = Kind(configured, hits, usage=f"command (with command = [\"prog\", \"{END_OF_OPTIONS}\", \"{QUERY_WORD}\"])",
            runs_program=True)
