#!/usr/bin/env python3
"""Retrieval measured on LoCoMo: does search find the session that answers a question asked in its own words?

    python bench/bench_locomo.py PATH/locomo10.json [--convs 0-4] [--held-out] [--corpus 12000]
                                 [--no-crosslang] [--config FILE] [--dump FILE] [--limit N] [--out DIR]

The data is not shipped: take data/locomo10.json from the public snap-research/locomo repository. Each
conversation becomes its own workspace (`kbsync init`), each of its sessions saved through `kbsync session
save` as a person would save it (see bench/locomo.py), then indexed: the search database, and each leg's own
index with the command a person would run (`kbsync index rebuild --semantic` for a semantic leg). Every question of categories 1-4 is
then asked as written, through the application layer the CLI calls (`kbsync search`, `kbsync context -q`).

Printed, per category and for all questions:
- top-1/5/10: the share of questions with a session holding an evidence turn among the first 1/5/10
  results; "passage" rows where results name a passage (a hit: the passage holds an evidence turn's text);
- zero: the share of questions with no result at all; p50/p95: the latency of one search;
- for kbsync, for each retrieval leg alone (legs(): the keyword sources, and each other kind of source
  such as a semantic one) when there are two or more, and for a plain BM25 over the whole session files
  (rank-bm25, naive tokenisation: lower-cased \\w+ runs) as the baseline;
- the context pack (`kbsync context -q QUESTION --budget B`, B = 2,000 and 8,000): the share of questions
  whose pack holds an evidence turn's text, and the median tokens the pack used;
- with --corpus N: every selected conversation saved into one copy of the N-session generated corpus
  (bench/gen_workspace.py, or $KBSYNC_GEN; cached under --out), and top-5 there for kbsync and BM25;
- unless --no-crosslang: Chinese questions about English LoCoMo sessions and English questions about Chinese
  sessions (bench/data/crosslang.json), top-5 both ways (see bench/crosslang.py).

Conversations 0-4 are the tuning set and the default; 5-9 are held out for checking a result and run only
with --held-out (or --convs naming them together with --held-out).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

import crosslang
import locomo
from kbsync.app.retrieval import build_context, rebuild_search, search
from kbsync.app.sessions import save_session
from kbsync.app.shapes import hit
from kbsync.app.workspace import init, open_workspace
from kbsync.errors import KbsyncError
from kbsync.retrieval.search import WORKSPACE_KINDS, configured_sources
from kbsync.store.workspace import Workspace
from locomo import CATEGORIES, Conversation, Question

TUNING = range(0, 5)
BUDGETS = (2000, 8000)
TOPS = (1, 5, 10)
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Answer:
    """One system's answer to one question: the files in rank order, the passage text each names (or "")."""

    paths: tuple[str, ...]
    passages: tuple[str, ...]
    seconds: float


@dataclass
class Tally:
    """Answers of one system, by question."""

    rows: list[tuple[Question, Answer]] = field(default_factory=list)


Ranker = Callable[[str], tuple[tuple[str, ...], tuple[str, ...]]]


@dataclass
class Placed:
    """Where a conversation's sessions went: session number -> relpath, in a workspace."""

    conv: Conversation
    ws: Workspace
    paths: dict[int, str]

    def evidence_paths(self, q: Question) -> set[str]:
        return {self.paths[n] for n in q.sessions if n in self.paths}

    def evidence_texts(self, q: Question) -> list[str]:
        return [locomo.normalise(t.text) for d in q.evidence if (t := self.conv.turn(d)) and len(t.text) > 0]


# ---- building the workspaces ------------------------------------------------------------------------------

def make_workspace(root: Path, config: Path | None) -> Workspace:
    """`kbsync init` in `root`, opened with the configuration file `config` (None: the workspace's own)."""
    init(root)
    return open_workspace(str(root), str(config) if config else None)


# The legs that keep an index of their own besides the search database, and the command that builds it.
LEG_BUILDS = {"semantic": ("index", "rebuild", "--semantic")}
BUILD_TIMEOUT_S = 3600.0


