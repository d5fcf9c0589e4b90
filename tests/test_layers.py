"""The floors of docs/architecture.md, enforced by folder rank rather than by hand-kept module lists.

A module may import its own folder and the folders below it; the features (sync, board, retrieval) do
not import one another; the front doors (cli, and the web and MCP servers beside it) are imported by
nothing but kbsync.main, and import nothing but app, their own folder and the root floor (and, for cli
only, service, whose daemon `kbsync run` starts). kbsync.main finds each command in kbsync/cli or in a
door's command.py, and composes the doors (the daemon's servers). An import
written as a string (`importlib.import_module("kbsync....")`, a job spec "kbsync.x.y:func") counts. A door names
the types it handles through app as well (app re-exports them: `from kbsync.app.repo import HookReport` under
TYPE_CHECKING), so that a door reads nothing of the floors below but what app hands it.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "daemon" / "kbsync"
RANK = {"": 0, "data": 0, "core": 1, "store": 2, "git": 3, "sync": 4, "board": 4, "retrieval": 4, "app": 5,
        "service": 6, "cli": 7, "web": 7, "mcp": 7, "assist": 7}
FEATURES = {"sync", "board", "retrieval"}
FRONT_DOORS = {"cli", "web", "mcp", "assist"}
TOP = {"main", "__main__"}  # the entry point: above every floor
# Pure modules: no I/O library, nothing of the package but other pure modules and the root floor.
PURE_OUTSIDE_CORE = {"kbsync.sync.plan", "kbsync.git.objects", "kbsync.retrieval.fusion"}
FORBIDDEN_TOP = {"subprocess", "sqlite3", "sqlean", "git", "gitdb", "requests", "urllib3", "watchdog", "schedule", "socket",
                 "http", "urllib", "shutil", "tempfile"}
# Libraries a `kbsync --help` (and the pre-commit hook) must not load at start-up.
HEAVY = {"git", "requests", "watchdog", "sqlite3", "_sqlite3", "sqlean", "schedule", "markdown_it", "starlette", "uvicorn",
         "fastapi", "pydantic", "mcp", "jinja2", "tqdm"}
_MODULE_STRING = re.compile(r"kbsync(?:\.[A-Za-z_]\w*)+(?=$|:)")


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _string_prefix(node: ast.JoinedStr) -> str:
    first = node.values[0] if node.values else None
    return first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else ""


def imported_modules(source: str) -> set[str]:
    """Dotted names of every module imported anywhere in `source` (TYPE_CHECKING blocks aside), including
    module names written as strings: a literal "kbsync.a.b" or "kbsync.a.b:attr", or the fixed start of an
    f-string such as f"kbsync.cli.{name}" (which names the package kbsync.cli)."""
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
            found.update(f"{node.module}.{alias.name}" for alias in node.names if node.module.startswith("kbsync"))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.update(_MODULE_STRING.findall(node.value.strip()))
        elif isinstance(node, ast.JoinedStr):
            found.update(m.rstrip(".") for m in _MODULE_STRING.findall(_string_prefix(node).rstrip(".")))
            return
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(source))
    return found


def type_only_imports(source: str) -> set[str]:
    """Dotted names of the modules imported inside the `if TYPE_CHECKING:` blocks of `source`."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.If) and _is_type_checking(node):
            block = ast.Module(body=node.body, type_ignores=[])
            found |= imported_modules(ast.unparse(block))
    return found


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def floor(module: str) -> str:
    """The folder a module of the package belongs to ("" for the root floor, "main" for the entry point)."""
    parts = module.split(".")[1:]
    if not parts or parts == ["__init__"]:
        return ""
    if len(parts) == 1:
        return "main" if parts[0] in TOP else ("" if (PACKAGE / f"{parts[0]}.py").exists() else parts[0])
    return parts[0]


def _known(module: str) -> bool:
    """True if `module` is a module or package of kbsync (a name imported from a module is not)."""
    rel = Path(*module.split(".")[1:])
    return module == "kbsync" or (PACKAGE / rel).with_suffix(".py").exists() or (PACKAGE / rel / "__init__.py").exists()


