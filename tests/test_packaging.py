"""The wheel that `scripts/install-daemon` installs holds every module of the package and its data."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "daemon" / "kbsync"


def _tracked_tree(dest: Path) -> None:
    """A copy of the files git tracks (and new ones not yet added), so the build leaves the work tree alone."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src = REPO / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


def test_the_wheel_holds_every_module_and_the_rules(tmp_path: Path) -> None:
    src, out = tmp_path / "src", tmp_path / "out"
    _tracked_tree(src)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(out),
                    str(src)], check=True, capture_output=True, text=True)
    wheel = next(out.glob("kbsync-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    modules = {p.relative_to(PACKAGE.parent).as_posix() for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts}
    assert modules and not modules - names, f"missing from the wheel: {sorted(modules - names)}"
    assert {"kbsync/data/secret-rules.toml", "kbsync/data/anchors.json"} <= names
    pages = {p.relative_to(PACKAGE.parent).as_posix() for folder in ("templates", "static")
             for p in (PACKAGE / "web" / folder).iterdir()}
    assert pages and not pages - names, f"the web pages' files missing from the wheel: {sorted(pages - names)}"
