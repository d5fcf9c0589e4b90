"""Each thread's CPU time in a running Python program, on request, with the standard library only (Linux).

    THREADCPU_OUT=cpu.json python bench/threadcpu.py -m kbsync -w WS run

Whenever a file named $THREADCPU_OUT.want appears, the program writes $THREADCPU_OUT (atomically): a JSON object
of thread name -> CPU seconds so far (`time.pthread_getcpuclockid`; threads of one pool, whose names differ only
by a number at the end, added up under the name without it), and "(process)", then removes the .want file.
`read(path)` asks for it and waits. Python names its threads only for itself, so /proc cannot tell them apart.
"""

from __future__ import annotations

import json
import os
import re
import runpy
import sys
import threading
import time
from pathlib import Path

POLL_S = 0.05
_NUMBERED = re.compile(r"[-_ ]?\d+$")


def snapshot() -> dict[str, float]:
    out: dict[str, float] = {}
    for thread in threading.enumerate():
        if thread.ident is None or thread.name == "threadcpu":
            continue
        try:
            cpu = time.clock_gettime(time.pthread_getcpuclockid(thread.ident))
        except (OSError, OverflowError):
            continue  # ended meanwhile
        name = _NUMBERED.sub("", thread.name)
        out[name] = out.get(name, 0.0) + cpu
    out["(process)"] = time.process_time()
    return out


def _serve(path: Path) -> None:
    want = path.with_name(path.name + ".want")
    while True:
        time.sleep(POLL_S)
        if want.exists():
            tmp = path.with_name(path.name + ".tmp")
            tmp.write_text(json.dumps(snapshot()), encoding="utf-8")
            os.replace(tmp, path)
            want.unlink(missing_ok=True)


def read(path: Path, timeout: float = 10.0) -> dict[str, float]:
    """Ask the program writing `path` for its threads' CPU seconds now, and wait for them."""
    path.unlink(missing_ok=True)
    path.with_name(path.name + ".want").touch()
    deadline = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"no answer in {path}; is the program running under bench/threadcpu.py?")
        time.sleep(POLL_S / 2)
    data: dict[str, float] = json.loads(path.read_text(encoding="utf-8"))
    return data


def main() -> None:
    if sys.argv[1:2] != ["-m"] or len(sys.argv) < 3 or "THREADCPU_OUT" not in os.environ:
        raise SystemExit("usage: THREADCPU_OUT=FILE python bench/threadcpu.py -m MODULE [ARGS...]")
    module = sys.argv[2]
    sys.argv = [module, *sys.argv[3:]]
    out = Path(os.environ["THREADCPU_OUT"])
    threading.Thread(target=_serve, args=(out,), name="threadcpu", daemon=True).start()
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
