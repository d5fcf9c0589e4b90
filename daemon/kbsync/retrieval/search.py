"""Federated search: every configured source on `text`, each one's top hits fused by rank.

Sources are `[[search.sources]]` tables; without any, the workspace's own kinds
(sessions, board, memory, artifacts) are searched. Kinds: those four, searched
here together in one read of the search database, and the kinds registered in
kbsync.retrieval.sources.kinds, run in a pool of threads: `folder` (another
folder of Markdown, `path`), `command` (an external program that prints JSON
lines, best first) and `semantic`. A source that fails or times out is reported
and left out; the others still answer.
"""
from __future__ import annotations

import dataclasses
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from kbsync.core.protocol import STATE_DIR
from kbsync.errors import ConfigError, KbsyncError, UsageError
from kbsync.git import repo
from kbsync.retrieval import db, index, ranking
from kbsync.retrieval.blend import blend
from kbsync.retrieval.fusion import Fused, FusionFn, Hit, SourceHits, make_rrf
from kbsync.retrieval.records import KIND_SOURCES
from kbsync.retrieval.sources.base import SourceSpec, row_hit
from kbsync.retrieval.sources.kinds import KINDS
from kbsync.retrieval.sources.semantic import SEMANTIC
from kbsync.retrieval.text import Query, parse_query
from kbsync.store.workspace import Workspace

if TYPE_CHECKING:
    from kbsync.core.detect.injectionclassifier import Learned

WORKSPACE_KINDS = {v: k for k, v in KIND_SOURCES.items()}  # source kind -> record kind


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
    runs = next((s for s in specs if s.kind in KINDS and KINDS[s.kind].runs_program), None)
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
    if repo.is_tracked(ws.root, rel):
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
    if kind in WORKSPACE_KINDS:
        return SourceSpec(name, str(kind))
    source = KINDS.get(kind) if isinstance(kind, str) else None
    spec = source.configured(t, name, here, where) if source else None
    if spec is None:
        usages = [*WORKSPACE_KINDS, *(k.usage for k in KINDS.values())]
        raise ConfigError(f"{here} ({name}): kind must be one of {', '.join(usages[:-1])} or {usages[-1]}", path=where)
    return spec


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
    if any(s.kind in WORKSPACE_KINDS or KINDS[s.kind].uses_index for s in specs):
        index.build_missing(ws)  # build it once, before the threads read it
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
    """Each source's answer, in `specs` order. The registered kinds (kbsync.retrieval.sources.kinds) run in the
    pool while the workspace's own sources are searched in this thread, together (one read of the index, see
    ranking.searches): each is a few milliseconds of SQLite that holds the interpreter's lock, so threads would
    only add hand-offs."""
    pooled = {i: _pool().submit(_run_one, ws, s, query, per) for i, s in enumerate(specs) if s.kind in KINDS}
    here = _workspace_answers(ws, [s for s in specs if s.kind not in KINDS], query, per)
    return [pooled[i].result() if i in pooled else here[s.name] for i, s in enumerate(specs)]


def _workspace_answers(ws: Workspace, specs: list[SourceSpec], query: Query, limit: int) -> dict[str, Answer]:
    """The answer of each of the workspace's own sources (by name); a failure is every one's."""
    if not specs:
        return {}
    kinds = sorted({WORKSPACE_KINDS[s.kind] for s in specs})
    try:
        with db.reading(db.db_path(ws.state_dir)) as conn:
            lists = ranking.searches(conn, query, kinds, limit, bodies=index.bodies(ws))
    except KbsyncError as exc:
        return {s.name: (None, str(exc)) for s in specs}
    except Exception as exc:  # noqa: BLE001 - the index's failure must never sink the other sources
        return {s.name: (None, f"{type(exc).__name__}: {exc}") for s in specs}
    return {s.name: ([row_hit(s.name, i, r, r.relpath) for i, r in enumerate(lists[WORKSPACE_KINDS[s.kind]], start=1)], "")
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
        return KINDS[spec.kind].hits(ws, spec, query, limit), ""
    except KbsyncError as exc:
        return None, str(exc)
    except Exception as exc:  # noqa: BLE001 - one source's failure must never sink the others
        return None, f"{type(exc).__name__}: {exc}"


def blended_sessions(ws: Workspace, query: Query, rows: Sequence[db.Row], limit: int) -> tuple[list[Hit], str]:
    """The sessions a context pack draws on: the keyword hits `rows` (best first) blended with the semantic
    index's nearest sessions as federated search blends a kind's two legs; the keyword hits alone when the
    semantic leg is off, and then or when it fails, why ("" when it answered)."""
    words = [row_hit(KIND_SOURCES["session"], i, r, r.relpath) for i, r in enumerate(rows, start=1)]
    if not ws.config.search.semantic:
        return words[:limit], ""
    near, why = _run_one(ws, SourceSpec(SEMANTIC, SEMANTIC), query, limit)
    sessions = [h for h in near or [] if h.kind == "session"]
    return blend(words, sessions, ws.config.search.semantic_weight, limit), why
