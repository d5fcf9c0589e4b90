"""The dead-code gate (vulture with [tool.vulture] of pyproject.toml, run by scripts/test): a function that
nothing calls fails it, one that something calls does not, and so does a name the whitelist names."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent


def vulture(*paths: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "vulture", "--config", str(TOP / "pyproject.toml"), *map(str, paths)],
                          capture_output=True, text=True, cwd=TOP, timeout=120)


def test_a_new_function_that_nothing_calls_fails_the_gate(tmp_path: Path) -> None:
    module = tmp_path / "fresh.py"
    module.write_text("def used() -> int:\n    return 1\n\n\ndef forgotten() -> int:\n    return 2\n\n\nprint(used())\n",
                      encoding="utf-8")
    got = vulture(module)
    assert got.returncode != 0
    assert f"{module}:5: unused function 'forgotten'" in got.stdout
    assert "'used'" not in got.stdout


def test_the_whitelist_keeps_a_name_used_only_by_a_framework(tmp_path: Path) -> None:
    module = tmp_path / "handler.py"
    module.write_text("class Handler:\n    def on_any_event(self) -> None:\n        pass\n\n\nHandler()\n", encoding="utf-8")
    assert vulture(module).returncode != 0
    got = vulture(module, TOP / "tests" / "deadcode_whitelist.py")
    assert got.returncode == 0, got.stdout
