"""Federated search: every configured source on `text`, each one's top hits fused by rank.

Sources are `[[search.sources]]` tables; without any, the workspace's own kinds
(sessions, board, memory, artifacts) are searched. Kinds: those four, `folder`
(another folder of Markdown, `path`), and `command` (an external program that
prints JSON lines, best first). A source that fails or times out is reported
and left out; the others still answer.

The caller chooses a command's query, never its options: `{query}` is a word of its own after `--` (checked
when the configuration is read), the query is also in the program's environment as KBSYNC_QUERY, and a query
that starts with `-` is given to no program (see docs/retrieval.md, "Command sources and the query").
"""

from __future__ import annotations

import dataclasses
import json
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from kbsync import proc
from kbsync.core.protocol import STATE_DIR
from kbsync.errors import ConfigError, KbsyncError, UsageError
from kbsync.git import repo as gitrepo
from kbsync.retrieval import db as searchdb
from kbsync.retrieval import index as searchindex
from kbsync.retrieval import ranking
from kbsync.retrieval.blend import blend
from kbsync.retrieval.fusion import Fused, FusionFn, Hit, SourceHits, make_rrf
from kbsync.retrieval.records import KIND_SOURCES
from kbsync.retrieval.text import Query, parse_query
from kbsync.store.workspace import Workspace

if TYPE_CHECKING:
    from kbsync.core.detect.injectionclassifier import Learned
    from kbsync.retrieval.semanticstore import Found

WORKSPACE_KINDS = {v: k for k, v in KIND_SOURCES.items()}  # source kind -> record kind
SEMANTIC = "semantic"  # the derived semantic index over the workspace's own kinds (kbsync.retrieval.semanticclient)
MAX_SUMMARY = 100
DEFAULT_TIMEOUT_S = 10.0
QUERY_WORD = "{query}"
END_OF_OPTIONS = "--"
QUERY_ENV = "KBSYNC_QUERY"


@dataclass(frozen=True)
class SourceSpec:
    name: str
    kind: str
    path: str = ""
    command: tuple[str, ...] = ()
    timeout_s: float = DEFAULT_TIMEOUT_S


@dataclass
class Outcome:
    results: list[Fused] = field(default_factory=list)
    failures: list[tuple[str, str]] = field(default_factory=list)  # (source name, why)
    verdicts: Learned | None = None  # what the classifier flags: its flags are in the hits', its lines to withhold


def configured_sources(ws: Workspace) -> list[SourceSpec]:
    """The sources in configuration order, or the workspace's own kinds when none are configured."""
    tables = ws.config.search.sources
    if not tables:
        own = [SourceSpec(name, name) for name in WORKSPACE_KINDS]
        return own + [SourceSpec(SEMANTIC, SEMANTIC)] if ws.config.search.semantic else own
    specs = [_spec(t, i, ws.config.source) for i, t in enumerate(tables)]
    runs = next((s for s in specs if s.kind == "command"), None)
    if runs:
        require_trusted_config(ws, runs.name)
    names = [s.name for s in specs]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup:
        raise ConfigError(f"search.sources: the name {dup!r} is used twice; give each source its own name",
                          path=ws.config.source)
    return specs


def untrusted_config(ws: Workspace) -> str | None:
    """Why the configuration file may not name programs to run, or None when a person on this machine controls
    it: `--config` outside the workspace's content, or an untracked `.kbsync/config.toml` (no sync writes there)."""
    if ws.config.source is None:
        return None
    real = Path(ws.config.source).resolve()
    root = ws.real_root
    if root not in real.parents:
        return None
    rel = real.relative_to(root).as_posix()
    if rel.split("/", 1)[0] != STATE_DIR:
        return f"it lies in the workspace's content ({rel}), which collaborators and remotes write"
    if gitrepo.is_tracked(ws.root, rel):
        return f"{rel} is tracked by git, so a commit from elsewhere may have written it"
    return None


