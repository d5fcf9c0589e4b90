"""`kbsync mcp` answers `initialize` before it loads what only a tool call needs: the injection guard, the
retrieval stack and the readers are imported at the first call that uses them (docs/mcp.md, Start-up).

The real command line runs in a fresh interpreter, its standard input a client's opening (initialize and
the initialized notification) and then end of file, so the server answers and stops; the modules it had
loaded by then are printed to standard error."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

OPENING = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}},
           {"jsonrpc": "2.0", "method": "notifications/initialized"}]
PROBE = ("import sys\nfrom kbsync.main import main\nrc = main(['-w', sys.argv[1], 'mcp'])\n"
         "print('LOADED', ' '.join(sorted(sys.modules)), file=sys.stderr)\n")
TOOL_CALL_ONLY = ("kbsync.core.detect.injection", "kbsync.app.guard", "kbsync.app.reading", "kbsync.app.retrieval",
                  "kbsync.retrieval", "kbsync.mcp.present")


def test_initialize_is_answered_before_what_only_tool_calls_need_is_imported(ws_root: Path) -> None:
    opening = "".join(json.dumps(m) + "\n" for m in OPENING)
    out = subprocess.run([sys.executable, "-c", PROBE, str(ws_root)], input=opening, capture_output=True,
                         text=True, timeout=60)
    answer = json.loads(out.stdout.splitlines()[0])
    assert answer["result"]["serverInfo"]["name"] == "kbsync", out.stderr
    loaded = out.stderr.split("LOADED ", 1)[1].split()
    assert "kbsync.mcp.tools" in loaded  # the tools are registered: the probe saw the real start-up
    assert [m for m in loaded if m.startswith(TOOL_CALL_ONLY)] == []


LOADED_PROBE = ("import sys\nfrom kbsync.main import main\nrc = main(['-w', sys.argv[1], 'mcp'])\n"
                "print('LOADED', ' '.join(sorted(m for m, v in sys.modules.items() if v is not None)), file=sys.stderr)\n")
SEARCH = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "search", "arguments": {"query": "x"}}}
NOT_OVER_STDIO = ("uvicorn", "rich", "click")  # what only an HTTP server or the SDK's own log handler would use


def answer(proc: subprocess.Popen[str], *messages: dict[str, object]) -> dict[str, object]:
    """Send `messages`, then read the server's lines until the answer to the last one."""
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
    proc.stdin.flush()
    while line := proc.stdout.readline():
        got: dict[str, object] = json.loads(line)
        if got.get("id") == messages[-1]["id"]:
            return got
    raise AssertionError("the server stopped before answering")


def test_a_stdio_server_never_loads_uvicorn_or_rich(ws_root: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-c", LOADED_PROBE, str(ws_root)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        answer(proc, OPENING[0])
        found = answer(proc, OPENING[1], SEARCH)
    finally:
        _, err = proc.communicate(timeout=60)  # end of input: the server stops and prints what it loaded
    assert "result" in found and not found["result"].get("isError"), err  # type: ignore[attr-defined]
    loaded = err.split("LOADED ", 1)[1].split()
    assert "mcp.server.mcpserver" in loaded
    assert [m for m in loaded if m.split(".")[0] in NOT_OVER_STDIO] == []
