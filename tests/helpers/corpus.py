"""The benchmark corpus generator (bench/gen_workspace.py, the project's own), run for real."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

GEN_WORKSPACE = Path(__file__).resolve().parents[2] / "bench" / "gen_workspace.py"


def gen_workspace(out: Path, sessions: int, dirty: float = 0.0, seed: int = 7) -> Path:
    """A generated workspace at `out` that follows the protocol; with `dirty`, that share of sessions has a
    defect the lossless repairs fix."""
    subprocess.run([sys.executable, str(GEN_WORKSPACE), str(out), "--sessions", str(sessions),
                    "--dirty", str(dirty), "--seed", str(seed)], check=True, capture_output=True)
    return out
