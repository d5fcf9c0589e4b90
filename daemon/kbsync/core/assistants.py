"""Assistants' hook settings as data: which events kbsync hooks for each assistant, and the pure merge of
kbsync's hooks into a settings object and out of it again. Pure.

Claude Code and Codex share one shape (docs/assist.md): `{"hooks": {Event: [{"matcher"?: str, "hooks":
[{"type": "command", "command": str, "timeout": seconds}]}]}}`. kbsync's own hooks are known by their command
alone (it ends with `assist hook <assistant> <Event>`), so no key of kbsync's is added to another program's
settings, and uninstalling removes exactly those hooks and nothing else.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any

from kbsync.errors import InputError


@dataclass(frozen=True)
class Assistant:
    name: str  # as the command line names it
    folder: str  # the settings folder, in a project and in the home folder
    file: str  # the settings file in that folder
    events: tuple[tuple[str, int], ...]  # (event, time-out in seconds) kbsync hooks


ASSISTANTS = {
    "claude-code": Assistant("claude-code", ".claude", "settings.json",
                             (("SessionStart", 10), ("UserPromptSubmit", 10), ("Stop", 30), ("SessionEnd", 30))),
    "codex": Assistant("codex", ".codex", "hooks.json",
                       (("SessionStart", 10), ("UserPromptSubmit", 10), ("Stop", 30))),
}
_OURS = re.compile(r"(?:^|\s)assist hook (?P<assistant>[a-z-]+) (?P<event>[A-Za-z]+)\s*$")


@dataclass(frozen=True)
class Installed:
    event: str
    command: str


def is_ours(command: object, assistant: str) -> bool:
    """Whether a hook's command is one kbsync installed for `assistant`."""
    if not isinstance(command, str):
        return False
    m = _OURS.search(command)
    return bool(m and m.group("assistant") == assistant and "kbsync" in command)


def hook_command(prefix: str, assistant: str, event: str) -> str:
    """The command a hook runs: `prefix` (the program and its global options, shell-quoted) and the hook."""
    return f"{prefix} assist hook {assistant} {event}"


def _groups(settings: dict[str, Any], event: str, where: str) -> list[Any]:
    hooks = settings.get("hooks", {})
    if not isinstance(hooks, dict):
        raise InputError("`hooks` is not a JSON object; fix it by hand, then install again", path=where)
    groups = hooks.get(event, [])
    if not isinstance(groups, list):
        raise InputError(f"`hooks.{event}` is not a JSON array; fix it by hand, then install again", path=where)
    return groups


def installed(settings: dict[str, Any], assistant: str, where: str) -> list[Installed]:
    """kbsync's hooks in `settings`, in file order."""
    found = []
    for event in sorted(settings.get("hooks", {}) if isinstance(settings.get("hooks"), dict) else {}):
        for group in _groups(settings, event, where):
            for hook in group.get("hooks", []) if isinstance(group, dict) else []:
                if isinstance(hook, dict) and is_ours(hook.get("command"), assistant):
                    found.append(Installed(event, str(hook["command"])))
    return found


def merged(settings: dict[str, Any], assistant: Assistant, prefix: str, where: str) -> dict[str, Any]:
    """`settings` with kbsync's hooks for `assistant`: each one already there is updated in place (its command
    and time-out), each missing one added as a group of its own at the end of its event; nothing else changes."""
    out = copy.deepcopy(settings)
    for event, timeout in assistant.events:
        groups = _groups(out, event, where)
        hook = {"type": "command", "command": hook_command(prefix, assistant.name, event), "timeout": timeout}
        mine = [h for g in groups if isinstance(g, dict) for h in g.get("hooks", []) if isinstance(h, dict)
                and is_ours(h.get("command"), assistant.name) and h["command"].endswith(f" {event}")]
        if mine:
            mine[0].update(hook)
            continue
        out.setdefault("hooks", {}).setdefault(event, groups).append({"hooks": [hook]})
    return out


def without(settings: dict[str, Any], assistant: str, where: str) -> dict[str, Any]:
    """`settings` without kbsync's hooks for `assistant`; a group, event or `hooks` object left empty by that
    is removed too (one that was empty before is kept)."""
    out = copy.deepcopy(settings)
    hooks = out.get("hooks")
    if not isinstance(hooks, dict):
        return out
    for event in list(hooks):
        groups = _groups(out, event, where)
        kept = []
        for group in groups:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(inner, list) or not any(isinstance(h, dict) and is_ours(h.get("command"), assistant)
                                                      for h in inner):
                kept.append(group)
                continue
            rest = [h for h in inner if not (isinstance(h, dict) and is_ours(h.get("command"), assistant))]
            if rest:
                kept.append({**group, "hooks": rest})
        if kept or not groups:
            hooks[event] = kept
        else:
            del hooks[event]
    if not hooks and settings.get("hooks"):
        del out["hooks"]
    return out
