"""Every `kbsync.…` name a docstring or comment of the package gives exists: a module, or a name in one
(issue 34: after the move into folders, docstrings named modules that were gone)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import kbsync

PACKAGE = Path(kbsync.__file__).parent
NAME = re.compile(r"(?<![/\w.-])kbsync(?:\.[A-Za-z_][A-Za-z0-9_]*)+")  # not a file name such as /static/kbsync.css


def resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def test_every_kbsync_name_in_the_source_exists() -> None:
    missing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            for name in NAME.findall(line):
                name = name.rstrip(".")
                if not resolves(name):
                    missing.append(f"{path.relative_to(PACKAGE.parent)}:{n}: {name}")
    assert not missing, "names of nothing:\n" + "\n".join(missing)
