"""The hooks as the pre-commit framework runs them: `pre-commit try-repo` against this repository."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.hook import SESSION_PATH, git, new_repo, provider_secrets, session_text, stage

ROOT = Path(__file__).resolve().parents[2]


def try_repo(repo: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    return subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(ROOT)], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.slow  # builds the framework's environment for kbsync (pip install from the package index)
def test_try_repo_runs_both_hooks_from_this_repository(tmp_path: Path) -> None:
    if subprocess.run(["git", "rev-parse"], cwd=ROOT, capture_output=True).returncode != 0:
        pytest.skip("this checkout is not a git repository; try-repo needs one")
    repo = new_repo(tmp_path / "ws")
    stage(repo, SESSION_PATH, session_text(status="status：closed"))
    stage(repo, "setup.txt", provider_secrets()["openai-api-key"] + "\n")
    out = try_repo(repo, tmp_path / "pre-commit-home")
    assert out.returncode == 1, out.stdout + out.stderr
    assert "- hook id: kbsync-validate" in out.stdout and "- hook id: kbsync-secrets" in out.stdout
    assert f"{SESSION_PATH}:11: error: full-width colon" in out.stdout
    assert "setup.txt:1: secret: openai-api-key" in out.stdout

    stage(repo, SESSION_PATH, session_text())
    git(repo, "rm", "-q", "--cached", "setup.txt")
    out = try_repo(repo, tmp_path / "pre-commit-home")
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.count("Passed") == 2
