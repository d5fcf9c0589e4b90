"""Test helpers for sync: the API description's schemas, a checked test server, workspaces on a bare remote."""

from __future__ import annotations

import json
import subprocess
from functools import lru_cache
from pathlib import Path
from typing import Any

from openapi_schema_validator import OAS30Validator

SPEC = Path(__file__).resolve().parents[1] / "data" / "github-git-database-api.json"
REPO = "/repos/{owner}/{repo}/"
OPERATIONS = {
    ("GET", "ref"): ("git/ref/{ref}", "get"),
    ("GET", "matching-refs"): ("git/matching-refs/{ref}", "get"),
    ("PATCH", "refs"): ("git/refs/{ref}", "patch"),
    ("POST", "refs"): ("git/refs", "post"),
    ("POST", "blobs"): ("git/blobs", "post"),
    ("GET", "blobs"): ("git/blobs/{file_sha}", "get"),
    ("POST", "trees"): ("git/trees", "post"),
    ("GET", "trees"): ("git/trees/{tree_sha}", "get"),
    ("POST", "commits"): ("git/commits", "post"),
    ("GET", "commits"): ("git/commits/{commit_sha}", "get"),
    ("PUT", "contents"): ("contents/{path}", "put"),
    ("GET", "compare"): ("compare/{basehead}", "get"),
}


@lru_cache(maxsize=1)
def spec() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(SPEC.read_text(encoding="utf-8"))
    return data


def _deref(node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        target: Any = spec()
        for part in node["$ref"].lstrip("#/").split("/"):
            target = target[part]
        node = target
    return node


def _json_schema(holder: dict[str, Any]) -> dict[str, Any] | None:
    content = _deref(holder).get("content", {}).get("application/json")
    return None if content is None else dict(content["schema"])


def response_schema(method: str, route: str, status: int) -> dict[str, Any] | None:
    """The schema the API description gives this operation's response with `status`."""
    path, verb = OPERATIONS[(method, route)]
    responses = spec()["paths"][REPO + path][verb]["responses"]
    holder = responses.get(str(status))
    if holder is None:
        return {"$ref": "#/components/schemas/basic-error"} if status >= 400 else None
    return _json_schema(holder)


def request_schema(method: str, route: str) -> dict[str, Any] | None:
    path, verb = OPERATIONS[(method, route)]
    body = spec()["paths"][REPO + path][verb].get("requestBody")
    return None if body is None else _json_schema(body)


_VALIDATORS: dict[str, OAS30Validator] = {}


def problems(schema: dict[str, Any] | None, instance: Any) -> list[str]:
    if schema is None:
        return []
    key = json.dumps(schema, sort_keys=True)
    if key not in _VALIDATORS:
        _VALIDATORS[key] = OAS30Validator({**schema, "components": spec()["components"]})
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in _VALIDATORS[key].iter_errors(instance)]


class SpecCheck:
    """A `check` for GitHubServer: collects every mismatch with the API description."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.checked = 0

    def __call__(self, method: str, route: str, status: int, request: Any, response: Any) -> None:
        if (method, route) not in OPERATIONS:
            self.errors.append(f"{method} {route}: not an operation of the API description")
            return
        self.checked += 1
        if request is not None:
            self.errors += [f"{method} {route} request: {p}" for p in problems(request_schema(method, route), request)]
        self.errors += [f"{method} {route} {status}: {p}" for p in problems(response_schema(method, route, status), response)]


def git(cwd: Path, *args: str, check: bool = True) -> str:
    proc = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout.strip()


def make_bare(path: Path, branch: str = "main") -> Path:
    subprocess.run(["git", "init", "-q", "--bare", "-b", branch, str(path)], check=True)
    return path


def seed_bare(bare: Path, files: dict[str, str], tmp: Path, branch: str = "main") -> str:
    """Push one commit holding `files` to `bare`; its sha."""
    work = tmp / "seed"
    subprocess.run(["git", "init", "-q", "-b", branch, str(work)], check=True)
    for rel, text in files.items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text(text, encoding="utf-8")
    git(work, "add", "-A")
    git(work, "-c", "user.name=seed", "-c", "user.email=seed@localhost", "commit", "-q", "-m", "seed")
    git(work, "push", "-q", str(bare), f"HEAD:refs/heads/{branch}")
    return git(work, "rev-parse", "HEAD")


# ---- workspaces syncing with one remote --------------------------------------------------

SYNC_CONFIG = "[daemon]\nquiet_ms = 0\n"


def workspace(tmp: Path, name: str, bare: Path, extra_config: str = "") -> Path:
    """A fresh `kbsync init` workspace whose git remote `origin` is `bare`, committing without a quiet delay."""
    from kbsync.app.workspace import init_workspace

    root = tmp / name
    init_workspace(root)
    git(root, "remote", "add", "origin", str(bare))
    (root / ".kbsync" / "config.toml").write_text(SYNC_CONFIG + extra_config, encoding="utf-8")
    return root


def open_ws(root: Path) -> "Any":
    from kbsync.config import resolve
    from kbsync.store.workspace import Workspace

    _root, cfg = resolve(str(root), None)
    return Workspace(root, cfg)


def tree_files(repo: Path, rev: str) -> dict[str, bytes]:
    """Every file of `rev` in `repo` with its bytes."""
    names = git(repo, "ls-tree", "-r", "-z", "--name-only", rev).split("\0")
    return {n: subprocess.run(["git", "-C", str(repo), "show", f"{rev}:{n}"], capture_output=True, check=True).stdout
            for n in names if n}


def all_text(files: dict[str, bytes]) -> str:
    return "\n".join(data.decode("utf-8", "replace") for data in files.values())


def board_entry(title: str, summary: str) -> "Any":
    from kbsync.core import board

    return board.Entry(title=title, type="方法", topic="sync", summary=summary, core_content=f"{title}: {summary}\n",
                       source="test", source_date="2025-06-11", scenarios=("sync",), confidence="high")


def upsert_board(root: Path, title: str, summary: str) -> None:
    from kbsync.core import board

    p = root / "LEARNING_BOARD.md"
    p.write_text(board.upsert(p.read_text(encoding="utf-8"), board_entry(title, summary))[0], encoding="utf-8")


def append(root: Path, relpath: str, line: str) -> None:
    with open(root / relpath, "a", encoding="utf-8") as fh:
        fh.write(line + "\n")


def is_ancestor(repo: Path, old: str, new: str) -> bool:
    return subprocess.run(["git", "-C", str(repo), "merge-base", "--is-ancestor", old, new]).returncode == 0
