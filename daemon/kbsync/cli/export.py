"""`kbsync export PATH... --to html|docx`: sessions, artifacts and the board as HTML or DOCX."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from kbsync.errors import EXIT_OK, EXIT_PROBLEMS, InputError, UsageError

FORMATS = ("html", "docx")
IMAGE_MODES = ("inline", "absolute")


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "export",
        help="render Markdown files (sessions, artifacts, the board) as HTML or DOCX",
        description="Render Markdown files as self-contained HTML (built in) or DOCX (needs pandoc). "
        "Relative images are resolved against each source file. For PDF, print the HTML from a browser.",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="Markdown files to export")
    p.add_argument("--to", choices=FORMATS, required=True, help="output format")
    p.add_argument("--out", metavar="DIR", default=".", help="folder for the output files (default: current folder)")
    p.add_argument("--images", choices=IMAGE_MODES, default="inline",
                   help="relative images: inline as data: URIs (default) or absolute file: links")
    p.add_argument("--json", action="store_true", help="print what was written as JSON")
    p.set_defaults(func=run)


def _sources(paths: list[str]) -> list[Path]:
    """The source files, checked before anything is written."""
    sources = [Path(p) for p in paths]
    for src in sources:
        if not src.is_file():
            raise InputError("no such file; give the Markdown files to export", path=str(src))
    stems: dict[str, Path] = {}
    for src in sources:
        other = stems.setdefault(src.stem, src)
        if other != src:
            raise UsageError(f"{other} and {src} would both be written as {src.stem}.*; export them to different --out folders")
    return sources


def run(args: argparse.Namespace) -> int:
    from kbsync import export
    from kbsync.commands.common import print_json

    sources = _sources(args.paths)
    out_dir = Path(args.out)
    if out_dir.exists() and not out_dir.is_dir():
        raise UsageError("--out must be a folder", path=str(out_dir))
    if args.to == "docx":
        export.require_pandoc()
    done = [export.export_file(src, str(src), out_dir, args.to, args.images) for src in sources]
    findings = [f for d in done for f in d.findings]
    if args.json:
        print_json([{"source": d.source, "output": d.output, "findings": [f.as_dict() for f in d.findings]} for d in done])
    else:
        for d in done:
            print(d.output)
        for f in findings:
            sys.stderr.write(f"{f}\n")
    return EXIT_PROBLEMS if findings else EXIT_OK
