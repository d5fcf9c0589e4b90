"""Secret-shaped test strings, built at run time so no such literal sits in the repository."""

from __future__ import annotations

import base64
import json
import random
import subprocess
from pathlib import Path

UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
LOWER = UPPER.lower()
DIGITS = "0123456789"
ALNUM = UPPER + LOWER + DIGITS


def rand(alphabet: str, n: int, seed: int) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(alphabet) for _ in range(n))


def _b64url(data: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


def _pem(kind: str) -> str:
    body = "\n".join(rand(ALNUM + "+/", 64, 40 + i) for i in range(6))
    begin, end = "-----" + "BEGIN", "-----" + "END"
    label = f"{kind} PRIV" + "ATE KEY-----"
    return f"{begin} {label}\n{body}\n{end} {label}"


def provider_secrets() -> dict[str, str]:
    """Rule id -> a line holding one fake credential of that provider."""
    jwt = ".".join([_b64url({"alg": "HS256", "typ": "JWT"}), _b64url({"sub": rand(ALNUM, 12, 9), "n": 1}),
                    rand(ALNUM + "_-", 43, 10)])
    return {
        "github-pat": "token: " + "gh" + "p_" + rand(ALNUM, 36, 1),
        "github-fine-grained-pat": "github" + "_pat_" + rand(ALNUM + "_", 82, 2),
        "gitlab-pat": "export GL=" + "gl" + "pat-" + rand(ALNUM, 20, 3),
        "aws-access-token": "aws id " + "AK" + "IA" + rand(UPPER + "234567", 16, 4),
        "gcp-api-key": "maps key " + "AI" + "za" + rand(ALNUM + "_-", 35, 5),
        "slack-bot-token": "xo" + "xb-" + rand(DIGITS, 12, 6) + "-" + rand(DIGITS, 12, 7) + "-" + rand(ALNUM, 24, 8),
        "stripe-access-token": "charge with " + "sk" + "_live_" + rand(ALNUM, 24, 11),
        "openai-api-key": "OPENAI=" + "sk-" + "proj-" + rand(ALNUM, 74, 12) + "T3Blbk" + "FJ" + rand(ALNUM, 74, 13),
        "anthropic-api-key": "key " + "sk-" + "ant-api03-" + rand(ALNUM, 93, 14) + "AA",
        "tencent-cloud-secret-id": "SecretId " + "AK" + "ID" + rand(ALNUM, 32, 15),
        "alibaba-access-key-id": "id " + "LT" + "AI" + rand(ALNUM, 20, 16),
        "private-key": _pem("RSA"),
        "jwt": "Authorization header " + jwt,
        "generic-api-key": "db_password = " + rand(ALNUM, 28, 17),
    }


# ---- repositories -------------------------------------------------------------------

SESSION_PATH = "sessions/2025-06-11/1432-a1b2c3d-合同评审.md"


def session_text(status: str = "status: closed", body: str = "") -> str:
    """A protocol-valid session file; `status` replaces its status line (to break it)."""
    return (
        "---\nid: 20250611-1432-a1b2c3d\nts: 2025-06-11T14:32:07+08:00\nrole: assistant\nparent: null\n"
        "tags: [合同, 风险]\nmodel: internal-chat-v3\nturns: 14\ntokens_in: 18240\ntokens_out: 3210\n"
        f'{status}\nsummary: "梳理了三条付款风险"\n---\n\n## 用户输入\n\n{body}\n\n## 我的判断\n\n## 工具调用\n\n'
        "## 结论\n\n## 待办\n"
    )


def git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-c", "core.quotePath=false", *args], cwd=repo, capture_output=True, text=True, check=check)


def new_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "Test")
    git(path, "config", "user.email", "test@example.org")
    git(path, "config", "commit.gpgsign", "false")
    return path


def write(repo: Path, relpath: str, content: str | bytes) -> Path:
    p = repo / relpath
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(content.encode() if isinstance(content, str) else content)
    return p


def stage(repo: Path, relpath: str, content: str | bytes) -> None:
    write(repo, relpath, content)
    git(repo, "add", "--", relpath)


def commit(repo: Path, message: str = "m") -> subprocess.CompletedProcess[str]:
    """`git commit`; the hook's output (git sends it to stderr) is in `.stdout`."""
    return subprocess.run(["git", "commit", "-q", "-m", message], cwd=repo, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