def require_trusted_config(ws: Workspace, name: str) -> None:
    """ConfigError unless the configuration file is one a person on this machine controls (see untrusted_config)."""
    why = untrusted_config(ws)
    if why:
        raise ConfigError(f"search source {name!r} runs a program, but {why}; kbsync runs programs only from "
                          "--config outside the workspace or an untracked .kbsync/config.toml", path=ws.config.source)


def _spec(t: dict[str, Any], i: int, where: str | None) -> SourceSpec:
    kind, name = t.get("kind"), t.get("name")
    here = f"search.sources[{i}]"
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{here} needs a name", path=where)
    if kind in WORKSPACE_KINDS or kind == SEMANTIC:
        return SourceSpec(name, kind)
    if kind == "folder" and isinstance(t.get("path"), str):
        return SourceSpec(name, kind, path=str(Path(t["path"]).expanduser()))
    cmd = t.get("command")
    if kind == "command" and isinstance(cmd, list) and cmd and all(isinstance(c, str) for c in cmd):
        timeout = t.get("timeout_s", DEFAULT_TIMEOUT_S)
        if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0:
            raise ConfigError(f"{here}.timeout_s must be a positive number of seconds", path=where)
        _check_query_place(cmd, f"{here} ({name})", where)
        return SourceSpec(name, kind, command=tuple(cmd), timeout_s=float(timeout))
    raise ConfigError(f"{here} ({name}): kind must be one of {', '.join(WORKSPACE_KINDS)}, folder (with path)"
                      " or command (with command = [\"prog\", \"--\", \"{query}\"])", path=where)


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


def select(specs: list[SourceSpec], names: Sequence[str] | None) -> list[SourceSpec]:
    """Only the sources named (in configuration order); UsageError for an unknown name."""
    if not names:
        return specs
    known = {s.name for s in specs}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise UsageError(f"no search source named {', '.join(unknown)}; configured: {', '.join(sorted(known))}")
    return [s for s in specs if s.name in names]


def searchable(text: str) -> Query:
    """`text` parsed as a search; UsageError for a bad filter or nothing to search for."""
    query = parse_query(text)
    if query.errors:
        raise UsageError("; ".join(query.errors))
    if not query.terms and not query.has_filters:
        raise UsageError("nothing to search for; give words or a filter such as tag:合同")
    return query


def federated(ws: Workspace, text: str, *, names: Sequence[str] | None = None, top: int = 10,
              fusion: FusionFn | None = None, per_source: int | None = None) -> Outcome:
    """Run the sources on `text` (see _answers) and fuse their lists; failures are collected, not raised.
    Each source gives its best `per_source` ([search] per_source unless given: a list of every match of one
    source, such as the board page's, asks for more). With the semantic source, each of the workspace's own
    kinds searched is first one list of both legs (`_blended`)."""
    query = searchable(text)
    specs = select(configured_sources(ws), names)
    if any(s.kind not in ("command", SEMANTIC) for s in specs):
        searchindex.build_missing(ws)  # build it once, before the threads read it
    per = per_source or ws.config.search.per_source
    blends = any(s.kind == SEMANTIC for s in specs) and any(s.kind in WORKSPACE_KINDS for s in specs)
    answers = _answers(ws, specs, query, max(per, BLEND_DEPTH) if blends else per)
    failures = [(s.name, why) for s, (_, why) in zip(specs, answers) if why]
    found = [(s, hits) for s, (hits, _) in zip(specs, answers) if hits is not None]
    lists = _blended(found, ws.config.search.semantic_weight, per) if blends else [(s.name, h) for s, h in found]
    weight = Fraction(str(ws.config.search.semantic_weight))
    fuse = fusion or make_rrf(ws.config.search.rrf_k, {s.name: weight for s in specs if s.kind == SEMANTIC})
    return _with_verdicts(ws, Outcome(fuse([(name, hits[:per]) for name, hits in lists])[:top], failures))


BLEND_DEPTH = 10  # the hits of each leg a blend chooses among, at least (kbsync.retrieval.blend)


