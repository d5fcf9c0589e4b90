"""Arbitrary text, JSON and file names thrown at `session save`, `log` and `validate`, through the real
command line: the exit code is 0, 1 or 2, never a traceback, nothing is written outside the workspace, and
index.md stays valid (no NUL, every row well formed) after each."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kbsync.config import Config
from kbsync.core.validate import validate_text

FUZZ = settings(max_examples=15, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
ANY_CHAR = st.characters(blacklist_categories=())  # surrogates and control characters included
TEXT = st.text(ANY_CHAR, max_size=60)
ARG = st.binary(max_size=60).map(lambda b: b.replace(b"\0", b"")).filter(lambda b: not b.startswith(b"-"))
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | TEXT,
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
                    max_leaves=12)
KEYS = st.sampled_from(["session_id", "title", "ts", "role", "tags", "status", "summary", "parent", "sections",
                        "turns", "model"])
PAYLOAD = st.dictionaries(KEYS, JSON, max_size=6) | st.fixed_dictionaries(
    {"session_id": TEXT, "title": TEXT, "sections": st.dictionaries(TEXT, TEXT, max_size=3)})


class Box:
    """A workspace alone in a folder, and what may change around it."""

    def __init__(self) -> None:
        self.top = Path(tempfile.mkdtemp(prefix="kbsync-fuzz-"))
        self.home = self.top / "home"
        self.home.mkdir()
        self.ws = self.top / "ws"
        assert self.run(b"init").returncode == 0

    def run(self, *args: bytes, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("KBSYNC_")} | {"HOME": str(self.home)}
        argv: list[bytes] = [sys.executable.encode(), b"-m", b"kbsync", b"-w", str(self.ws).encode(), *args]
        return subprocess.run(argv, input=stdin, capture_output=True, env=env, cwd=self.top, timeout=60)

    def outside(self) -> list[str]:
        return sorted(str(p.relative_to(self.top)) for p in self.top.rglob("*") if self.ws not in (p, *p.parents))

    def check(self, done: subprocess.CompletedProcess[bytes]) -> None:
        err = done.stderr.decode("utf-8", "replace")
        assert done.returncode in (0, 1, 2), err
        assert "Traceback" not in err
        assert self.outside() == ["home"]
        index = (self.ws / "index.md").read_bytes()
        assert b"\0" not in index
        problems = [f for f in validate_text("index.md", index.decode("utf-8"), Config()) if f.level == "error"]
        assert problems == []


@pytest.fixture(scope="module")
def box() -> Box:
    return Box()


@pytest.mark.slow
@given(payload=PAYLOAD)
@FUZZ
def test_session_save_with_arbitrary_json(box: Box, payload: dict[str, Any]) -> None:
    raw = json.dumps(payload, ensure_ascii=True).encode()
    box.check(box.run(b"session", b"save", stdin=raw))


@pytest.mark.slow
@given(raw=st.binary(max_size=200) | st.integers(60, 5000).map(lambda n: b'{"tags": ' + b"[" * n + b"]" * n + b"}"))
@FUZZ
def test_session_save_with_arbitrary_bytes(box: Box, raw: bytes) -> None:
    box.check(box.run(b"session", b"save", stdin=raw))


@pytest.mark.slow
@given(session=ARG, tool=ARG, status=ARG, detail=ARG, message=ARG)
@FUZZ
def test_log_with_arbitrary_arguments(box: Box, session: bytes, tool: bytes, status: bytes, detail: bytes,
                                      message: bytes) -> None:
    box.check(box.run(b"log", b"tool-call", b"--session", session, b"--tool", tool, b"--status", status,
                      b"--detail", detail))
    box.check(box.run(b"log", b"error", b"--", message))
    for log in ("logs/tool-calls.md", "logs/errors.md"):
        assert b"\0" not in (box.ws / log).read_bytes()


@pytest.mark.slow
@given(name=st.binary(min_size=1, max_size=40).filter(lambda b: b"/" not in b and b"\0" not in b
                                                      and b not in (b".", b"..")),
       content=st.binary(max_size=300) | TEXT.map(lambda t: t.encode("utf-8", "surrogatepass")))
@FUZZ
def test_validate_with_arbitrary_file_names_and_bytes(box: Box, name: bytes, content: bytes) -> None:
    folder = os.path.join(str(box.ws).encode(), b"memory")
    path = os.path.join(folder, name + b".md")
    with open(path, "wb") as fh:
        fh.write(content)
    try:
        box.check(box.run(b"validate", b"--json"))
        box.check(box.run(b"validate", path))
    finally:
        os.unlink(path)
