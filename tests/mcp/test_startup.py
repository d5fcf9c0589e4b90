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
TOOL_CALL_ONLY = ("kbsync.core.injection", "kbsync.app.guard", "kbsync.app.reading", "kbsync.app.retrieval",
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
