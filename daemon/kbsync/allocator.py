"""The C allocator of a long-running kbsync process (the daemon, `kbsync web serve`, `kbsync mcp`), set so
that memory freed goes back to the system.

Two defaults of glibc's malloc kept tens of MB mapped that nothing used any more:
- The mmap threshold moves: a block of N bytes got by mmap and freed raises it to N (and the trim threshold
  to 2N), so later blocks up to that size come from the heaps and their space stays there once freed. The
  daemon's first catch-up reads, decodes and scans the whole index.md (blocks of several MB each).
- Every thread that allocates may get an arena of its own (up to eight per core), each keeping what was
  freed in it: the worker, the jobs, the search threads, the server's request threads.
`tune()` fixes both thresholds at glibc's own start value and allows ARENAS arenas. On 12,000 sessions the
settled daemon went from about 117 to 81 MB resident (docs/benchmarks.md). A value the environment sets
(MALLOC_MMAP_THRESHOLD_, MALLOC_TRIM_THRESHOLD_, MALLOC_ARENA_MAX, read by glibc itself) is left as given.
Elsewhere than glibc (macOS, musl) nothing is done.
"""

from __future__ import annotations

import os
from typing import Any

THRESHOLD = 128 * 1024  # glibc's start value of both thresholds
ARENAS = 2
# mallopt's parameter numbers (malloc.h) and the environment variable that sets each
_SETTINGS = ((-3, "MALLOC_MMAP_THRESHOLD_", THRESHOLD), (-1, "MALLOC_TRIM_THRESHOLD_", THRESHOLD),
             (-8, "MALLOC_ARENA_MAX", ARENAS))


def tune() -> bool:
    """Set the allocator as above, before the process starts its threads; True when glibc took the settings."""
    libc = _glibc()
    if libc is None:
        return False
    taken = [libc.mallopt(param, value) == 1 for param, name, value in _SETTINGS if name not in os.environ]
    return all(taken)


def release() -> bool:
    """Give the free memory inside the heaps back to the system (glibc's malloc_trim), after work that freed
    much in small blocks (the trim threshold returns only the heap's top; a search index build frees a page
    cache and a full-text buffer of tens of MB in 4 KB pages spread over it). True when glibc released some."""
    libc = _glibc()
    return libc is not None and bool(libc.malloc_trim(0))


def _glibc() -> Any:
    """The process's C library when it is glibc (a ctypes handle), else None."""
    try:
        if "glibc" not in (os.confstr("CS_GNU_LIBC_VERSION") or ""):
            return None
    except (ValueError, OSError):  # a C library that does not know the name
        return None
    import ctypes

    return ctypes.CDLL(None)