def violations(importer: str, imported: set[str]) -> list[str]:
    """What is wrong with `importer` importing each kbsync module of `imported`, one line each."""
    here = floor(importer)
    bad: list[str] = []
    for target in sorted(m for m in imported if m.startswith("kbsync") and _known(m)):
        there = floor(target)
        if target == "kbsync" or there == here or here == "main":
            continue
        if there == "main":
            bad.append(f"{importer} imports {target}: only the interpreter runs the entry point")
        elif there in FRONT_DOORS:
            bad.append(f"{importer} imports the front door {target}: only kbsync.main may")
        elif here in FRONT_DOORS and there not in (("", "app", "service") if here == "cli" else ("", "app")):
            bad.append(f"{importer} is a front door and imports {target}: call kbsync.app instead")
        elif here in FEATURES and there in FEATURES:
            bad.append(f"{importer} imports {target}: features do not import one another; move what they share down")
        elif RANK[there] > RANK[here]:
            bad.append(f"{importer} (floor {here or 'root'}) imports {target} from the floor above, {there}")
    return bad


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def test_every_folder_of_the_package_has_a_rank() -> None:
    folders = {floor(module_name(p)) for p in _modules()}
    assert folders - {"main"} <= set(RANK), f"folders without a floor: {sorted(folders - {'main'} - set(RANK))}"


def test_every_folder_says_what_it_holds_and_may_import() -> None:
    for init in PACKAGE.rglob("__init__.py"):
        if init.parent.name == "data":
            continue
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        assert "import" in doc and len(doc) > 120, f"{init.relative_to(PACKAGE.parent)}: say what it holds and may import"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: module_name(p))
def test_imports_follow_the_floors(path: Path) -> None:
    bad = violations(module_name(path), imported_modules(path.read_text(encoding="utf-8")))
    if bad:
        pytest.fail("\n".join(bad), pytrace=False)


def test_the_ast_walk_sees_every_form_of_import() -> None:
    source = ("import os, subprocess as sp\nfrom kbsync.store import fsio, workspace\nfrom kbsync.git.repo import x\n"
              "from . import rel\nfrom typing import TYPE_CHECKING\n"
              "def f():\n    import sqlite3\n"
              "if TYPE_CHECKING:\n    from kbsync.store.workspace import Workspace\n"
              "JOB = 'kbsync.sync.syncer:sync'\n"
              "def g(name):\n    return importlib.import_module(f'kbsync.cli.{name}')\n")
    assert imported_modules(source) == {"os", "subprocess", "kbsync.store", "kbsync.store.fsio",
                                        "kbsync.store.workspace", "kbsync.git.repo", "kbsync.git.repo.x", "sqlite3",
                                        "typing", "kbsync.sync.syncer", "kbsync.cli"}


@pytest.mark.parametrize(("importer", "source", "says"), [
    ("kbsync.core.session", "from kbsync.store import fsio\n", "from the floor above, store"),
    ("kbsync.core.session", "importlib.import_module('kbsync.service.daemon')\n", "from the floor above, service"),
    ("kbsync.store.fsio", "JOB = 'kbsync.git.commit:scheduled_commit'\n", "from the floor above, git"),
    ("kbsync.board.scan", "from kbsync.retrieval import index\n", "features do not import one another"),
    ("kbsync.service.daemon", "from kbsync.cli import common\n", "only kbsync.main may"),
    ("kbsync.cli.board", "from kbsync.store.fsio import atomic_write\n", "call kbsync.app instead"),
    ("kbsync.app.status", "import_module(f'kbsync.cli.{name}')\n", "only kbsync.main may"),
    ("kbsync.cli.hook", "def run():\n    from kbsync.git.hook import HookReport\n", "call kbsync.app instead"),
    ("kbsync.cli.repair", "from kbsync.store import repairfile\n", "call kbsync.app instead"),
    ("kbsync.mcp.present", "import kbsync.retrieval.search\n", "call kbsync.app instead"),
    ("kbsync.web.api_workspace", "from kbsync.retrieval.fusion import Fused\n", "call kbsync.app instead"),
])
def test_a_forbidden_import_is_caught_in_every_form(importer: str, source: str, says: str) -> None:
    found = violations(importer, imported_modules(source))
    assert found and says in found[0]


def _door_modules() -> list[Path]:
    return [p for p in _modules() if floor(module_name(p)) in FRONT_DOORS]


@pytest.mark.parametrize("path", _door_modules(), ids=lambda p: module_name(p))
def test_front_doors_name_the_types_they_handle_through_app(path: Path) -> None:
    bad = violations(module_name(path), type_only_imports(path.read_text(encoding="utf-8")))
    if bad:
        pytest.fail("\n".join(f"{line} (under TYPE_CHECKING: import the type from the app module that hands it out)"
                              for line in bad), pytrace=False)


def test_type_only_imports_are_told_apart() -> None:
    source = ("from typing import TYPE_CHECKING\nfrom kbsync.app import repo\n"
              "if TYPE_CHECKING:\n    from kbsync.git.hook import HookReport\n")
    assert "kbsync.git.hook" not in imported_modules(source)
    assert type_only_imports(source) == {"kbsync.git.hook", "kbsync.git.hook.HookReport"}
    assert "call kbsync.app instead" in violations("kbsync.cli.hook", type_only_imports(source))[0]


