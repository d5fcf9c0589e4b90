"""An export embeds only images that lie in the source's workspace and are reached through no symlink: a
session synced from elsewhere cannot make a person's export carry a file from outside it."""

from __future__ import annotations

from pathlib import Path

from helpers.cli import Cli
from helpers.export import png

SESSION = "sessions/2025-06-11/1432-a1b2c3d-x.md"


def _session(ws: Path, link: str) -> Path:
    path = ws / SESSION
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"# x\n\n![shot]({link})\n", encoding="utf-8")
    return path


def test_an_image_outside_the_workspace_or_behind_a_link_is_not_read(ws_root: Path, tmp_path: Path, cli: Cli) -> None:
    secret = tmp_path / "private.png"
    secret.write_bytes(png())
    (ws_root / "artifacts" / "linked.png").symlink_to(secret)
    (ws_root / "artifacts" / "inside.png").write_bytes(png())
    for link, says in (("../../../private.png", "lies outside"), ("../../artifacts/linked.png", "symlink")):
        src = _session(ws_root, link)
        done = cli("export", str(src), "--to", "html", "--out", str(tmp_path / "out"), cwd=ws_root)
        assert done.returncode == 1 and says in done.stderr, done.stderr
        page = (tmp_path / "out" / f"{src.stem}.html").read_text(encoding="utf-8")
        assert "data:image" not in page and str(secret) not in page
    src = _session(ws_root, "../../artifacts/inside.png")
    assert cli("export", str(src), "--to", "html", "--out", str(tmp_path / "out"), cwd=ws_root).returncode == 0
    assert "data:image/png" in (tmp_path / "out" / f"{src.stem}.html").read_text(encoding="utf-8")
