"""`kbsync export PATH... --to html|docx`: sessions, artifacts and the board as HTML or DOCX."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from kbsync.errors import EXIT_OK, EXIT_PROBLEMS

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


def run(args: argparse.Namespace) -> int:
    from kbsync.app.files import export
    from kbsync.cli.common import print_json

    done = export(args.paths, args.out, args.to, args.images)
    findings = [f for d in done for f in d.findings]
    if args.json:
        print_json([{"source": d.source, "output": d.output, "findings": [f.as_dict() for f in d.findings]} for d in done])
    else:
        for d in done:
            print(d.output)
        for f in findings:
            sys.stderr.write(f"{f}\n")
    return EXIT_PROBLEMS if findings else EXIT_OK
