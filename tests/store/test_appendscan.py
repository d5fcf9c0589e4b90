"""The append-only files checked as a stream: the findings of reading them whole, line numbers included, in
bounded memory."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from helpers.cli import Cli
from kbsync.core import protocol
from kbsync.core.validate import validate_text
from kbsync.store import appendscan
from kbsync.store.workspace import Workspace

ROWS = 40_000  # about 4 MB: several of the check's slices
ROW_ERROR = "error: index row must have 5 cells"


def row(i: int, path: str | None = None) -> str:
    return f"| 2025-01-01 | 标题 {i} | a,b | 摘要 {i} | {path or f'sessions/2025-01-01/{i % 10000:04d}-abcdef0-t.md'} |\n"


def big_index(root: Path, tail: str = "") -> str:
    """A long index.md whose rows name sessions that are gone, but one, and `tail` after them."""
    kept = root / "sessions/2025-01-01/0001-abcdef0-t.md"
    kept.parent.mkdir(parents=True, exist_ok=True)
    kept.write_text("x", encoding="utf-8")
    return protocol.INDEX_HEADER + "".join(row(i) for i in range(ROWS)) + tail


def whole(root: Path, text: str) -> list[str]:
    """What reading index.md whole gives: `validate_text`, then a warning per last row naming a gone session."""
    found = [str(f) for f in validate_text("index.md", text, Workspace(root).config)]
    last: dict[str, int] = {}
    for n, line in enumerate(text.replace("\r\n", "\n").split("\n"), start=1):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and line.strip() not in protocol.INDEX_HEADER.splitlines():
            last.pop(cells[4], None)
            last[cells[4]] = n
    return found + [f"index.md:{n}: warning: the row for {p} names a session that no longer exists; run `kbsync "
                    "index rebuild` to drop it" for p, n in last.items() if not (root / p).exists()]


def test_a_broken_row_late_in_a_long_index_is_named_by_its_line(ws_root: Path, cli: Cli) -> None:
    text = big_index(ws_root, "| only | three | cells |\n" + row(7, "sessions/2025-01-01/0001-abcdef0-t.md"))
    (ws_root / "index.md").write_text(text, encoding="utf-8")
    out = cli("validate", "index.md", ws=ws_root)
    broken = ROWS + 3
    assert out.returncode == 1
    want = f"index.md:{broken}: {ROW_ERROR} (日期 | 标题 | 标签 | 摘要 | 路径); escape `|` as `\\|`"
    assert [ln for ln in out.stdout.splitlines() if ROW_ERROR in ln] == [want]
    assert out.stdout.splitlines() == whole(ws_root, text)
    assert "sessions/2025-01-01/0001-abcdef0-t.md names" not in out.stdout  # its last row names a file that is there
    assert out.stdout.count("no longer exists") == 9999


def test_crlf_a_byte_order_mark_and_conflict_markers_read_as_when_whole(ws_root: Path) -> None:
    marked = "<<<<<<< HEAD\n" + row(1) + "=======\n```\n>>>>>>> fenced\n```\n>>>>>>> theirs\n| two | cells |"
    text = "\ufeff" + big_index(ws_root, marked).replace("\n", "\r\n")
    (ws_root / "index.md").write_bytes(text.encode("utf-8"))
    found = [str(f) for f in appendscan.findings(Workspace(ws_root), "index.md")]
    assert found == whole(ws_root, text[1:])
    assert f"index.md:{ROWS + 3}: error: git conflict marker `<<<<<<<`" in "\n".join(found)
    assert sum("conflict marker" in f for f in found) == 3  # the one in the fence is code


def test_bytes_that_are_no_text_are_named_as_when_whole(ws_root: Path, cli: Cli) -> None:
    head = big_index(ws_root).encode("utf-8")
    (ws_root / "index.md").write_bytes(head + b"| a | \xe4\xb8 | c | d | e |\n| broken |\n")
    out = cli("validate", "index.md", ws=ws_root)
    assert out.stdout == f"index.md:{ROWS + 3}: error: not UTF-8; convert the file to UTF-8\n"
    (ws_root / "index.md").write_bytes(head + b"\xff\n" + b"x" * 3_000_000 + b"\x00\n")  # a NUL says it first
    binary = "index.md:1: error: binary content (NUL bytes); not a Markdown file\n"
    assert cli("validate", "index.md", ws=ws_root).stdout == binary


PEAK = """
import sys
from kbsync.main import main
try:
    main()
except SystemExit:
    pass
with open("/proc/self/status") as fh:  # the peak of this program alone, not of the test that started it
    print(next(ln for ln in fh if ln.startswith("VmHWM:")).split()[1], file=sys.stderr)
"""


def peak_mb(root: Path) -> float:
    """The peak RSS of `kbsync validate index.md`, in MB."""
    argv = [sys.executable, "-c", PEAK, "-w", str(root), "-q", "validate", "index.md"]
    out = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=True)
    return int(out.stderr.split()[-1]) / 1024


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the peak RSS from /proc")
def test_memory_does_not_grow_with_the_index(ws_root: Path) -> None:
    text = big_index(ws_root)
    (ws_root / "index.md").write_text(text[: len(protocol.INDEX_HEADER) + 200_000], encoding="utf-8")
    small = peak_mb(ws_root)
    (ws_root / "index.md").write_text(text * 4, encoding="utf-8")  # 16 MB: read whole, it took some 80 MB more
    assert peak_mb(ws_root) - small < 12


def test_a_log_line_late_in_a_long_log_is_named_by_its_line(ws_root: Path, cli: Cli) -> None:
    lines = [f"2025-01-01T00:00:{i % 60:02d}Z tool call {i} 工具" for i in range(ROWS)]
    text = "\n".join(lines[:-5] + ["no time here", *lines[-5:]]) + "\n"
    (ws_root / protocol.TOOL_CALLS_LOG).write_text(text, encoding="utf-8")
    out = cli("validate", protocol.TOOL_CALLS_LOG, ws=ws_root)
    assert out.stdout == (f"{protocol.TOOL_CALLS_LOG}:{ROWS - 4}: warning: log line does not start with an ISO 8601 "
                          "UTC time\n")
    whole_text = validate_text(protocol.TOOL_CALLS_LOG, text, Workspace(ws_root).config)
    assert out.stdout.splitlines() == [str(f) for f in whole_text]