def test_main_may_import_the_front_doors() -> None:
    assert not violations("kbsync.main", {"kbsync.cli", "kbsync.errors"})


def test_only_the_command_line_door_reaches_the_service_floor() -> None:
    assert not violations("kbsync.cli.run", {"kbsync.service.daemon"})
    assert "call kbsync.app instead" in violations("kbsync.web.server", {"kbsync.service.daemon"})[0]


def test_each_door_beside_cli_has_its_command_in_command_py_named_after_it() -> None:
    from kbsync.main import DOORS, command_modules

    found = command_modules()
    for door in sorted(FRONT_DOORS - {"cli"}):
        assert door in DOORS, f"kbsync.main.DOORS does not list the front door {door}"
        if (PACKAGE / door / "command.py").is_file():
            assert found[door] == f"kbsync.{door}.command"
    assert all(module.startswith("kbsync.cli.") for name, module in found.items() if name not in DOORS)


def _pure_modules() -> list[Path]:
    return [p for p in _modules() if floor(module_name(p)) == "core" or module_name(p) in PURE_OUTSIDE_CORE]


@pytest.mark.parametrize("path", _pure_modules(), ids=lambda p: module_name(p))
def test_pure_modules_import_no_io_library(path: Path) -> None:
    name = module_name(path)
    names = imported_modules(path.read_text(encoding="utf-8"))
    libraries = sorted(n for n in names if n.split(".")[0] in FORBIDDEN_TOP)
    assert not libraries, f"{name} is pure but imports {libraries}"
    inner = {n for n in names if n.startswith("kbsync.") and _known(n)}
    impure = sorted(n for n in inner if n == "kbsync.proc" or not (floor(n) in ("", "core") or n in PURE_OUTSIDE_CORE))
    assert not impure, f"{name} is pure but imports {impure}"


def _loaded_after(code: str) -> list[str]:
    script = f"import sys, json\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    loaded: list[str] = json.loads(proc.stdout)
    return loaded


def test_importing_the_pure_modules_loads_no_io_module() -> None:
    loaded = _loaded_after("\n".join(f"import {module_name(p)}" for p in _pure_modules()))
    bad = [m for m in loaded if m.split(".")[0] in FORBIDDEN_TOP - {"socket", "http", "urllib", "shutil", "tempfile"}
           or (m.startswith("kbsync.") and floor(m) not in ("", "core") and m not in PURE_OUTSIDE_CORE
               and m.removeprefix("kbsync.") not in RANK)  # a folder's __init__ holds only its docstring
           or m == "kbsync.proc"]
    assert not bad, f"importing the pure modules loaded {bad}"


def test_the_command_line_starts_without_heavy_libraries() -> None:
    loaded = _loaded_after("from kbsync.main import build_parser\nbuild_parser()")
    heavy = [m for m in loaded if m.split(".")[0] in HEAVY]
    assert not heavy, f"building the parser loaded {heavy}; import them inside the command's run()"


def starts_git(source: str) -> list[int]:
    """Lines where `source` starts git itself: `proc.git(...)`, `git(...)` imported from kbsync.proc, or a
    command list that begins with "git"."""
    tree = ast.parse(source)
    proc_git = any(isinstance(n, ast.ImportFrom) and n.module == "kbsync.proc" and any(a.name == "git" for a in n.names)
                   for n in ast.walk(tree))
    found: list[int] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            if (isinstance(f, ast.Attribute) and f.attr == "git" and isinstance(f.value, ast.Name) and f.value.id == "proc") \
                    or (proc_git and isinstance(f, ast.Name) and f.id == "git"):
                found.append(node.lineno)
        elif isinstance(node, ast.List) and node.elts and isinstance(node.elts[0], ast.Constant) and node.elts[0].value == "git":
            found.append(node.lineno)
    return found


def test_starts_git_sees_each_form() -> None:
    assert starts_git("from kbsync import proc\nproc.git(['log'], root)\n") == [2]
    assert starts_git("from kbsync.proc import git\ngit(['log'], root)\n") == [2]
    assert starts_git("import subprocess\nsubprocess.run(['git', 'log'])\n") == [2]
    assert starts_git("def git(x):\n    pass\ngit(1)\n") == []


@pytest.mark.parametrize("path", [p for p in _modules() if floor(module_name(p)) != "git"
                                  and module_name(p) != "kbsync.proc"], ids=lambda p: module_name(p))
def test_only_the_git_folder_starts_git(path: Path) -> None:
    lines = starts_git(path.read_text(encoding="utf-8"))
    assert not lines, f"{module_name(path)} starts git at lines {lines}; call a function of kbsync.git instead"
