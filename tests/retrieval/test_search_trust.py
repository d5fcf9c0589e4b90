"""A search source that runs a program is honoured only from a config file a person on this machine controls:
`--config` outside the workspace, or an untracked `.kbsync/config.toml`. Never from a tracked file, from the
workspace's content, or through a link into it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.cli import Cli
from helpers.core import new_workspace

MARKER = "ran-a-command"


def command_source(marker: Path) -> str:
    return (f'[[search.sources]]\nname = "tool"\nkind = "command"\n'
            f'command = ["sh", "-c", "touch {marker}; echo \'{{\\"title\\": \\"t\\", \\"key\\": \\"k\\"}}\'"]\n')


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def refused(done: subprocess.CompletedProcess[str], says: str) -> None:
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "runs a program" in lines[0] and says in lines[0], done.stderr


def test_an_untracked_workspace_config_and_an_outside_config_may_run_programs(tmp_path: Path, cli: Cli) -> None:
    root = tmp_path / "ws"
    new_workspace(root)
    marker = tmp_path / MARKER
    (root / ".kbsync" / "config.toml").write_text(command_source(marker), encoding="utf-8")
    done = cli("-w", str(root), "search", "合同")
    assert done.returncode == 0 and marker.exists(), done.stderr
    marker.unlink()
    outside = tmp_path / "mine.toml"
    outside.write_text(command_source(marker), encoding="utf-8")
    done = cli("-w", str(root), "--config", str(outside), "search", "合同")
    assert done.returncode == 0 and marker.exists(), done.stderr


def test_a_tracked_workspace_config_runs_nothing(tmp_path: Path, cli: Cli) -> None:
    root = tmp_path / "ws"
    new_workspace(root)
    marker = tmp_path / MARKER
    (root / ".kbsync" / "config.toml").write_text(command_source(marker), encoding="utf-8")
    git(root, "add", "-f", ".kbsync/config.toml")
    git(root, "commit", "-q", "-m", "config")
    refused(cli("-w", str(root), "search", "合同"), ".kbsync/config.toml is tracked by git")
    assert not marker.exists()


def test_a_config_in_the_workspace_content_or_linked_from_it_runs_nothing(tmp_path: Path, cli: Cli) -> None:
    root = tmp_path / "ws"
    new_workspace(root)
    marker = tmp_path / MARKER
    synced = root / "memory" / "tools.toml"
    synced.write_text(command_source(marker), encoding="utf-8")
    refused(cli("-w", str(root), "--config", str(synced), "search", "合同"), "memory/tools.toml")
    (root / ".kbsync" / "config.toml").symlink_to(synced)
    refused(cli("-w", str(root), "search", "合同"), "memory/tools.toml")
    assert not marker.exists()


# ---- the caller's query never chooses a program's options --------------------------------------------

# A program that reads options the naive way (no `--` handling, like a wrapper that passes its words on):
# any argument that starts with --pre= is run, as ripgrep runs --pre on every file it searches.
NAIVE = """import json, os, pathlib, sys
for arg in sys.argv[1:]:
    if arg.startswith("--pre="):
        pathlib.Path(arg.split("=", 1)[1]).write_text("ran")
print(json.dumps({"title": "argv=" + json.dumps(sys.argv[1:], ensure_ascii=False), "key": "k1",
                  "summary": "env=" + os.environ.get("KBSYNC_QUERY", "")}))