def _blended(found: list[tuple[SourceSpec, list[Hit]]], semantic_weight: float, per: int) -> list[SourceHits]:
    """The lists to fuse: each workspace kind's keyword hits blended with the semantic hits of that kind; the
    semantic hits of kinds not searched by keyword stay the semantic source's own list."""
    near = [h for s, hits in found if s.kind == SEMANTIC for h in hits]
    blended = {WORKSPACE_KINDS[s.kind] for s, _ in found if s.kind in WORKSPACE_KINDS}
    out: list[SourceHits] = []
    for spec, hits in found:
        if spec.kind in WORKSPACE_KINDS:
            kind = WORKSPACE_KINDS[spec.kind]
            out.append((spec.name, blend(hits, [h for h in near if h.kind == kind], semantic_weight, per)))
        elif spec.kind == SEMANTIC:
            rest = [h for h in hits if h.kind not in blended]
            out.append((spec.name, [dataclasses.replace(h, rank=i) for i, h in enumerate(rest, start=1)]))
        else:
            out.append((spec.name, hits))
    return out


def _with_verdicts(ws: Workspace, outcome: Outcome) -> Outcome:
    """The hits with the classifier's flags of their records beside the rules' (kbsync.retrieval.semanticflags)."""
    from kbsync.retrieval.semanticflags import learned

    outcome.verdicts = verdicts = learned(ws)
    outcome.results = [dataclasses.replace(r, flags=r.flags + verdicts.records[r.key]) if r.key in verdicts.records
                       else r for r in outcome.results]
    return outcome


Answer = tuple[list[Hit] | None, str]  # a source's hits, or None and why it failed


def _answers(ws: Workspace, specs: list[SourceSpec], query: Query, per: int) -> list[Answer]:
    """Each source's answer, in `specs` order. Folder and command sources run in the pool while the workspace's
    own sources are searched in this thread, together (one read of the index, see ranking.searches): each is
    a few milliseconds of SQLite that holds the interpreter's lock, so threads would only add hand-offs."""
    pooled = {i: _pool().submit(_run_one, ws, s, query, per) for i, s in enumerate(specs) if s.kind in _RUNNERS}
    here = _workspace_answers(ws, [s for s in specs if s.kind not in _RUNNERS], query, per)
    return [pooled[i].result() if i in pooled else here[s.name] for i, s in enumerate(specs)]


def _workspace_answers(ws: Workspace, specs: list[SourceSpec], query: Query, limit: int) -> dict[str, Answer]:
    """The answer of each of the workspace's own sources (by name); a failure is every one's."""
    if not specs:
        return {}
    kinds = sorted({WORKSPACE_KINDS[s.kind] for s in specs})
    try:
        with searchdb.reading(searchdb.db_path(ws.state_dir)) as conn:
            lists = ranking.searches(conn, query, kinds, limit, bodies=searchindex.bodies(ws))
    except KbsyncError as exc:
        return {s.name: (None, str(exc)) for s in specs}
    except Exception as exc:  # noqa: BLE001 - the index's failure must never sink the other sources
        return {s.name: (None, f"{type(exc).__name__}: {exc}") for s in specs}
    return {s.name: ([_hit(s.name, i, r, r.relpath) for i, r in enumerate(lists[WORKSPACE_KINDS[s.kind]], start=1)], "")
            for s in specs}


_POOL: list[ThreadPoolExecutor] = []
_POOL_LOCK = threading.Lock()
POOL_THREADS = 4  # folder and command sources of all searches at once


def _pool() -> ThreadPoolExecutor:
    """The threads that run the blocking sources, made once per process: a server answers many searches, and
    starting threads for each one cost more than a query."""
    with _POOL_LOCK:
        if not _POOL:
            _POOL.append(ThreadPoolExecutor(max_workers=POOL_THREADS, thread_name_prefix="kbsync-search"))
        return _POOL[0]


def _run_one(ws: Workspace, spec: SourceSpec, query: Query, limit: int) -> Answer:
    try:
        return _RUNNERS[spec.kind](ws, spec, query, limit), ""
    except KbsyncError as exc:
        return None, str(exc)
    except Exception as exc:  # noqa: BLE001 - one source's failure must never sink the others
        return None, f"{type(exc).__name__}: {exc}"


