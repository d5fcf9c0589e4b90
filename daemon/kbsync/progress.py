"""Progress of long work: a bar on a terminal, a log line every few seconds otherwise, nothing when quiet.

`main` decides once per process (`configure`): with `-q` or `--json` nothing is shown; when standard
error is a terminal, a tqdm bar (counts, rate, estimate) appears once the work has run for a moment;
otherwise (journald, a pipe, a file) a log line every `KBSYNC_PROGRESS_EVERY` seconds (default 5) says
how far it got and about how long is left. Work that ends before then shows nothing. tqdm is imported
only when a bar is really drawn, so start-up stays fast.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from types import TracebackType
from typing import Any, Callable, Literal

log = logging.getLogger("kbsync.progress")

EVERY_ENV = "KBSYNC_PROGRESS_EVERY"
DEFAULT_EVERY_S = 5.0
BAR_DELAY_S = 1.0
Mode = Literal["off", "bar", "log"]
_mode: Mode = "log"


def configure(*, enabled: bool, terminal: bool | None = None) -> None:
    """Choose how this process shows progress; `terminal` defaults to whether stderr is a terminal."""
    global _mode
    tty = sys.stderr.isatty() if terminal is None else terminal
    _mode = "off" if not enabled else "bar" if tty else "log"


def shown() -> bool:
    """Whether this process shows progress at all (a caller may skip counting the work when it does not)."""
    return _mode != "off"


def every_s() -> float:
    """Seconds between log lines (and the bar's delay, when shorter than a second)."""
    try:
        return max(0.0, float(os.environ.get(EVERY_ENV, DEFAULT_EVERY_S)))
    except ValueError:
        return DEFAULT_EVERY_S


def eta(done: int, total: int | None, elapsed: float) -> str:
    """`about 12 s left` (or minutes), from the rate so far; "" when it cannot be told yet."""
    if not total or done <= 0 or done >= total or elapsed <= 0:
        return ""
    left = elapsed / done * (total - done)
    if left < 1:
        return "less than a second left"
    return f"about {left:.0f} s left" if left < 120 else f"about {left / 60:.0f} min left"


def line(what: str, unit: str, done: int, total: int | None, elapsed: float) -> str:
    """The log form: `index rebuild: 1200/12000 sessions (10%), about 45 s left`."""
    if not total:
        return f"{what}: {done} {unit} so far"
    pct = f" ({done * 100 // total}%)"
    left = eta(done, total, elapsed)
    return f"{what}: {done}/{total} {unit}{pct}" + (f", {left}" if left else "")


class Progress:
    """Counts of one piece of long work; use as a context manager, call `advance` per item."""

    def __init__(self, what: str, total: int | None, unit: str = "files", *,
                 clock: Callable[[], float] = time.monotonic, mode: Mode | None = None) -> None:
        self.what, self.total, self.unit, self.done = what, total, unit, 0
        self._clock = clock
        self._mode: Mode = _mode if mode is None else mode
        self._start = self._next = clock()
        self._next += every_s()
        self._bar: Any = None
        if self._mode == "bar" and total != 0:
            self._bar = _tqdm(what, total, unit, min(BAR_DELAY_S, every_s()))

    def advance(self, n: int = 1) -> None:
        self.done += n
        if self._bar is not None:
            self._bar.update(n)
        elif self._mode == "log" and self._clock() >= self._next:
            log.info("%s", line(self.what, self.unit, self.done, self.total, self._clock() - self._start))
            self._next = self._clock() + every_s()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


def _tqdm(what: str, total: int | None, unit: str, delay: float) -> Any:
    from tqdm import tqdm  # only when a bar is drawn: it costs start-up time

    return tqdm(total=total, desc=what, unit=f" {unit}", unit_scale=False, delay=delay, file=sys.stderr,
                dynamic_ncols=True, leave=False)
