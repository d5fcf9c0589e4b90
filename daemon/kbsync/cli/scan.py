"""`kbsync scan`: new or changed files of the configured sources become candidate lists."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from kbsync.errors import EXIT_OK


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "scan", help="write candidate lists for files new or changed since each source's watermark",
        description="Scan the [[scan.sources]] of the config for files new or changed since the last scan and "
        "write candidates/YYYY-MM-DD-<source>.md for a person to review. Nothing is added to the board.")
    p.add_argument("sources", nargs="*", metavar="SOURCE", help="only these sources (default: all)")
    p.add_argument("--json", action="store_true", help="print the candidates written as JSON")
    p.add_argument("--now", metavar="TIME", help="the reference time, ISO 8601 (default: the clock); dates the list")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kbsync.app.board import clock
    from kbsync.app.candidates import scan
    from kbsync.cli.common import print_json, workspace

    results = scan(workspace(args), clock(args.now), args.sources or None)
    if args.json:
        print_json([c.as_dict() | {"list": r.list_path} for r in results for c in r.candidates])
    for r in results if args.json else []:
        _left_out(r.source, r.counts.left_out)
    if args.json:
        return EXIT_OK
    for r in results:
        c = r.counts
        where = f" -> {r.list_path}" if r.list_path else ""
        print(f"{r.source}: {len(r.candidates)} candidates{where} (new {c.new}, changed {c.changed}, "
              f"renamed {c.renamed}, deleted {c.deleted}, proposed before {c.proposed_before})")
        for cand in r.candidates:
            flags = f"  [{', '.join(cand.flags)}]" if cand.flags else ""
            print(f"  {cand.id}  {cand.path}  {cand.title}{flags}")
        _left_out(r.source, c.left_out)
    return EXIT_OK


def _left_out(source: str, left_out: dict[str, str]) -> None:
    """Each file of a source that was not read, with why, on standard error (with --json too)."""
    for path, why in sorted(left_out.items()):
        sys.stderr.write(f"{source}: {path}: left out: {why}\n")
