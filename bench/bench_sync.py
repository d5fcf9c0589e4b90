"""Sync: HTTP requests and wall time per API sync; git-mode sync against plain git on the same change.

    python bench/bench_sync.py [--sessions 2000] [--runs 5] [--sizes 1,10,100]

On a generated workspace (bench/gen_workspace.py, or $KBSYNC_GEN: see bench/common.py), for 1,
10 and 100 changed session files:
 (a) github-api mode against the local test server (tests/helpers/ghserver.py, real HTTP on
     127.0.0.1 over a bare repository): HTTP requests of one `sync` (target: changed blobs
     + at most 5) and its wall time, in process;
 (b) git mode: `kbsync sync` (a new process: commit, fetch, integrate, push) against
     `git add -A && git commit && git pull --rebase && git push` on a clone of the same
     repository. Before each run of either, a third clone pushes one commit, so both always
     pull: that commit and the other contender's last push (the same number of changed files).
Medians of --runs; kbsync is byte-compiled first, as an installed package is.

    python bench/bench_sync.py --contention 20 --rounds 5 [--contention-sessions 200]

 (c) contention: N workspaces cloned from one repository, every other one syncing over the
     API (the local test server over that repository) and the rest over git; in each of M
     rounds every workspace sets one fact of its own (`kbsync memory set`) and then all N run
     `kbsync sync --json` at once, each a new process. Reported: rounds per sync p50/p95/max,
     requests per API sync p50/p95, conflict copies made, wall seconds per sync p95, and any
     exit 3 (targets at 20 x 5: no exit 3, requests per API sync p95 at most 30). At the end
     every workspace has every fact and the same tree as the remote.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from common import KBSYNC, REPO, corpus, median, timed

sys.path.insert(0, str(REPO / "tests"))

import requests  # noqa: E402

from helpers.ghserver import GitHubServer  # noqa: E402
from kbsync.config import resolve
from kbsync.store.workspace import Workspace
from kbsync.sync.state import known_remote
from kbsync.sync.syncer import sync
from kbsync.sync.transports.github import ApiTransport
from kbsync.sync.transports.githubclient import GitHubApi

CONFIG = "[daemon]\nquiet_ms = 0\n"


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout.strip()


def seeded_remote(src: Path, tmp: Path) -> Path:
    """A bare repository holding the generated workspace as one commit."""
    work = tmp / "seed"
    shutil.copytree(src, work)
    git(tmp, "init", "-q", "-b", "main", str(work))
    (work / ".gitignore").write_text(".kbsync/\n*.tmp\n*.lock\n", encoding="utf-8")
    git(work, "add", "-A")
    git(work, "-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit", "-qm", "corpus")
    bare = tmp / "remote.git"
    git(tmp, "clone", "-q", "--bare", str(work), str(bare))
    return bare


def clone(bare: Path, dest: Path) -> Path:
    git(bare.parent, "clone", "-q", str(bare), str(dest))
    git(dest, "config", "user.name", "bench")
    git(dest, "config", "user.email", "bench@localhost")
    (dest / ".kbsync").mkdir(exist_ok=True)
    (dest / ".kbsync" / "config.toml").write_text(CONFIG, encoding="utf-8")
    return dest


def sessions(root: Path) -> list[Path]:
    return sorted((root / "sessions").rglob("*.md"))


def touch(files: list[Path], n: int, tag: str) -> None:
    for f in files[:n]:
        with open(f, "a", encoding="utf-8") as fh:
            fh.write(f"\n{tag}\n")


def other_writer(bare: Path, tmp: Path, n: int) -> None:
    """Another machine pushes one changed file, so every timed sync has something to pull."""
    other = tmp / "other"
    if not other.exists():
        clone(bare, other)
    git(other, "pull", "-q", "--rebase")
    with open(other / "logs" / "tool-calls.md", "a", encoding="utf-8") as fh:
        fh.write(f"2025-06-11T00:00:00Z | bench | other-{n} | ok\n")
    git(other, "commit", "-qam", f"other {n}")
    git(other, "push", "-q")


def api_figures(bare: Path, tmp: Path, sizes: list[int], runs: int) -> None:
    print("(a) github-api mode, local test server")
    print(f"{'changed':>8} {'requests':>9} {'target':>7} {'wall s':>8}")
    with GitHubServer(bare) as srv:
        root = clone(bare, tmp / "api-ws")
        git(root, "remote", "remove", "origin")
        _root, cfg = resolve(str(root), None)
        ws = Workspace(root, cfg)

        def once() -> tuple[int, float]:
            api = GitHubApi(requests.Session(), api_url=srv.url, repository=srv.repository, token=srv.token)
            transport = ApiTransport(root, api, "main", ("bench", "bench@localhost"), known_remote(ws))
            before, start = len(srv.log), time.perf_counter()
            sync(ws, transport)
            return len(srv.log) - before, time.perf_counter() - start

        once()  # the first sync: takes the remote as the base
        files = sessions(root)
        for n in sizes:
            counts, walls = [], []
            for r in range(runs):
                touch(files, n, f"api bench {n} {r}")
                count, wall = once()
                counts.append(count)
                walls.append(wall)
            print(f"{n:>8} {int(median(counts)):>9} {n + 5:>7} {median(walls):>8.2f}")


def git_figures(bare: Path, tmp: Path, sizes: list[int], runs: int) -> None:
    print("(b) git mode: `kbsync sync` against `git add -A && git commit && git pull --rebase && git push`")
    print(f"{'changed':>8} {'kbsync s':>9} {'git s':>7} {'ratio':>6}")
    kb, plain = clone(bare, tmp / "kb-ws"), clone(bare, tmp / "plain-ws")
    kb_files, plain_files = sessions(kb), sessions(plain)[::-1]  # apart, so that neither conflicts
    script = "git add -A && git commit -qm bench && git pull -q --rebase && git push -q"
    for n in sizes:
        ours, theirs = [], []
        for r in range(runs):
            other_writer(bare, tmp, 2 * r)
            touch(kb_files, n, f"kb bench {n} {r}")
            wall, _rss, code = timed([*KBSYNC, "-w", str(kb), "sync"])
            assert code == 0, f"kbsync sync exited {code}"
            ours.append(wall)
            other_writer(bare, tmp, 2 * r + 1)
            touch(plain_files, n, f"plain bench {n} {r}")
            wall, _rss, code = timed(["bash", "-c", script], cwd=plain)
            assert code == 0, f"plain git exited {code}"
            theirs.append(wall)
        print(f"{n:>8} {median(ours):>9.2f} {median(theirs):>7.2f} {median(ours) / median(theirs):>6.2f}")


TOKEN_ENV = "KBSYNC_BENCH_TOKEN"


def contention_ws(bare: Path, dest: Path, srv: GitHubServer | None) -> Path:
    """A clone of `bare`; with `srv`, set to sync over the API (its git remote removed)."""
    root = clone(bare, dest)
    if srv is not None:
        git(root, "remote", "remove", "origin")
        (root / ".kbsync" / "config.toml").write_text(
            CONFIG + f'[sync]\nmode = "github-api"\n\n[github]\napi_url = "{srv.url}"\n'
            f'repository = "{srv.repository}"\ntoken_env = "{TOKEN_ENV}"\n', encoding="utf-8")
    return root


def one_sync(root: Path, env: dict[str, str]) -> dict[str, object]:
    start = time.perf_counter()
    done = subprocess.run([*KBSYNC, "-w", str(root), "sync", "--json"], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - start
    data: dict[str, object] = json.loads(done.stdout) if done.stdout.strip().startswith("{") else {}
    return {**data, "exit": done.returncode, "wall": wall, "stderr": done.stderr.strip()[-300:]}


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered) + 0.5) - 1))] if ordered else 0.0


def contention_figures(bare: Path, tmp: Path, machines: int, rounds: int) -> None:
    print(f"(c) contention: {machines} workspaces (every other one over the API), {rounds} rounds")
    env = {k: v for k, v in os.environ.items() if not k.startswith("KBSYNC_")}
    with GitHubServer(bare) as srv:
        env[TOKEN_ENV] = srv.token
        roots = [contention_ws(bare, tmp / f"m{i:02d}", srv if i % 2 == 0 else None) for i in range(machines)]
        results: list[dict[str, object]] = []
        start = time.perf_counter()
        with ThreadPoolExecutor(machines) as pool:
            for r in range(rounds):
                for i, root in enumerate(roots):
                    done = subprocess.run([*KBSYNC, "-w", str(root), "memory", "set", f"m{i}-r{r}", f"value {i} {r}"],
                                          capture_output=True, text=True, env=env)
                    assert done.returncode == 0, done.stderr
                results += list(pool.map(lambda root: one_sync(root, env), roots))
            for _ in range(2):  # settle: each machine takes what the others pushed last
                results_settle = list(pool.map(lambda root: one_sync(root, env), roots))
        total = time.perf_counter() - start
        report(results, results_settle, roots, bare, machines, rounds, total)


def report(results: list[dict[str, object]], settle: list[dict[str, object]], roots: list[Path], bare: Path,
           machines: int, rounds: int, total: float) -> None:
    spins = [float(str(x.get("rounds", 0))) for x in results]
    api = [float(str(x.get("requests", 0))) for x in results if x.get("mode") == "github-api"]
    failed = [x for x in results + settle if x["exit"] == 3]
    other = [x for x in results + settle if x["exit"] not in (0, 1, 3)]
    tree = git(bare, "ls-tree", "-r", "--name-only", "main").splitlines()
    copies = [p for p in tree if ".conflict-" in p]
    facts = git(bare, "show", "main:memory/facts.md")
    missing = [f"m{i}-r{r}" for i in range(machines) for r in range(rounds) if f"- m{i}-r{r}:" not in facts]
    same = all(git(root, "rev-parse", "HEAD^{tree}") == git(bare, "rev-parse", "main^{tree}") for root in roots)
    print(f"{'syncs':>6} {'rounds p50':>10} {'p95':>4} {'max':>4} {'API req p50':>11} {'p95':>4} "
          f"{'copies':>6} {'wall p95 s':>10} {'exit 3':>6}")
    print(f"{len(results):>6} {pct(spins, 50):>10.0f} {pct(spins, 95):>4.0f} {max(spins):>4.0f} "
          f"{pct(api, 50):>11.0f} {pct(api, 95):>4.0f} {len(copies):>6} "
          f"{pct([float(str(x['wall'])) for x in results], 95):>10.2f} {len(failed):>6}")
    print(f"facts missing on the remote: {len(missing)}; every workspace at the remote's tree: {same}; "
          f"total {total:.1f} s")
    for x in failed + other:
        print(f"  exit {x['exit']}: {x['stderr']}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--sizes", default="1,10,100")
    ap.add_argument("--contention", type=int, metavar="N", help="run only the contention run with N workspaces")
    ap.add_argument("--rounds", type=int, default=5, help="rounds of the contention run (default 5)")
    ap.add_argument("--contention-sessions", type=int, default=200, help="sessions in its repository (default 200)")
    args = ap.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="kbsync-bench-sync-") as name:
        tmp = Path(name)
        if args.contention:
            src = corpus(tmp, args.contention_sessions)
            contention_figures(seeded_remote(src, tmp / "c"), tmp / "c", args.contention, args.rounds)
            return
        src = corpus(tmp, args.sessions)
        print(f"workspace: {args.sessions} generated sessions; medians of {args.runs} runs")
        api_figures(seeded_remote(src, tmp / "api"), tmp / "api", sizes, args.runs)
        git_figures(seeded_remote(src, tmp / "git"), tmp / "git", sizes, args.runs)


if __name__ == "__main__":
    main()