def index(ws: Workspace, config: Path | None, took: dict[str, float]) -> None:
    """Index `ws` as a person would before asking: the search database, then each leg's own index
    (`kbsync index rebuild --semantic` ...); the seconds each took are added to `took` by leg."""
    start = time.perf_counter()
    rebuild_search(ws)
    took["keyword"] = took.get("keyword", 0.0) + time.perf_counter() - start
    for leg in legs(ws):
        if leg not in LEG_BUILDS:
            continue
        argv = [sys.executable, "-m", "kbsync", "-q", "-w", str(ws.root), *(["--config", str(config)] if config else []),
                *LEG_BUILDS[leg]]
        start = time.perf_counter()
        try:
            got = subprocess.run(argv, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            sys.exit(f"bench: `kbsync {' '.join(LEG_BUILDS[leg])}` in {ws.root} ran over {BUILD_TIMEOUT_S:.0f} s")
        if got.returncode != 0:
            why = (got.stderr.strip().splitlines() or ["no message"])[-1]
            sys.exit(f"bench: `kbsync {' '.join(LEG_BUILDS[leg])}` in {ws.root} failed: {why}")
        took[leg] = took.get(leg, 0.0) + time.perf_counter() - start


def built(took: dict[str, float]) -> str:
    return "index built in " + ", ".join(f"{leg} {secs:.1f} s" for leg, secs in took.items())


def place(ws: Workspace, conv: Conversation) -> Placed:
    """Every session of `conv` saved into `ws` through `kbsync session save`."""
    paths = {}
    for s in conv.sessions:
        got = save_session(ws, locomo.payload(s, conv.speakers), s.label)
        paths[s.number] = got.relpath
    return Placed(conv, ws, paths)


# ---- the systems --------------------------------------------------------------------------------------------

def legs(ws: Workspace) -> dict[str, list[str]]:
    """The retrieval legs of `ws`'s search, by name: "keyword" (the workspace's own indexed kinds and folder
    sources), and each other kind of configured source (such as a semantic one) on its own."""
    out: dict[str, list[str]] = {}
    for spec in configured_sources(ws):
        leg = "keyword" if spec.kind in WORKSPACE_KINDS or spec.kind == "folder" else spec.kind
        out.setdefault(leg, []).append(spec.name)
    return out


def kbsync_ranker(ws: Workspace, sources: Sequence[str] | None = None) -> Ranker:
    """`kbsync search QUESTION` (all sources, or the named ones): the results' paths and passages."""

    def run(question: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        outcome = search(ws, question, sources=sources, top=max(TOPS))
        results: list[dict[str, object]] = [dict(hit(r, outcome.verdicts)) for r in outcome.results]
        return tuple(str(r.get("path", "")) for r in results), tuple(passage_text(r) for r in results)

    return run


def passage_text(result: dict[str, object]) -> str:
    """The text of the best passage a search result names, as `kbsync search --json` prints it: `passage` (a
    string, or an object with `text`), or the first of `passages`; "" when it names none."""
    p, many = result.get("passage"), result.get("passages")
    if p is None and isinstance(many, list) and many:
        p = many[0]
    if isinstance(p, dict):
        p = p.get("text")
    return p if isinstance(p, str) else ""


def tokens(text: str) -> list[str]:
    """The baseline's naive tokenisation: lower-cased runs of word characters."""
    return _WORD.findall(text.lower())


def bm25_ranker(ws: Workspace) -> Ranker:
    """Plain BM25 (Okapi, rank-bm25's defaults) over the whole session files of `ws`."""
    from rank_bm25 import BM25Okapi

    rels = sorted(r for r in ws.iter_files() if r.startswith("sessions/"))
    index = BM25Okapi([tokens(ws.path(r).read_text(encoding="utf-8")) for r in rels])

    def run(question: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        scores = index.get_scores(tokens(question))
        best = sorted(range(len(rels)), key=lambda i: -scores[i])[:max(TOPS)]
        return tuple(rels[i] for i in best if scores[i] > 0), ()

    return run


def rankers(ws: Workspace) -> list[tuple[str, Ranker]]:
    """The systems measured on `ws`: kbsync search, each of its legs alone when it has two or more, BM25."""
    found = legs(ws)
    out = [("kbsync search", kbsync_ranker(ws))]
    if len(found) > 1:
        out += [(f"  {leg} leg alone", kbsync_ranker(ws, names)) for leg, names in found.items()]
    return out + [(BASELINE, bm25_ranker(ws))]


BASELINE = "BM25 whole files"


def ask(ranker: Ranker, questions: Iterable[Question], tally: Tally) -> None:
    for q in questions:
        start = time.perf_counter()
        paths, passages = ranker(q.text)
        tally.rows.append((q, Answer(paths, passages, time.perf_counter() - start)))


# ---- scoring --------------------------------------------------------------------------------------------------

def first_hit(placed: dict[int, Placed], q: Question, a: Answer) -> int | None:
    """The 1-based rank of the first result that is a session holding an evidence turn."""
    want = placed[q.conv].evidence_paths(q)
    return next((i for i, p in enumerate(a.paths, start=1) if p in want), None)


def first_passage_hit(placed: dict[int, Placed], q: Question, a: Answer) -> int | None:
    """The 1-based rank of the first result whose passage holds an evidence turn's text."""
    texts = placed[q.conv].evidence_texts(q)
    return next((i for i, p in enumerate(a.passages, start=1) if p and any(t in locomo.normalise(p) for t in texts)),
                None)


Scorer = Callable[[dict[int, Placed], Question, Answer], "int | None"]


def row(name: str, label: str, ranks: Sequence[int | None], answers: Sequence[Answer]) -> str:
    """One line of the table: top-k shares from the first hit's rank of each question, zero hits, latency."""
    n = len(answers)
    tops = [sum(1 for r in ranks if r is not None and r <= k) / n for k in TOPS]
    zero = sum(1 for a in answers if not a.paths) / n
    secs = [a.seconds for a in answers]
    return (f"{name:<24}{label:<12}{n:>5}" + "".join(f"{t:>7.2f}" for t in tops) + f"{zero:>7.2f}"
            f"{pct(secs, 0.5) * 1000:>9.1f}{pct(secs, 0.95) * 1000:>9.1f}")


HEADER = f"{'system':<24}{'category':<12}{'n':>5}{'top1':>7}{'top5':>7}{'top10':>7}{'zero':>7}{'p50 ms':>9}{'p95 ms':>9}"


def table(name: str, tally: Tally, placed: dict[int, Placed], scorer: Scorer = first_hit) -> list[str]:
    lines = [row(name, "all", [scorer(placed, q, a) for q, a in tally.rows], [a for _, a in tally.rows])]
    for cat, label in CATEGORIES.items():
        rows = [(q, a) for q, a in tally.rows if q.category == cat]
        if rows:
            lines.append(row("", label, [scorer(placed, q, a) for q, a in rows], [a for _, a in rows]))
    return lines


def pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] if ordered else 0.0


def per_workspace(tally: Tally, placed: dict[int, Placed]) -> str:
    parts = []
    for conv in sorted(placed):
        rows = [(q, a) for q, a in tally.rows if q.conv == conv]
        ranks = [first_hit(placed, q, a) for q, a in rows]
        top1 = sum(1 for r in ranks if r == 1) / len(rows)
        top5 = sum(1 for r in ranks if r is not None and r <= 5) / len(rows)
        parts.append(f"{conv}: {top1:.2f}/{top5:.2f}")
    return "per workspace top1/top5  " + "  ".join(parts)


# ---- the context pack -------------------------------------------------------------------------------------------

def packs(placed: dict[int, Placed], questions: list[Question], budget: int) -> tuple[str, list[tuple[bool, int]]]:
    """The table's line for the pack at `budget`, and each question's (pack holds an answer turn, tokens used)."""
    each: list[tuple[bool, int]] = []
    secs: list[float] = []
    for q in questions:
        p = placed[q.conv]
        start = time.perf_counter()
        pack = build_context(p.ws, q.text, [], budget)
        secs.append(time.perf_counter() - start)
        text = locomo.normalise(pack.text())
        each.append((any(t in text for t in p.evidence_texts(q)), pack.tokens()))
    held = sum(1 for h, _ in each if h) / len(questions)
    return (f"{'context pack':<24}{budget:>8}{len(questions):>7}{held:>12.2f}"
            f"{statistics.median(t for _, t in each):>15.0f}{pct(secs, 0.5) * 1000:>9.1f}{pct(secs, 0.95) * 1000:>9.1f}",
            each)


def dump(path: Path, placed: dict[int, Placed], systems: list[tuple[str, Tally]],
         packed: dict[int, list[tuple[bool, int]]]) -> None:
    """One JSON line a question: what each system returned and where the first hit stood, and the packs."""
    with path.open("w", encoding="utf-8") as fh:
        for i, (q, _) in enumerate(systems[0][1].rows):
            p = placed[q.conv]
            line: dict[str, object] = {
                "conv": q.conv, "question": q.text, "category": CATEGORIES[q.category], "answer": q.answer,
                "evidence": list(q.evidence), "evidence_paths": sorted(p.evidence_paths(q)),
                "systems": {name.strip(): {"rank": first_hit(placed, q, t.rows[i][1]), "paths": list(t.rows[i][1].paths)}
                            for name, t in systems},
                "packs": {str(budget): {"answer_turn": each[i][0], "tokens": each[i][1]} for budget, each in packed.items()},
            }
            fh.write(json.dumps(line, ensure_ascii=False) + "\n")


PACK_HEADER = f"{'':<24}{'budget':>8}{'n':>7}{'answer turn':>12}{'median tokens':>15}{'p50 ms':>9}{'p95 ms':>9}"


# ---- runs -------------------------------------------------------------------------------------------------------

def per_conversation(convs: list[Conversation], root: Path, config: Path | None, out: list[str],
                     dump_to: Path | None = None) -> None:
    """Each conversation in its own workspace: kbsync, its legs, BM25, the context pack."""
    placed = {}
    took: dict[str, float] = {}
    for c in convs:
        ws = make_workspace(root / f"conv-{c.index}", config)
        placed[c.index] = place(ws, c)
        index(ws, config, took)
    questions = [q for c in convs for q in c.questions]
    tallies: dict[str, Tally] = {}
    for c in convs:
        for name, ranker in rankers(placed[c.index].ws):
            ask(ranker, c.questions, tallies.setdefault(name, Tally()))
    systems = list(tallies.items())
    kb, base = tallies["kbsync search"], tallies[BASELINE]
    sessions = sum(len(c.sessions) for c in convs)
    out.append(f"LoCoMo conversations {','.join(str(c.index) for c in convs)}: one workspace each "
               f"({sessions} sessions), {len(questions)} questions of categories 1-4; {built(took)}; kbsync "
               f"search keeps {placed[convs[0].index].ws.config.search.per_source} results a source ([search] per_source)")
    out.append(HEADER)
    for name, tally in systems:
        out += table(name, tally, placed)
    if any(p for _, a in kb.rows for p in a.passages):
        out += table("kbsync, passage level", kb, placed, first_passage_hit)
    out.append(per_workspace(kb, placed))
    base_top5 = sum(1 for q, a in base.rows if (r := first_hit(placed, q, a)) is not None and r <= 5)
    kb_top5 = sum(1 for q, a in kb.rows if (r := first_hit(placed, q, a)) is not None and r <= 5)
    out.append(f"kbsync top5 / BM25 top5 = {kb_top5 / max(1, base_top5):.2f}")
    out.append("")
    out.append(PACK_HEADER)
    packed = {}
    for budget in BUDGETS:
        line, packed[budget] = packs(placed, questions, budget)
        out.append(line)
    if dump_to:
        dump(dump_to, placed, systems, packed)


def in_corpus(convs: list[Conversation], size: int, cache: Path, root: Path, config: Path | None,
              out: list[str]) -> None:
    """Every conversation saved into one copy of the `size`-session generated corpus: top-5 there."""
    from common import corpus

    work = root / f"corpus-{size}"
    shutil.copytree(corpus(cache, size), work, ignore=shutil.ignore_patterns(".kbsync"))
    ws = make_workspace(work, config)
    placed = {c.index: place(ws, c) for c in convs}
    took: dict[str, float] = {}
    index(ws, config, took)
    questions = [q for c in convs for q in c.questions]
    out.append(f"Inside the {size:,}-session generated corpus ({len(questions)} questions, "
               f"{sum(len(c.sessions) for c in convs)} LoCoMo sessions added; {built(took)})")
    out.append(HEADER)
    for name, ranker in rankers(ws):
        tally = Tally()
        ask(ranker, questions, tally)
        out += table(name, tally, placed)


def cross_language(convs: list[Conversation], root: Path, config: Path | None, out: list[str]) -> None:
    """The selected conversations and the Chinese sessions of bench/data/crosslang.json in one workspace:
    Chinese questions about the English sessions, English questions about the Chinese ones."""
    cs = crosslang.load()
    ws = make_workspace(root / "crosslang", config)
    placed = {c.index: place(ws, c) for c in convs}
    zh_paths = {key: save_session(ws, crosslang.payload(e), key).relpath for key, e in cs.zh_sessions.items()}
    index(ws, config, {})
    directions = {
        "zh -> en": [(q.question, {placed[q.conv].paths[n] for n in q.sessions}) for q in cs.zh_about_en
                     if q.conv in placed and all(n in placed[q.conv].paths for n in q.sessions)],
        "en -> zh": [(q.question, {zh_paths[q.session]}) for q in cs.en_about_zh],
    }
    systems = rankers(ws)
    total = len(zh_paths) + sum(len(p.paths) for p in placed.values())
    out.append(f"Cross-language: one workspace of {total} sessions ({len(zh_paths)} Chinese); chance top5 "
               f"{min(1.0, 5 / total):.2f}")
    out.append(HEADER.replace("category", "direction"))
    for name, ranker in systems:
        for i, (direction, probes) in enumerate(directions.items()):
            if not probes:
                continue
            answers, ranks = [], []
            for text, want in probes:
                start = time.perf_counter()
                paths, passages = ranker(text)
                answers.append(Answer(paths, passages, time.perf_counter() - start))
                ranks.append(next((j for j, p in enumerate(paths, start=1) if p in want), None))
            out.append(row(name if i == 0 else "", direction, ranks, answers))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("data", type=Path, help="LoCoMo's locomo10.json")
    ap.add_argument("--convs", default="0-4", help="conversations to use, e.g. 0-4 or 0,2 (default 0-4)")
    ap.add_argument("--held-out", action="store_true", help="allow conversations 5-9 (held out: never tune on them)")
    ap.add_argument("--corpus", type=int, default=0, metavar="N", help="also measure inside the N-session corpus")
    ap.add_argument("--config", type=Path, metavar="FILE",
                    help="kbsync configuration file for every workspace (default: each one's own, the defaults)")
    ap.add_argument("--dump", type=Path, metavar="FILE",
                    help="write one JSON line a question: each system's results and first hit, the packs")
    ap.add_argument("--no-crosslang", action="store_true", help="leave out the cross-language set")
    ap.add_argument("--limit", type=int, default=0, metavar="N", help="ask only the first N questions of each")
    ap.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "kbsync-bench",
                    help="where generated corpora are cached")
    a = ap.parse_args(argv)
    try:
        picked = locomo.parse_range(a.convs)
    except ValueError:
        ap.error(f"--convs {a.convs!r}: give indexes such as 0-4 or 0,2")
    if any(i not in TUNING for i in picked) and not a.held_out:
        ap.error("conversations 5-9 are held out; name them with --held-out, only to check a result")
    try:
        every = locomo.load(a.data)
        crosslang.load()
    except (locomo.DataError, crosslang.CrossError) as exc:
        sys.exit(f"bench: {exc}")
    missing = [i for i in picked if i >= len(every)]
    if missing:
        ap.error(f"--convs: {a.data} has {len(every)} conversations; no {', '.join(map(str, missing))}")
    convs = [every[i] for i in picked]
    if a.limit:
        convs = [Conversation(c.index, c.speakers, c.sessions, c.questions[:a.limit]) for c in convs]
    phases: list[Callable[[Path, list[str]], None]] = [lambda tmp, out: per_conversation(convs, tmp, a.config, out, a.dump)]
    if not a.no_crosslang:
        phases.append(lambda tmp, out: cross_language(convs, tmp, a.config, out))
    if a.corpus:
        phases.append(lambda tmp, out: in_corpus(convs, a.corpus, a.out, tmp, a.config, out))
    with tempfile.TemporaryDirectory(prefix="kbsync-locomo-") as tmp:
        for i, phase in enumerate(phases):
            out: list[str] = [""] if i else []
            try:
                phase(Path(tmp), out)
            except KbsyncError as exc:
                sys.exit(f"bench: {exc}")
            print("\n".join(out), flush=True)  # each table as soon as it is measured: a long run shows progress
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