"""


def naive_source(tmp: Path, *words: str) -> str:
    script = tmp / "naive.py"
    script.write_text(NAIVE, encoding="utf-8")
    cmd = json.dumps([sys.executable, str(script), *words])
    return f'[[search.sources]]\nname = "naive"\nkind = "command"\ncommand = {cmd}\n'


@pytest.mark.parametrize("words, says", [
    (("{query}",), 'does not follow "--"'),
    (("--json", "{query}", "--"), 'does not follow "--"'),
    (("--", "--q={query}"), "inside a word"),
    (("--", "x{query}"), "inside a word"),
])
def test_a_query_word_an_option_could_read_is_refused_when_the_config_is_read(
        tmp_path: Path, cli: Cli, words: tuple[str, ...], says: str) -> None:
    root = tmp_path / "ws"
    new_workspace(root)
    (root / ".kbsync" / "config.toml").write_text(naive_source(tmp_path, *words), encoding="utf-8")
    done = cli("-w", str(root), "search", "合同")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "search.sources[0] (naive)" in lines[0] and says in lines[0], lines
    assert "KBSYNC_QUERY" in lines[0]


def test_a_shell_command_with_the_query_inside_is_refused(tmp_path: Path, cli: Cli) -> None:
    root = tmp_path / "ws"
    new_workspace(root)
    cmd = json.dumps(["sh", "-c", "rg {query} ."])
    (root / ".kbsync" / "config.toml").write_text(
        f'[[search.sources]]\nname = "sh"\nkind = "command"\ncommand = {cmd}\n', encoding="utf-8")
    done = cli("-w", str(root), "search", "合同")
    assert done.returncode == 2 and "inside a word" in done.stderr and "Traceback" not in done.stderr


ATTACKS = ["--pre={marker}", "-pre={marker} 合同", "--pre={marker} --json"]


def test_a_dash_query_reaches_no_program_through_the_cli(tmp_path: Path, cli: Cli) -> None:
    root = tmp_path / "ws"
    new_workspace(root)
    marker = tmp_path / MARKER
    (root / ".kbsync" / "config.toml").write_text(naive_source(tmp_path, "--", "{query}"), encoding="utf-8")
    for attack in ATTACKS:
        done = cli("-w", str(root), "search", "--json", "--", attack.format(marker=marker))
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr  # no other source has hits
        assert "search source naive left out: the query starts with '-'" in done.stderr, done.stderr
        assert not marker.exists(), attack
    # a dash inside the query stays: the words reach the program as one argument after --
    done = cli("-w", str(root), "search", f"合同 --pre={marker}", "--json")
    assert done.returncode == 0, done.stderr
    [hit] = json.loads(done.stdout)
    assert hit["title"] == "argv=" + json.dumps(["--", f"合同 --pre={marker}"], ensure_ascii=False)
    assert hit["summary"] == f"env=合同 --pre={marker}"
    assert not marker.exists()


def test_a_program_reading_the_environment_gets_the_query(tmp_path: Path, cli: Cli) -> None:
    root = tmp_path / "ws"
    new_workspace(root)
    (root / ".kbsync" / "config.toml").write_text(naive_source(tmp_path), encoding="utf-8")
    done = cli("-w", str(root), "search", "发票 2025", "--json")
    assert done.returncode == 0, done.stderr
    [hit] = json.loads(done.stdout)
    assert hit["title"] == "argv=[]" and hit["summary"] == "env=发票 2025"


def test_a_dash_query_reaches_no_program_through_the_http_api(tmp_path: Path) -> None:
    from helpers.web import WebServer, configure

    root = tmp_path / "ws"
    new_workspace(root)
    marker = tmp_path / MARKER
    configure(root, naive_source(tmp_path, "--", "{query}"))
    home = tmp_path / "home"
    home.mkdir()
    server = WebServer(root, home)
    try:
        for attack in ATTACKS:
            r = server.call("GET", "/search", params={"q": attack.format(marker=marker)})
            assert r.status_code == 200, r.text
            body = r.json()
            assert body["results"] == [] and [f["source"] for f in body["failures"]] == ["naive"], body
            assert "starts with '-'" in body["failures"][0]["reason"]
            assert not marker.exists(), attack
        r = server.call("GET", "/search", params={"q": f"合同 --pre={marker}"})
        assert r.status_code == 200 and r.json()["results"][0]["title"].startswith('argv=["--", "合同 --pre='), r.text
        assert not marker.exists()
    finally:
        server.kill()


def test_a_dash_query_reaches_no_program_through_mcp(tmp_path: Path) -> None:
    import anyio

    from helpers.mcp import data, stdio

    root = tmp_path / "ws"
    new_workspace(root)
    marker = tmp_path / MARKER
    (root / ".kbsync" / "config.toml").write_text(naive_source(tmp_path, "--", "{query}"), encoding="utf-8")

    async def run() -> None:
        async with stdio(root) as client:
            for attack in ATTACKS:
                got = data(await client.call_tool("search", {"query": attack.format(marker=marker)}))
                assert got["results"] == [] and [f["source"] for f in got["failures"]] == ["naive"], got
                assert "starts with '-'" in got["failures"][0]["reason"]
                assert not marker.exists(), attack
            got = data(await client.call_tool("search", {"query": f"合同 --pre={marker}"}))
            assert got["results"][0]["content"]["title"].startswith('argv=["--", "合同 --pre='), got

    anyio.run(run)
    assert not marker.exists()
