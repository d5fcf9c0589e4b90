"""Sync memory: the peak RSS of a sync that meets a large file on the remote, against the process's idle figure.

    python bench/bench_sync_memory.py [--mb 200] [--accepted-mb 24] [--runs 3]

A workspace (`kbsync init`) syncing with a bare repository; another clone pushes one commit adding
`artifacts/zeros.bin`, --mb MB of zeros (a few hundred KB once compressed). A child process opens the
workspace, reads its resident size (VmRSS: the idle figure), resets the kernel's peak counter
(/proc/self/clear_refs), runs one sync and reads the peak (VmHWM). The baseline, in the same run, is the
same sync meeting a 1 KB file instead; between them, a file of --accepted-mb (under the default limit for
artifacts/, 25 MB, so the sync takes it). Reported, medians of --runs: the sync's peak above idle in MB for both
(target for the large file: under 100 MB above idle); in git mode also the peak RSS of git's own processes
fetching the same commit into an empty repository, run as kbsync runs it (`-c core.bigFileThreshold=1m`) and
as plain `git fetch` (the baseline); the sync's exit code and its message. The bare repository streams big
blobs on its side too (its core.bigFileThreshold), as a server would, so the fetch figures are the receiving
side's. Both modes: git (a bare repository) and github-api (the
local test server over one, real HTTP on 127.0.0.1).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from common import REPO, median, spawned

sys.path.insert(0, str(REPO / "tests"))

from helpers.ghserver import GitHubServer  # noqa: E402
from kbsync.git.repo import FETCH_STREAM_BYTES  # noqa: E402

TOKEN_ENV = "KBSYNC_BENCH_TOKEN"
FETCH_ARGS = ["-c", f"core.bigFileThreshold={FETCH_STREAM_BYTES}"]  # as kbsync's fetch runs git

CHILD = r"""
import json, sys
from kbsync.config import resolve
from kbsync.errors import KbsyncError
from kbsync.store.workspace import Workspace
from kbsync.sync.syncer import sync

def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1]) // 1024
    raise SystemExit(key)

root, cfg = resolve(sys.argv[1], None)
ws = Workspace(root, cfg)
idle = status("VmRSS")
open("/proc/self/clear_refs", "w").write("5")
try:
    said, code = str(sync(ws)), 0
except KbsyncError as exc:
    said, code = str(exc), exc.exit_code
print(json.dumps({"idle": idle, "peak": status("VmHWM"), "code": code, "said": said}))
"""


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True, text=True).stdout.strip()


def kbsync(*args: str, env: dict[str, str] | None = None) -> None:
    subprocess.run([sys.executable, "-m", "kbsync", *args], check=True, capture_output=True,
                   env={**os.environ, **(env or {})})


def push_file(bare: Path, tmp: Path, name: str, mb: float) -> None:
    """Another clone pushes `artifacts/<name>` holding `mb` MB of zeros."""
    other = tmp / f"pusher-{name}"
    git(tmp, "clone", "-q", str(bare), str(other))
    (other / "artifacts").mkdir(exist_ok=True)
    with open(other / "artifacts" / name, "wb") as fh:
        left = int(mb * 1024 * 1024)
        while left:
            left -= fh.write(bytes(min(left, 1 << 20)))
    git(other, "add", "-A")
    git(other, "-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit", "-qm", f"add {name}")
    git(other, "push", "-q", "origin", "HEAD:main")


def fetch_mb(bare: Path, tmp: Path, args: list[str]) -> int:
    """Peak RSS in MB of `git fetch` of the remote's branch into an empty repository, with `args` before it."""
    fetcher = Path(tempfile.mkdtemp(dir=tmp))
    git(fetcher, "init", "-q")
    _wall, _cpu, mb, _code = spawned(["git", "-C", str(fetcher), *args, "fetch", "-q", str(bare), "main"])
    return mb


def measure(root: Path, env: dict[str, str]) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-c", CHILD, str(root)], capture_output=True, text=True,
                          env={**os.environ, **env}, check=False)
    if done.returncode != 0:
        raise SystemExit(f"bench: the measured sync failed: {done.stderr.strip()[-400:]}")
    figures: dict[str, object] = json.loads(done.stdout)
    return figures


def one(mode: str, mb: float, tmp: Path) -> dict[str, object]:
    """One workspace in `mode`, synced once, then a sync meeting a pushed file of `mb` MB, measured."""
    bare = tmp / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(bare)], check=True)
    git(bare, "config", "core.bigFileThreshold", "1m")  # the remote's own side streams too, as a server's would
    root = tmp / "ws"
    kbsync("-w", str(root), "init")
    git(root, "remote", "add", "origin", str(bare))
    config = "[daemon]\nquiet_ms = 0\n"
    if mode == "git":
        (root / ".kbsync" / "config.toml").write_text(config, encoding="utf-8")
        kbsync("-w", str(root), "sync")
        push_file(bare, tmp, "zeros.bin", mb)
        return {**measure(root, {}), "git": fetch_mb(bare, tmp, FETCH_ARGS), "plain": fetch_mb(bare, tmp, [])}
    with GitHubServer(bare) as srv:
        config += (f'[sync]\nmode = "github-api"\n\n[github]\napi_url = "{srv.url}"\n'
                   f'repository = "{srv.repository}"\ntoken_env = "{TOKEN_ENV}"\n')
        (root / ".kbsync" / "config.toml").write_text(config, encoding="utf-8")
        env = {TOKEN_ENV: srv.token}
        kbsync("-w", str(root), "sync", env=env)
        kbsync("-w", str(root), "sync", env=env)  # the first sync seeded the empty repository with one file
        push_file(bare, tmp, "zeros.bin", mb)
        return {**measure(root, env), "git": None, "plain": None}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=200.0)
    ap.add_argument("--accepted-mb", type=float, default=24.0)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    print(f"{'mode':<11} {'file':>9} {'idle MB':>8} {'peak-idle MB':>13} {'its fetch MB':>13} {'plain fetch MB':>15} "
          f"{'exit':>5}  said")
    for mode in ("git", "github-api"):
        for mb in (1 / 1024, args.accepted_mb, args.mb):
            runs = []
            for _ in range(args.runs):
                with tempfile.TemporaryDirectory(prefix="kbsync-bench-mem-") as tmp:
                    runs.append(one(mode, mb, Path(tmp)))
            above = median([float(str(r["peak"])) - float(str(r["idle"])) for r in runs])
            idle = median([float(str(r["idle"])) for r in runs])
            fetched = [float(str(r["git"])) for r in runs if r["git"] is not None]
            plain = [float(str(r["plain"])) for r in runs if r["plain"] is not None]
            kids = (f"{median(fetched):13.0f} {median(plain):15.0f}" if fetched else f"{'-':>13} {'-':>15}")
            last = runs[-1]
            size = "1 KB" if mb < 1 else f"{mb:g} MB"
            print(f"{mode:<11} {size:>9} {idle:8.0f} {above:13.0f} {kids} {last['code']!s:>5}  "
                  f"{str(last['said'])[:110]}")


if __name__ == "__main__":
    main()
