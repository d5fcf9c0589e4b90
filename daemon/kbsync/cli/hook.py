"""`kbsync hook pre-commit` (check what is staged), `kbsync hook pre-push` (scan what a push
publishes) and `kbsync hook install` (write both git hooks)."""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from kbsync.errors import EXIT_OK, EXIT_PROBLEMS

if TYPE_CHECKING:
    from kbsync.app.repo import HookReport, SecretFinding


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("hook", help="git hooks: validate and secret-scan staged files; scan pushes")
    sub = p.add_subparsers(dest="hook_command", metavar="ACTION", required=True)
    pc = sub.add_parser("pre-commit", help="check the staged files; exit 1 blocks the commit")
    pc.add_argument("--fix", action=argparse.BooleanOptionalAction, default=None,
                    help="repair and re-stage files whose working tree equals the index (default: [hook] fix)")
    pc.add_argument("--only", choices=("validate", "secrets"), help="run one of the two checks")
    pc.add_argument("--json", action="store_true", help="print the findings as JSON")
    pc.set_defaults(func=run_pre_commit)
    pp = sub.add_parser("pre-push", help="scan what a push would publish (ref updates on stdin, as git "
                                         "gives them); exit 1 blocks the push")
    pp.add_argument("remote", nargs="?", help="remote name (given by git; unused)")
    pp.add_argument("url", nargs="?", help="remote URL (given by git; unused)")
    pp.set_defaults(func=run_pre_push)
    ins = sub.add_parser("install", help="write .git/hooks/pre-commit and pre-push (trampolines into this kbsync)")
    how = ins.add_mutually_exclusive_group()
    how.add_argument("--force", action="store_true", help="replace a different existing hook (a copy is kept)")
    how.add_argument("--chain", action="store_true", help="keep a different existing hook and run it first")
    ins.set_defaults(func=run_install)


def run_pre_commit(args: argparse.Namespace) -> int:
    from kbsync.app.repo import pre_commit

    report = pre_commit(args.workspace, args.config, fix=args.fix, only=args.only)
    if args.json:
        from kbsync.cli.common import print_json

        print_json(_as_json(report))
    else:
        _print(report)
    return EXIT_PROBLEMS if report.blocked else EXIT_OK


def run_pre_push(args: argparse.Namespace) -> int:
    from kbsync.app.repo import pre_push

    found = pre_push(args.workspace, sys.stdin.read())
    for s in found:
        print(f"{s.path}:{s.line}: secret: {s.rule}{_encoded(s)} {s.preview}; the push would publish it: remove it from the "
              f"commits (amend or rebase), or if it is not a secret add `{s.fingerprint}` to .kbsync-allow")
    if found:
        print(f"kbsync: push blocked: {len(found)} secret(s) in the commits to push", file=sys.stderr)
    return EXIT_PROBLEMS if found else EXIT_OK


def _encoded(finding: SecretFinding) -> str:
    return f" (in {finding.encoding}-encoded text)" if finding.encoding else ""


def _print(report: HookReport) -> None:
    for path, fixes in report.fixed.items():
        print(f"{path}: repaired and staged ({'; '.join(fixes)})")
    for f in report.findings:
        print(f)
    for s in report.secrets:
        print(f"{s.path}:{s.line}: secret: {s.rule}{_encoded(s)} {s.preview}; remove it and revoke it, or if it is "
              f"not a secret add `kbsync:allow` to the line (in a file a person writes) or `{s.fingerprint}` to "
              ".kbsync-allow")
    if report.blocked:
        errors = sum(f.level == "error" for f in report.findings)
        print(f"kbsync: commit blocked: {errors} invalid finding(s), {len(report.secrets)} secret(s) in "
              "staged files; fix them and `git add` the files", file=sys.stderr)


def _as_json(report: HookReport) -> dict[str, Any]:
    return {
        "blocked": report.blocked,
        "checked": report.checked,
        "fixed": report.fixed,
        "findings": [f.as_dict() for f in report.findings],
        "secrets": [asdict(s) for s in report.secrets],
    }


def run_install(args: argparse.Namespace) -> int:
    from kbsync.app.repo import install_hooks

    for line in install_hooks(args.workspace, sys.executable, force=args.force, chain=args.chain):
        print(line)
    return EXIT_OK
