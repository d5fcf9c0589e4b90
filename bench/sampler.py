"""A sampling profiler with the standard library only, for a process with several threads (the daemon, a
server): every few milliseconds it takes each thread's stack (sys._current_frames) and counts, per thread,
the functions on it (inclusive) and the one on top (exclusive). At exit it writes the counts and each
thread's CPU time (from /proc/self/task) to the file named by $SAMPLE_OUT.

    SAMPLE_OUT=prof.txt python bench/sampler.py -m kbsync -w WS run

Only samples in which the thread runs Python code are counted; a thread waiting in a lock, a select or
sleep still shows its waiting frame, so read the exclusive counts of waits (`wait`, `select`, `acquire`)
as idle time.
"""

from __future__ import annotations

import atexit
import collections
import os
import runpy
import signal
import sys
import threading
import time
from pathlib import Path
from types import FrameType

INTERVAL_S = 0.01
TOP = 45

inclusive: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
exclusive: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
samples: collections.Counter[str] = collections.Counter()


def _name(frame: FrameType) -> str:
    code = frame.f_code
    parts = Path(code.co_filename).parts
    short = "/".join(parts[-2:])
    return f"{short}:{code.co_name}"


def _sample() -> None:
    me = threading.get_ident()
    while True:
        time.sleep(INTERVAL_S)
        names = {t.ident: t.name for t in threading.enumerate()}
        for ident, frame in sys._current_frames().items():
            if ident == me:
                continue
            thread = names.get(ident, str(ident))
            samples[thread] += 1
            exclusive[thread][_name(frame)] += 1
            seen = set()
            f: FrameType | None = frame
            while f is not None:
                name = _name(f)
                if name not in seen:
                    inclusive[thread][name] += 1
                    seen.add(name)
                f = f.f_back


def _thread_cpu() -> list[str]:
    out = []
    tick = os.sysconf("SC_CLK_TCK")
    for task in sorted(Path("/proc/self/task").iterdir()):
        try:
            stat = (task / "stat").read_text()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        out.append(f"  tid {task.name} {name}: user {int(fields[11]) / tick:.2f} s, system {int(fields[12]) / tick:.2f} s")
    return out


def _dump() -> None:
    lines = ["threads' CPU (at exit):", *_thread_cpu()]
    for thread, n in samples.most_common():
        lines.append(f"\n== {thread}: {n} samples ==\n-- exclusive --")
        lines += [f"{c:7d} {c / n:6.1%} {name}" for name, c in exclusive[thread].most_common(TOP)]
        lines.append("-- inclusive --")
        lines += [f"{c:7d} {c / n:6.1%} {name}" for name, c in inclusive[thread].most_common(TOP)]
    Path(os.environ.get("SAMPLE_OUT", "sample.txt")).write_text("\n".join(lines) + "\n", encoding="utf-8")


def _reset(_signum: int, _frame: object) -> None:
    """SIGUSR1: start counting afresh (to profile one phase of a long run)."""
    inclusive.clear()
    exclusive.clear()
    samples.clear()


def main() -> None:
    if sys.argv[1:2] != ["-m"] or len(sys.argv) < 3:
        raise SystemExit("usage: python bench/sampler.py -m MODULE [ARGS...]")
    module = sys.argv[2]
    sys.argv = [module, *sys.argv[3:]]
    atexit.register(_dump)
    signal.signal(signal.SIGUSR1, _reset)
    threading.Thread(target=_sample, name="sampler", daemon=True).start()
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
