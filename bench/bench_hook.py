"""Benchmark: `git commit` with the kbsync pre-commit hook vs without, and secret-scan throughput vs rg.

    python bench/bench_hook.py [--sessions 3000] [--runs 5]

Prints medians of several runs. Commit times include process start-up (git's and
the hook's Python). The scanner is timed in-process over every corpus file, as it
runs (normalising and decoding encoded runs) and without that step; `rg` runs the
same rule regexes (those its regex engine accepts) over the same files.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from common import KBSYNC, corpus, median, need, timed
from kbsync.core.detect.secrets import default_rules, is_binary, scan_text


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def new_repo(path: Path, hook: bool) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "bench")
    git(path, "config", "user.email", "bench@example.org")
    if hook:
        subprocess.run([*KBSYNC, "hook", "install"], cwd=path, check=True, capture_output=True)
    return path


def commit_times(ws: Path, work: Path, files: int, runs: int, hook: bool) -> tuple[float, float]:
    """Median wall seconds of `git commit` and of the hook alone, each run staging `files` new sessions."""
    sessions = sorted((ws / "sessions").rglob("*.md"))
    repo = new_repo(work / f"repo-{files}-{'hook' if hook else 'plain'}", hook)
    commits, hooks = [], []
    for run in range(runs):
        for src in sessions[run * files:(run + 1) * files]:
            dest = repo / src.relative_to(ws)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dest)
        git(repo, "add", "-A")
        if hook:
            hooks.append(timed([*KBSYNC, "hook", "pre-commit"], cwd=repo)[0])
        wall, _rss, code = timed(["git", "commit", "-q", "-m", f"run {run}"], cwd=repo)
        assert code == 0, f"commit failed in {repo}"
        commits.append(wall)
    return median(commits), median(hooks) if hooks else 0.0


def scanner_mb_s(files: list[Path], runs: int, decode: bool) -> tuple[float, float]:
    """(MB scanned, MB/s) of the secret scan over `files`, with or without seeing through encodings."""
    data = [(p.name, p.read_bytes()) for p in files]
    size = sum(len(d) for _, d in data) / 1e6
    default_rules()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        found = sum(len(scan_text(name, d.decode("utf-8", "replace"), decode=decode))
                    for name, d in data if not is_binary(d))
        times.append(time.perf_counter() - start)
    assert found == 0, "the corpus should hold no secrets"
    return size, size / median(times)


_NEEDLESS_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)\\(['\"/])")  # an unescaped backslash before ' " /
RG = ["--no-config", "--regex-size-limit", "1G", "--dfa-size-limit", "1G"]


def for_rg(pattern: str) -> str:
    """The same regex in rg's syntax: Python tolerates escaped quotes and slashes, rg does not."""
    return _NEEDLESS_ESCAPE.sub(r"\1\2", pattern)


def rg_patterns(rg: str, out: Path) -> int:
    """The rule regexes rg accepts, one per line in `out`; how many."""
    ok = [p for p in (for_rg(r.regex) for r in default_rules().rules)
          if subprocess.run([rg, *RG, "-q", "-e", p, "-"], input=b"", capture_output=True).returncode in (0, 1)]
    out.write_text("\n".join(ok) + "\n")
    return len(ok)


def rg_mb_s(rg: str, ws: Path, size: float, patterns: Path, runs: int) -> float:
    times = [timed([rg, *RG, "-c", "-U", "-f", str(patterns), str(ws)])[0] for _ in range(runs)]
    return size / median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=3000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    rg = need("rg")
    with tempfile.TemporaryDirectory(prefix="kbsync-bench-hook-") as tmp:
        work = Path(tmp)
        ws = corpus(work, args.sessions)
        start_up = median([timed([*KBSYNC, "--version"])[0] for _ in range(args.runs)])
        print(f"start-up of `kbsync --version` (reference): {start_up:.3f} s")
        for count in (1, 100):
            plain, _ = commit_times(ws, work, count, args.runs, hook=False)
            hooked, alone = commit_times(ws, work, count, args.runs, hook=True)
            print(f"git commit, {count:>3} staged session file(s): without hook {plain:.3f} s, "
                  f"with hook {hooked:.3f} s (hook alone {alone:.3f} s, adds {hooked - plain:.3f} s)")
        files = [p for p in ws.rglob("*") if p.is_file()]
        size, plain = scanner_mb_s(files, args.runs, decode=False)
        _size, mb_s = scanner_mb_s(files, args.runs, decode=True)
        kept = rg_patterns(rg, work / "patterns.txt")
        print(f"secret scan over {len(files)} files, {size:.1f} MB: kbsync {mb_s:.1f} MB/s decoding encoded runs, "
              f"{plain:.1f} MB/s without ({plain / mb_s:.2f}x slower with); "
              f"rg with {kept}/{len(default_rules().rules)} of the same regexes "
              f"{rg_mb_s(rg, ws, size, work / 'patterns.txt', args.runs):.1f} MB/s")


if __name__ == "__main__":
    main()
