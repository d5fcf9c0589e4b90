"""Answering one hook event, fail-open, and the short way in to it.

A hook is a process per prompt, so `python -m kbsync -w DIR [--config FILE] assist hook ASSISTANT EVENT`,
the command `kbsync assist install` writes, is recognised before the command line is built
(`plain_hook_call`, asked by kbsync/__main__.py): the same answer without argparse, the logging set-up and
the command registry, some 20 ms of the hook's CPU. Anything else on the line (another option, a name that
is not a known assistant or event) takes the ordinary way, with its usage errors."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from kbsync.app.workspace import Workspace

ASSISTANTS = ("claude-code", "codex")  # kbsync.core.assistants.ASSISTANTS, named here to keep start-up light
HOOK_EVENTS = ("SessionStart", "UserPromptSubmit", "Stop", "SessionEnd")
MAX_EVENT = 16 * 1024 * 1024  # bytes of an event read from standard input


def plain_hook_call(argv: Sequence[str]) -> tuple[str | None, str | None, str, str] | None:
    """(workspace, config, assistant, event) when `argv` is exactly `[-w DIR] [--config FILE] assist hook
    ASSISTANT EVENT`, each option at most once; None otherwise."""
    words = list(argv)
    given: dict[str, str] = {}
    while len(words) >= 2 and words[0] in ("-w", "--workspace", "--config") and words[1]:
        name = "config" if words[0] == "--config" else "workspace"
        if name in given:
            return None
        given[name] = words[1]
        words = words[2:]
    if len(words) != 4 or words[:2] != ["assist", "hook"] or words[2] not in ASSISTANTS or words[3] not in HOOK_EVENTS:
        return None
    return given.get("workspace"), given.get("config"), words[2], words[3]


def run(workspace: str | None, config: str | None, assistant: str, event: str) -> int:
    """Answer one event; fail-open: any error is one log line, and the assistant goes on (exit 0)."""
    began = time.monotonic()
    ws: Workspace | None = None
    try:
        from kbsync.app.workspace import open_workspace, parse_json_input
        from kbsync.assist.events import answer

        raw = sys.stdin.buffer.read(MAX_EVENT + 1)
        if len(raw) > MAX_EVENT:
            raise ValueError(f"the event is over {MAX_EVENT // 2**20} MB; not read")
        ws = open_workspace(workspace, config)
        out = answer(ws, event, parse_json_input(raw, "<stdin>"))
    except Exception as exc:  # noqa: BLE001 - fail-open: the assistant must never be stopped by kbsync
        _log_failure(ws, f"assist hook {assistant} {event} failed after {(time.monotonic() - began) * 1000:.0f} ms, "
                     f"nothing injected or kept: {exc}")
        return 0
    if out:
        sys.stdout.write(out + "\n")
    return 0


def _log_failure(ws: Workspace | None, line: str) -> None:
    """One line on standard error (the assistant's debug log) and in logs/errors.md when there is a workspace."""
    line = " ".join(line.split())
    sys.stderr.write(f"kbsync: {line}\n")
    if ws is None:
        return
    try:
        from kbsync.app.sessions import log_error

        log_error(ws, line)
    except Exception as exc:  # noqa: BLE001 - the log itself failing must not stop the assistant either
        sys.stderr.write(f"kbsync: could not write logs/errors.md: {exc}\n")
