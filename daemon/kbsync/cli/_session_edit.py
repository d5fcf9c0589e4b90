"""`kbsync session section` and `kbsync session split`, added to the `session` command's parser."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kbsync.cli.common import print_json, workspace
from kbsync.cliargs import Subparsers
from kbsync.errors import InputError


def register(ss: Subparsers) -> None:
    sec = ss.add_parser("section", help="replace (or --append to) one section of a session; text on stdin or --file",
                        description="Writes the text under `## NAME` of session ID, under the file's lock. A heading "
                                    "inside the text is kept as text; the file's other bytes do not change.")
    sec.add_argument("id", metavar="ID", help="session id, YYYYMMDD-HHMM-<7 hex>")
    sec.add_argument("name", metavar="NAME", help="section heading, e.g. 结论 (synonyms such as TODO are accepted)")
    sec.add_argument("--append", action="store_true", help="add the text after the section's content instead of replacing it")
    sec.add_argument("--file", metavar="PATH", help="read the text from PATH instead of standard input")
    sec.add_argument("--json", action="store_true", help="print the result as JSON")
    sec.set_defaults(func=run_section)
    spl = ss.add_parser("split", help="split a session into child sessions at its ### topic headings (or --at LINE)",
                        description="Each part from a boundary to the next becomes a child session whose parent is ID; "
                                    "the original keeps its frontmatter, what precedes the first boundary and links.")
    spl.add_argument("id", metavar="ID", help="session id, YYYYMMDD-HHMM-<7 hex>")
    spl.add_argument("--at", metavar="LINE", type=int, nargs="+", help="split at these line numbers of the file instead")
    spl.add_argument("--json", action="store_true", help="print the result as JSON")
    spl.set_defaults(func=run_split)


def read_text_input(path: str | None) -> str:
    """UTF-8 text from `--file PATH` or standard input."""
    where = path or "<stdin>"
    try:
        raw = Path(path).read_bytes() if path else sys.stdin.buffer.read()
    except OSError as exc:
        raise InputError(f"cannot read input ({exc.strerror})", path=where) from exc
    from kbsync.app.sessions import decode_text

    return decode_text(raw, where)


def run_section(args: argparse.Namespace) -> int:
    from kbsync.app.sessions import write_section

    text = read_text_input(args.file)
    result = write_section(workspace(args), args.id, args.name, text, append=args.append)
    if args.json:
        from kbsync.app.shapes import section_written

        print_json(section_written(result))
    else:
        print(result.relpath)
    return 0


def run_split(args: argparse.Namespace) -> int:
    from kbsync.app.sessions import split_session

    result = split_session(workspace(args), args.id, args.at)
    if args.json:
        print_json({"path": result.relpath, "children": [{"id": c.sid, "path": c.relpath, "title": c.title}
                                                         for c in result.children]})
    else:
        print("\n".join(c.relpath for c in result.children))
    return 0
