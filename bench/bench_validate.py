"""Validate and repair on the generated corpus, against `rg -l '^status:' sessions` in the same run.

    python bench/bench_validate.py [--sizes 3000 12000 48000] [--runs 5] [--out DIR]

Prints, per size: median wall time of `kbsync validate` over the whole workspace (a new process each
run), its peak RSS, the same for `kbsync repair` on a copy generated with --dirty 0.05, and rg's time.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

from common import KBSYNC, corpus, median, need, spawned, timed


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[3000, 12000, 48000])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "kbsync-bench")
    a = ap.parse_args()
    rg = need("rg")
    print(f"{'sessions':>8} {'validate s':>10} {'MB':>5} {'repair s':>9} {'MB':>5} {'rg s':>6} {'validate/rg':>11} {'s per 1k':>8}")
    for n in a.sizes:
        clean = corpus(a.out, n)
        dirty = corpus(a.out, n, dirty=0.05)
        v, vm, r, rm, g = [], [], [], [], []
        for _ in range(a.runs):
            wall, _cpu, mb, code = spawned([*KBSYNC, "-w", str(clean), "validate"])
            assert code == 0, f"validate exit {code}"
            v.append(wall)
            vm.append(mb)
            g.append(timed([rg, "-l", "^status:", "sessions"], cwd=clean)[0])
            work = a.out / "repair-work"
            shutil.rmtree(work, ignore_errors=True)
            shutil.copytree(dirty, work, symlinks=True)
            wall, _cpu, mb, code = spawned([*KBSYNC, "-w", str(work), "repair"])
            r.append(wall)
            rm.append(mb)
        print(f"{n:>8} {median(v):>10.2f} {max(vm):>5} {median(r):>9.2f} {max(rm):>5} {median(g):>6.3f} "
              f"{median(v) / median(g):>11.1f} {median(v) / n * 1000:>8.3f}")


if __name__ == "__main__":
    main()
