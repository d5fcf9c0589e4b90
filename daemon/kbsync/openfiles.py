"""This process's limit on open files, raised as far as it may go.

The daemon holds the local server's connections beside its own files (repairs, commits, git's pipes); under
systemd's default soft limit of 1,024 a flood of connections left it none. The soft limit is raised to the
hard one (systemd's default hard limit is 524,288; the shipped units set LimitNOFILE=), and the server sizes
what it holds from the result (kbsync.web.admission).
"""

from __future__ import annotations

import logging
import resource
from pathlib import Path

log = logging.getLogger(__name__)

NR_OPEN = Path("/proc/sys/fs/nr_open")  # the kernel's ceiling when the hard limit is "unlimited"
FALLBACK_CEILING = 1 << 20


def raise_soft_limit() -> tuple[int, int]:
    """Raise the soft RLIMIT_NOFILE to the hard one; (soft before, soft after)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else _kernel_ceiling()
    if soft != resource.RLIM_INFINITY and soft >= target:
        return soft, soft
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    except (ValueError, OSError) as exc:
        log.warning("could not raise the open-files limit from %d to %d (%s); the server holds fewer connections",
                    soft, target, exc)
        return soft, soft
    log.info("open-files limit raised from %d to %d", soft, target)
    return soft, target


def _kernel_ceiling() -> int:
    try:
        return int(NR_OPEN.read_text(encoding="ascii").strip())
    except (OSError, ValueError):
        return FALLBACK_CEILING
