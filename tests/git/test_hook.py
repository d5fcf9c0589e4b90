"""`kbsync hook pre-commit` and `kbsync hook install` on real repositories, through real `git commit`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from helpers.cli import Cli, main_call
from helpers.hook import SESSION_PATH, commit, git, new_repo, provider_secrets, session_text, stage, write

BROKEN = session_text(status="status：closed")  # full-width colon: an error `kbsync repair` fixes
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    root = new_repo(tmp_path / "ws")
    out = main_call("hook", "install", cwd=root)
    assert out.returncode == 0, out.stderr
    return root


def head_files(repo: Path) -> list[str]:
    return git(repo, "ls-tree", "-r", "--name-only", "HEAD").stdout.split()


def test_valid_file_commits(repo: Path) -> None:
    stage(repo, SESSION_PATH, session_text())
    stage(repo, "memory/facts.md", "- 付款周期为 30 天\n")
    assert commit(repo).returncode == 0
    assert head_files(repo) == ["memory/facts.md", SESSION_PATH]


def test_invalid_file_blocks_with_path_line_and_what_to_do(repo: Path) -> None:
    stage(repo, SESSION_PATH, BROKEN)
    out = commit(repo)
    assert out.returncode == 1
    assert f"{SESSION_PATH}:11: error: full-width colon" in out.stdout
    assert f"run `kbsync repair {SESSION_PATH}`" in out.stdout
    assert "commit blocked" in out.stdout
    assert git(repo, "rev-parse", "--verify", "-q", "HEAD", check=False).returncode != 0


def test_file_fixed_on_disk_but_not_staged_still_fails(repo: Path) -> None:
    stage(repo, SESSION_PATH, BROKEN)
    write(repo, SESSION_PATH, session_text())
    out = commit(repo)
    assert out.returncode == 1 and f"{SESSION_PATH}:11: error" in out.stdout
    git(repo, "add", SESSION_PATH)
    assert commit(repo).returncode == 0


def test_fix_repairs_and_restages_when_tree_equals_index(repo: Path) -> None:
    write(repo, ".kbsync/config.toml", "[hook]\nfix = true\n")
    stage(repo, SESSION_PATH, BROKEN)
    out = commit(repo)
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"{SESSION_PATH}: repaired and staged" in out.stdout
    committed = git(repo, "show", f"HEAD:{SESSION_PATH}").stdout
    assert "status: closed" in committed and (repo / SESSION_PATH).read_text() == committed
    backups = list((repo / ".kbsync" / "backup").rglob("*.md"))
    assert [b.read_text() for b in backups] == [BROKEN]


def test_fix_never_clobbers_unstaged_work(repo: Path, cli: Cli) -> None:
    stage(repo, SESSION_PATH, BROKEN)
    unstaged = BROKEN + "\nmy unstaged note\n"
    write(repo, SESSION_PATH, unstaged)
    out = cli("hook", "pre-commit", "--fix", cwd=repo)
    assert out.returncode == 1
    assert "working tree differs from what is staged" in out.stdout
    assert (repo / SESSION_PATH).read_text() == unstaged
    assert git(repo, "show", f":{SESSION_PATH}").stdout == BROKEN


@pytest.mark.parametrize("rule", sorted(provider_secrets()))
def test_staged_secret_of_each_provider_blocks(repo: Path, rule: str, cli: Cli) -> None:
    line = provider_secrets()[rule]
    stage(repo, "notes/setup.txt", f"first line\n{line}\n")
    out = cli("hook", "pre-commit", cwd=repo)
    assert out.returncode == 1
    assert f"notes/setup.txt:2: secret: {rule} " in out.stdout
    secret = line.split()[-1] if rule != "private-key" else line.splitlines()[1]
    assert secret[6:] not in out.stdout + out.stderr


def test_secret_in_a_session_body_blocks_a_real_commit(repo: Path) -> None:
    stage(repo, SESSION_PATH, session_text(body=provider_secrets()["github-pat"]))
    out = commit(repo)
    assert out.returncode == 1 and "secret: github-pat ghp_********" in out.stdout


def test_allowed_line_and_allowlist_file(repo: Path, cli: Cli) -> None:
    lines = provider_secrets()
    stage(repo, "a.txt", f"{lines['aws-access-token']}  # kbsync:allow (documented sample)\n")
    stage(repo, "b.txt", f"{lines['stripe-access-token']}\n")
    out = cli("hook", "pre-commit", cwd=repo)
    assert out.returncode == 1 and "a.txt" not in out.stdout
    fingerprint = out.stdout.split("`")[-2]
    assert fingerprint.startswith("stripe-access-token@")
    write(repo, ".kbsync-allow", f"# accepted findings\n{fingerprint}  # test key of the sandbox account\n")
    assert cli("hook", "pre-commit", cwd=repo).returncode == 1  # the allowlist counts once it is staged
    git(repo, "add", ".kbsync-allow")
    assert commit(repo).returncode == 0


def test_binary_file_is_not_validated_or_scanned(repo: Path) -> None:
    stage(repo, "images/logo.png", b"\x89PNG\r\n\x1a\n\x00\x00" + provider_secrets()["github-pat"].encode())
    stage(repo, "sessions/2025-06-11/blob.md", b"\x00\x01binary")
    out = commit(repo)
    assert out.returncode == 1
    assert "sessions/2025-06-11/blob.md:1: error: binary content" in out.stdout
    assert "logo.png" not in out.stdout


def test_rename_is_checked_under_its_new_path_and_deletion_passes(repo: Path) -> None:
    stage(repo, SESSION_PATH, session_text())
    assert commit(repo).returncode == 0
    git(repo, "mv", SESSION_PATH, "sessions/2025-06-11/1432-a1b2c3d-renamed.md")
    assert commit(repo).returncode == 0
    (repo / "sessions/2025-06-12").mkdir()
    git(repo, "mv", "sessions/2025-06-11/1432-a1b2c3d-renamed.md", "sessions/2025-06-12/1432-a1b2c3d-x.md")
    out = commit(repo)
    assert out.returncode == 1 and "sessions/2025-06-12/1432-a1b2c3d-x.md:2: error: id" in out.stdout
    git(repo, "rm", "-q", "--cached", "sessions/2025-06-12/1432-a1b2c3d-x.md")
    assert commit(repo).returncode == 0
    assert head_files(repo) == []


def test_workspace_in_a_subfolder_of_the_repository(tmp_path: Path, cli: Cli) -> None:
    repo = new_repo(tmp_path / "repo")
    stage(repo, f"kb/{SESSION_PATH}", BROKEN)
    stage(repo, f"other/{SESSION_PATH}", BROKEN)  # outside the workspace: not a protocol file
    out = cli("-w", "kb", "hook", "pre-commit", cwd=repo)
    assert out.returncode == 1
    assert f"kb/{SESSION_PATH}:11: error" in out.stdout and f"`kbsync repair kb/{SESSION_PATH}`" in out.stdout
    assert "other/" not in out.stdout


def test_only_one_check_and_json(repo: Path, cli: Cli) -> None:
    stage(repo, SESSION_PATH, BROKEN)
    stage(repo, "key.txt", provider_secrets()["gitlab-pat"])
    assert cli("hook", "pre-commit", "--only", "secrets", cwd=repo).stdout.count("\n") == 1
    out = cli("hook", "pre-commit", "--only", "validate", "--json", cwd=repo)
    import json

    data = json.loads(out.stdout)
    assert data["blocked"] and data["secrets"] == [] and data["findings"][0]["path"] == SESSION_PATH


def test_local_state_must_not_be_committed(repo: Path) -> None:
    stage(repo, ".kbsync/state.json", "{}")
    out = commit(repo)
    assert out.returncode == 1 and "git rm --cached .kbsync/state.json" in out.stdout


def test_outside_a_repository_is_an_environment_error(tmp_path: Path, cli: Cli) -> None:
    out = cli("-w", str(tmp_path), "hook", "pre-commit", cwd=tmp_path)
    assert out.returncode == 3 and "Traceback" not in out.stderr


def test_daemon_commit_path_stays_green_with_the_hook_installed(repo: Path, cli: Cli) -> None:
    write(repo, ".kbsync/config.toml", "[daemon]\nquiet_ms = 0\n")
    write(repo, ".gitignore", ".kbsync/\n")
    write(repo, SESSION_PATH, session_text())
    write(repo, "notes/key.txt", provider_secrets()["github-pat"] + "\n")
    out = cli("-w", str(repo), "commit", cwd=repo)
    assert out.returncode == 0, out.stderr
    assert head_files(repo) == [".gitignore", SESSION_PATH]
    assert "notes/key.txt" in out.stderr and "ghp_********" in out.stderr
    stage(repo, "memory/facts.md", "- 一条事实\n")
    assert commit(repo).returncode == 0


# ---- install ------------------------------------------------------------------------

def test_install_refuses_a_different_hook_then_chains_or_forces(tmp_path: Path, cli: Cli) -> None:
    repo = new_repo(tmp_path / "ws")
    foreign = repo / ".git" / "hooks" / "pre-commit"
    foreign.write_text("#!/bin/sh\necho foreign ran >> \"$(git rev-parse --git-dir)/foreign.log\"\nexit 0\n")
    foreign.chmod(0o755)
    out = cli("hook", "install", cwd=repo)
    assert out.returncode == 2 and "--chain" in out.stderr and "foreign ran" in foreign.read_text()
    assert cli("hook", "install", "--chain", cwd=repo).returncode == 0
    stage(repo, SESSION_PATH, BROKEN)
    assert commit(repo).returncode == 1
    assert (repo / ".git" / "foreign.log").read_text() == "foreign ran\n"
    assert cli("hook", "install", cwd=repo).stdout.startswith("updated")
    (repo / ".git" / "hooks" / "pre-commit.chained").unlink()
    (repo / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
    assert cli("hook", "install", "--force", cwd=repo).returncode == 0
    assert (repo / ".git" / "hooks" / "pre-commit.kbsync-backup").read_text() == "#!/bin/sh\nexit 0\n"


def test_chained_hook_failure_blocks(tmp_path: Path, cli: Cli) -> None:
    repo = new_repo(tmp_path / "ws")
    foreign = repo / ".git" / "hooks" / "pre-commit"
    foreign.write_text("#!/bin/sh\necho no >&2\nexit 7\n")
    foreign.chmod(0o755)
    assert cli("hook", "install", "--chain", cwd=repo).returncode == 0
    stage(repo, SESSION_PATH, session_text())
    assert commit(repo).returncode != 0


@pytest.mark.parametrize("name", ["pre-commit", "pre-push"])
def test_committed_trampolines_are_the_install_templates(name: str) -> None:
    from kbsync.git.hookinstall import trampoline

    assert (ROOT / "hooks" / name).read_text() == trampoline(name, None)


def test_committed_trampoline_runs_kbsync_from_path(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "ws")
    stage(repo, SESSION_PATH, BROKEN)
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(tmp_path)}
    out = subprocess.run([str(ROOT / "hooks" / "pre-commit")], cwd=repo, capture_output=True, text=True, env=env)
    assert out.returncode == 1 and "full-width colon" in out.stdout


def test_hook_path_imports_no_heavy_modules(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "ws")
    stage(repo, SESSION_PATH, BROKEN)
    stage(repo, "a.txt", provider_secrets()["jwt"])
    code = ("import sys\nfrom kbsync.main import main\nrc = main(['hook', 'pre-commit', '--fix'])\n"
            "print('HEAVY', sorted({m.split('.')[0] for m in sys.modules} & {'git', 'requests', 'watchdog'}))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True)
    assert "secret: jwt" in out.stdout
    assert "HEAVY []" in out.stdout


# ---- pushes -------------------------------------------------------------------------

def with_remote(repo: Path) -> Path:
    remote = repo.parent / "remote.git"
    git(repo.parent, "init", "-q", "--bare", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    return remote


def test_push_publishing_a_secret_is_blocked_even_when_a_later_commit_removed_it(repo: Path) -> None:
    remote = with_remote(repo)
    stage(repo, SESSION_PATH, session_text())
    assert commit(repo).returncode == 0
    assert git(repo, "push", "-q", "origin", "main", check=False).returncode == 0
    stage(repo, "notes.txt", provider_secrets()["gitlab-pat"] + "\n")
    git(repo, "commit", "-q", "--no-verify", "-m", "bypassing the commit hook")
    git(repo, "rm", "-q", "notes.txt")
    assert commit(repo).returncode == 0
    out = git(repo, "push", "origin", "main", check=False)
    assert out.returncode != 0
    assert "notes.txt:1: secret: gitlab-pat glpa********" in out.stdout + out.stderr
    assert git(remote, "rev-parse", "main").stdout != git(repo, "rev-parse", "main").stdout


def test_clean_push_and_ref_deletion_pass(repo: Path) -> None:
    with_remote(repo)
    stage(repo, SESSION_PATH, session_text())
    assert commit(repo).returncode == 0
    assert git(repo, "push", "-q", "origin", "main", "main:other", check=False).returncode == 0
    assert git(repo, "push", "-q", "origin", ":other", check=False).returncode == 0


def test_pushed_ranges_parse_git_stdin() -> None:
    from kbsync.git.hook import pushed_ranges

    a, b, zero = "a" * 40, "b" * 40, "0" * 40
    text = f"refs/heads/main {a} refs/heads/main {b}\nrefs/heads/new {a} refs/heads/new {zero}\n" \
           f"(delete) {zero} refs/heads/old {b}\n"
    assert pushed_ranges(text) == [(a, ["--remotes", b]), (a, ["--remotes"])]


def test_fix_leaves_an_unreadable_protocol_file_to_a_person(repo: Path, cli: Cli) -> None:
    stage(repo, "sessions/2025-06-11/0000-aaaaaaa-bad.md", b"\xff\xfe not utf-8\n")
    out = cli("hook", "pre-commit", "--fix", cwd=repo)
    assert out.returncode == 1 and "0000-aaaaaaa-bad.md:1: error: not UTF-8" in out.stdout
    assert "Traceback" not in out.stderr


def test_install_honours_core_hooks_path(tmp_path: Path, cli: Cli) -> None:
    repo = new_repo(tmp_path / "ws")
    git(repo, "config", "core.hooksPath", ".githooks")
    out = cli("hook", "install", cwd=repo)
    assert out.returncode == 0
    assert sorted(p.name for p in (repo / ".githooks").iterdir()) == ["pre-commit", "pre-push"]
    stage(repo, SESSION_PATH, BROKEN)
    assert commit(repo).returncode == 1


def test_push_honours_the_allowlist_of_the_pushed_commit(repo: Path, cli: Cli) -> None:
    with_remote(repo)
    stage(repo, "notes.txt", provider_secrets()["slack-bot-token"] + "\n")
    fingerprint = cli("hook", "pre-commit", cwd=repo).stdout.split("`")[-2]
    stage(repo, ".kbsync-allow", fingerprint + "\n")
    assert commit(repo).returncode == 0
    assert git(repo, "push", "-q", "origin", "main", check=False).returncode == 0
