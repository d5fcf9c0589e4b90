"""The layering of DESIGN.md, enforced: pure modules import no I/O library, layer 0 imports nothing above it."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "daemon"
PURE = ["protocol", "findings", "frontmatter", "body", "session", "sessioninput", "repair", "validate",
        "indexmd", "fusion", "board", "boardentry", "candidates", "injection", "integrate", "gitobjects"]
PURE_PRESENT = [m for m in PURE if (PACKAGE / f"{m}.py").exists()]
LAYER0 = {"errors": set(), "protocol": {"errors"}, "config": {"errors", "protocol"}}
FORBIDDEN_TOP = {"subprocess", "sqlite3", "git", "gitdb", "requests", "urllib3", "watchdog", "schedule", "socket",
                 "http", "urllib", "shutil", "tempfile"}
FORBIDDEN_KBSYNC = {"fsio", "workspace", "gitrepo", "proc", "store", "repairfile", "eventlog", "conflicts",
                    "searchdb", "remotes", "watch", "service", "committer", "syncer"}
# What a pure module may import from the package: other pure modules and layer 0.
ALLOWED_KBSYNC = set(PURE) | set(LAYER0)
# Libraries a `kbsync --help` (and the pre-commit hook) must not load at start-up.
HEAVY = {"git", "requests", "watchdog", "sqlite3", "_sqlite3", "schedule", "markdown_it"}


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imported_modules(source: str) -> set[str]:
    """Dotted names of every module imported anywhere in `source` (TYPE_CHECKING blocks aside)."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
            if node.module == "kbsync":
                found.update(f"kbsync.{alias.name}" for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(source))
    return found


def _imports_of(module: str) -> set[str]:
    return imported_modules((PACKAGE / f"{module}.py").read_text(encoding="utf-8"))


def _kbsync_parts(names: set[str]) -> set[str]:
    return {n.split(".")[1] for n in names if n.startswith("kbsync.")}


def test_the_ast_walk_sees_every_form_of_import() -> None:
    source = ("import os, subprocess as sp\nfrom kbsync import fsio, protocol\nfrom kbsync.gitrepo import x\n"
              "from . import rel\nfrom typing import TYPE_CHECKING\n"
              "def f():\n    import sqlite3\n"
              "if TYPE_CHECKING:\n    from kbsync.workspace import Workspace\n")
    assert imported_modules(source) == {"os", "subprocess", "kbsync", "kbsync.fsio", "kbsync.protocol",
                                        "kbsync.gitrepo", "sqlite3", "typing"}


@pytest.mark.parametrize("module", PURE_PRESENT)
def test_pure_modules_import_no_io_library(module: str) -> None:
    names = _imports_of(module)
    libraries = sorted(n for n in names if n.split(".")[0] in FORBIDDEN_TOP)
    assert not libraries, f"kbsync.{module} is pure but imports {libraries}"
    inner = _kbsync_parts(names)
    assert not inner & FORBIDDEN_KBSYNC, f"kbsync.{module} is pure but imports kbsync.{sorted(inner & FORBIDDEN_KBSYNC)}"
    assert inner <= ALLOWED_KBSYNC, f"kbsync.{module} imports {sorted(inner - ALLOWED_KBSYNC)} from above its layer"


@pytest.mark.parametrize("module", sorted(LAYER0))
def test_layer_zero_imports_nothing_above_it(module: str) -> None:
    inner = _kbsync_parts(_imports_of(module)) - {module}
    assert inner <= LAYER0[module], f"kbsync.{module} imports {sorted(inner - LAYER0[module])}"


def _loaded_after(code: str) -> list[str]:
    script = f"import sys, json\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    loaded: list[str] = json.loads(proc.stdout)
    return loaded


def test_importing_the_pure_modules_loads_no_io_module() -> None:
    loaded = _loaded_after("\n".join(f"import kbsync.{m}" for m in PURE_PRESENT))
    bad = [m for m in loaded if m.split(".")[0] in FORBIDDEN_TOP - {"socket", "http", "urllib", "shutil", "tempfile"}
           or (m.startswith("kbsync.") and m.split(".")[1] in FORBIDDEN_KBSYNC)]
    assert not bad, f"importing the pure modules loaded {bad}"


def test_the_command_line_starts_without_heavy_libraries() -> None:
    loaded = _loaded_after("from kbsync.main import build_parser\nbuild_parser()")
    heavy = [m for m in loaded if m.split(".")[0] in HEAVY]
    assert not heavy, f"building the parser loaded {heavy}; import them inside the command's run()"
