"""kbsync.allocator: once tuned, memory a long-running process frees goes back to the system, also after a
large block was freed (which moves glibc's own thresholds up by default). Each case runs in a fresh
interpreter, since the settings last for the process."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from kbsync import allocator

PROBE = """
import sys
from kbsync import allocator
if sys.argv[1] == "tuned":
    assert allocator.tune()
def rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 // (1 << 20)
base = rss_mb()
big = bytearray(16 << 20)
del big  # an mmapped block freed: by default glibc now serves blocks up to its size from the heap
blocks = [bytearray(1 << 20) for _ in range(64)]
del blocks[:-1]  # all but the last one, which holds the heap's top
print(rss_mb() - base)
"""


def kept_mb(mode: str, **malloc_env: str) -> int:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")} | malloc_env
    out = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    return int(out.stdout)


@pytest.mark.skipif(allocator._glibc() is None, reason="glibc's malloc only")
def test_freed_memory_goes_back_once_tuned() -> None:
    untuned = kept_mb("default")
    if untuned < 32:
        pytest.skip(f"this C library gave the memory back by itself ({untuned} MB kept)")
    assert kept_mb("tuned") < 8


@pytest.mark.skipif(allocator._glibc() is None, reason="glibc's malloc only")
def test_a_threshold_the_environment_sets_is_left_as_given() -> None:
    assert kept_mb("tuned", MALLOC_MMAP_THRESHOLD_=str(32 << 20)) >= 32  # 1 MB blocks from the heap, as asked


RELEASE_PROBE = """
import ctypes
from kbsync import allocator
assert allocator.tune()
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
def rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 // (1 << 20)
base = rss_mb()
blocks = [libc.malloc(4096) for _ in range(16384)]  # 64 MB in pages, as SQLite's page cache takes them
for b in blocks:
    ctypes.memset(b, 1, 4096)
for b in blocks[:-1]:
    libc.free(b)  # the last one holds the heap's top: the trim threshold gives nothing back
kept = rss_mb() - base
allocator.release()
print(kept, rss_mb() - base)
"""


@pytest.mark.skipif(allocator._glibc() is None, reason="glibc's malloc only")
def test_release_gives_back_what_small_blocks_left_inside_the_heap() -> None:
    out = subprocess.run([sys.executable, "-c", RELEASE_PROBE], capture_output=True, text=True, timeout=60,
                         env={k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")})
    assert out.returncode == 0, out.stderr
    kept, released = map(int, out.stdout.split())
    assert kept >= 48 and released < 8