def _folder_hits(ws: Workspace, spec: SourceSpec, query: Query, limit: int) -> list[Hit]:
    root = Path(spec.path)
    if not root.is_dir():
        raise ConfigError(f"search source {spec.name}: folder {spec.path} does not exist")
    conn = searchdb.connect(searchdb.db_path(ws.state_dir))
    try:
        searchindex.sync_folder(conn, spec.name, root)
        rows = ranking.search(conn, query, searchindex.folder_kind(spec.name), limit,
                               bodies=searchindex.folder_bodies(root))
    finally:
        conn.close()
    return [_hit(spec.name, i, r, str(root / r.relpath.split(":", 1)[1])) for i, r in enumerate(rows, start=1)]


def blended_sessions(ws: Workspace, query: Query, rows: Sequence[searchdb.Row], limit: int) -> tuple[list[Hit], str]:
    """The sessions a context pack draws on: the keyword hits `rows` (best first) blended with the semantic
    index's nearest sessions as federated search blends a kind's two legs; the keyword hits alone when the
    semantic leg is off, and then or when it fails, why ("" when it answered)."""
    words = [_hit(KIND_SOURCES["session"], i, r, r.relpath) for i, r in enumerate(rows, start=1)]
    if not ws.config.search.semantic:
        return words[:limit], ""
    near, why = _run_one(ws, SourceSpec(SEMANTIC, SEMANTIC), query, limit)
    sessions = [h for h in near or [] if h.kind == "session"]
    return blend(words, sessions, ws.config.search.semantic_weight, limit), why


def _hit(source: str, rank: int, row: searchdb.Row, path: str) -> Hit:
    best = row.passages[0][1] if row.passages else None
    return Hit(source=source, rank=rank, title=row.title, key=row.key, path=path, summary=clip(row.summary),
               flags=row.flags, heading=best.heading if best else "", passage=best.text if best else "",
               score=row.score, cover=row.cover, kind=row.kind)


def clip(text: str, limit: int = MAX_SUMMARY) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ---- command sources ------------------------------------------------------------

def _command_hits(ws: Workspace, spec: SourceSpec, query: Query, limit: int) -> list[Hit]:
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


# ---- the semantic index ----------------------------------------------------------

def _semantic_hits(ws: Workspace, spec: SourceSpec, query: Query, limit: int) -> list[Hit]:
    """The `limit` records of the workspace's kinds nearest in meaning to the query's text, best first; none
    for a query of filters alone (the meaning of `tag:x` is the keyword sources' business) or while the
    index has never been built."""
    if not query.words or query.has_filters:
        return []
    from kbsync.retrieval.semanticclient import nearest

    found = nearest(ws, " ".join([*query.terms, *query.phrases]), list(WORKSPACE_KINDS.values()), limit)
    return [_near_hit(ws, spec.name, i, n) for i, n in enumerate(found, start=1)]


def _near_hit(ws: Workspace, source: str, rank: int, near: Found) -> Hit:
    """A semantic hit; one found by a passage names that passage (read from its file as it is now)."""
    from kbsync.retrieval.semanticbuild import records_of
    from kbsync.retrieval.semanticunits import passage_at

    rec = next((r for r in records_of(ws, near.relpath) or [] if r.key == near.key), None) if near.ordinal else None
    best = passage_at(rec, near.ordinal) if rec else None
    return Hit(source=source, rank=rank, title=near.title, key=near.key, path=near.relpath, summary=clip(near.summary),
               heading=best.heading if best else "", passage=best.text if best else "", score=near.score, kind=near.kind)


# the sources that read files or wait on a program, run in the pool (the workspace's own are searched in the caller)
_RUNNERS: dict[str, Callable[[Workspace, SourceSpec, Query, int], list[Hit]]] = {
    "folder": _folder_hits, "command": _command_hits, SEMANTIC: _semantic_hits,
}
