"""What every subcommand needs: the workspace and config from the global options, JSON input."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from kbsync.errors import InputError

if TYPE_CHECKING:
    from kbsync.app.workspace import Workspace
    from kbsync.config import Config


def context(args: argparse.Namespace) -> tuple[Path, Config]:
    """The workspace root and configuration named by -w / --config / environment."""
    from kbsync.app.workspace import locate

    return locate(args.workspace, args.config)


def workspace(args: argparse.Namespace) -> Workspace:
    """The Workspace named by the global options; UsageError if that folder does not exist."""
    from kbsync.app.workspace import open_workspace

    return open_workspace(args.workspace, args.config)


def read_json_input(path: str | None) -> dict[str, Any]:
    """A JSON object from `--file PATH` or standard input."""
    where = path or "<stdin>"
    try:
        raw = Path(path).read_bytes() if path else sys.stdin.buffer.read()
    except OSError as exc:
        raise InputError(f"cannot read input ({exc.strerror})", path=where) from exc
    from kbsync.app.workspace import parse_json_input

    return parse_json_input(raw, where)


def print_json(data: Any) -> None:
    json.dump(data, sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")


def print_json_items(items: Iterable[Any]) -> None:
    """`print_json` of the list of `items`, byte for byte, each written as soon as it comes."""
    first = True
    for item in items:
        text = json.dumps(item, ensure_ascii=False, indent=2).replace("\n", "\n  ")  # one level in
        sys.stdout.write(("[\n  " if first else ",\n  ") + text)
        first = False
    sys.stdout.write("[]\n" if first else "\n]\n")
