"""`kbsync memory set|get|list|forget` through the real command line: facts replaced in place, entity files
made with their slug, preferences kept apart, the files valid after every write."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.cli import Cli


def test_set_replaces_in_place_and_get_list_forget_read_it_back(ws_root: Path, cli: Cli) -> None:
    assert cli("memory", "set", "lang", "replies in Chinese", ws=ws_root).returncode == 0
    replaced = cli("memory", "set", "lang", "replies in English", ws=ws_root)
    assert replaced.returncode == 0 and "replaced" in replaced.stdout
    facts = (ws_root / "memory" / "facts.md").read_text(encoding="utf-8")
    assert facts.count("lang") == 1 and "replies in English" in facts and "Chinese" not in facts
    assert cli("memory", "get", "lang", ws=ws_root).stdout.strip() == "replies in English"
    assert cli("memory", "forget", "lang", ws=ws_root).returncode == 0
    missing = cli("memory", "get", "lang", ws=ws_root)
    assert missing.returncode == 1 and "no fact 'lang'" in missing.stderr and "Traceback" not in missing.stderr


def test_entities_and_preferences_have_their_own_files(ws_root: Path, cli: Cli) -> None:
    assert cli("memory", "set", "--entity", "Project Alpha", "owner", "王五", ws=ws_root).returncode == 0
    assert cli("memory", "set", "--preferences", "tone", "terse", ws=ws_root).returncode == 0
    assert "- owner: 王五" in (ws_root / "memory" / "entities" / "project-alpha.md").read_text(encoding="utf-8")
    assert "- tone: terse" in (ws_root / "memory" / "preferences.md").read_text(encoding="utf-8")
    listed = json.loads(cli("memory", "list", "--json", ws=ws_root).stdout)
    assert {(f["path"], f["key"], f["value"]) for f in listed} == {
        ("memory/entities/project-alpha.md", "owner", "王五"), ("memory/preferences.md", "tone", "terse")}
    only = json.loads(cli("memory", "list", "--entity", "project alpha", "--json", ws=ws_root).stdout)
    assert [(f["path"], f["key"]) for f in only] == [("memory/entities/project-alpha.md", "owner")]
    assert cli("memory", "list", "--preferences", ws=ws_root).stdout == "memory/preferences.md:2: tone: terse\n"
    assert cli("memory", "list", "--preferences", "--entity", "x", ws=ws_root).returncode == 2
    assert cli("validate", ws=ws_root).returncode == 0
