"""Export to HTML and DOCX: self-contained pages, images that still resolve in another folder."""

from __future__ import annotations

import base64
import json
import shutil
import zipfile
from pathlib import Path
from urllib.parse import unquote, urlsplit
from urllib.request import url2pathname

import pytest

from helpers.cli import Cli
from helpers.export import parse_html, png, session_text
from kbsync.store.export import body_html, frontmatter_rows, is_relative_src

RED, BLUE = png((255, 0, 0)), png((0, 0, 255))
HAS_PANDOC = shutil.which("pandoc") is not None


@pytest.fixture
def session(tmp_path: Path) -> Path:
    """A session with one image beside it, one in a sub-folder with spaces and CJK, one remote."""
    ws = tmp_path / "kb"
    day = ws / "sessions" / "2025-06-11"
    (day / "img").mkdir(parents=True)
    (day / "img" / "red.png").write_bytes(RED)
    (ws / "artifacts" / "2025-06-11").mkdir(parents=True)
    (ws / "artifacts" / "2025-06-11" / "蓝 图.png").write_bytes(BLUE)
    doc = day / "1432-a1b2c3d-合同风险.md"
    doc.write_text(session_text({
        "用户输入": "看图：![红](img/red.png)",
        "我的判断": "| 图 | 说明 |\n| --- | --- |\n| ![蓝](<../../artifacts/2025-06-11/蓝 图.png>) | 蓝色 |",
        "工具调用": "![远程](https://example.org/x.png)\n\n<script>alert(1)</script>",
        "结论": "", "待办": "",
    }), encoding="utf-8")
    return doc


def _file_of(src: str) -> Path:
    parts = urlsplit(src)
    assert parts.scheme == "file", src
    return Path(url2pathname(unquote(parts.path)))


def test_html_inline_images_survive_a_move(session: Path, tmp_path: Path, cli: Cli) -> None:
    out = tmp_path / "elsewhere"
    r = cli("export", str(session), "--to", "html", "--out", str(out), "--images", "inline", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    page = out / f"{session.stem}.html"
    moved = shutil.move(str(page), str(tmp_path / "moved.html"))
    shutil.rmtree(session.parent.parent.parent)  # the workspace is gone: the page must not need it
    parsed = parse_html(Path(moved).read_text(encoding="utf-8"))
    local = [s for s in parsed.srcs if not s.startswith("https:")]
    assert [base64.b64decode(s.split(",", 1)[1]) for s in local] == [RED, BLUE]
    assert all(s.startswith("data:image/png;base64,") for s in local)
    assert "https://example.org/x.png" in parsed.srcs
    assert "script" not in parsed.tags and "<style>" in Path(moved).read_text(encoding="utf-8")


def test_html_absolute_images_resolve_from_another_folder(session: Path, tmp_path: Path, cli: Cli) -> None:
    out = tmp_path / "out"
    r = cli("export", str(session), "--to", "html", "--out", str(out), "--images", "absolute", cwd=out.parent)
    assert r.returncode == 0, r.stderr
    parsed = parse_html((out / f"{session.stem}.html").read_text(encoding="utf-8"))
    local = [s for s in parsed.srcs if s.startswith("file:")]
    assert [_file_of(s).read_bytes() for s in local] == [RED, BLUE]


def test_frontmatter_shown_as_a_table(session: Path, tmp_path: Path, cli: Cli) -> None:
    r = cli("export", str(session), "--to", "html", "--out", str(tmp_path), "--json")
    assert r.returncode == 0, r.stderr
    text = (tmp_path / f"{session.stem}.html").read_text(encoding="utf-8")
    assert '<table class="frontmatter">' in text
    assert "<th>summary</th><td>梳理了付款风险：三条</td>" in text
    assert "<th>tags</th><td>合同, 风险</td>" in text
    assert json.loads(r.stdout)[0]["output"].endswith(".html")


def test_missing_image_is_reported_with_its_line(session: Path, tmp_path: Path, cli: Cli) -> None:
    session.write_text(session.read_text(encoding="utf-8") + "\n![gone](img/none.png)\n", encoding="utf-8")
    r = cli("export", str(session), "--to", "html", "--out", str(tmp_path / "o"))
    assert r.returncode == 1
    line = session.read_text(encoding="utf-8").split("\n").index("![gone](img/none.png)") + 1
    assert f"{session}:{line}: warning: image img/none.png not found" in r.stderr
    assert (tmp_path / "o" / f"{session.stem}.html").exists()


def test_board_without_frontmatter(tmp_path: Path, cli: Cli) -> None:
    board = tmp_path / "LEARNING_BOARD.md"
    board.write_text("## 长期说明\n\n说明\n\n## 学习记录\n\n### 条目\n", encoding="utf-8")
    r = cli("export", str(board), "--to", "html", "--out", str(tmp_path / "o"))
    assert r.returncode == 0, r.stderr
    text = (tmp_path / "o" / "LEARNING_BOARD.html").read_text(encoding="utf-8")
    assert "frontmatter" not in text.split("</style>")[1] and "<h3>条目</h3>" in text


def test_unknown_file_and_clashing_names_write_nothing(session: Path, tmp_path: Path, cli: Cli) -> None:
    out = tmp_path / "o"
    r = cli("export", str(session), str(tmp_path / "nope.md"), "--to", "html", "--out", str(out))
    assert r.returncode == 2 and "nope.md: no such file" in r.stderr
    twin = tmp_path / session.name
    twin.write_text("x\n", encoding="utf-8")
    r = cli("export", str(session), str(twin), "--to", "html", "--out", str(out))
    assert r.returncode == 2 and "different --out" in r.stderr
    assert not out.exists()


def test_docx_without_pandoc_names_the_package(session: Path, tmp_path: Path, cli: Cli) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    r = cli("export", str(session), "--to", "docx", "--out", str(tmp_path / "o"), env={"PATH": str(empty)})
    assert r.returncode == 3
    assert "install the `pandoc` package" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.skipif(not HAS_PANDOC, reason="pandoc is not installed (Debian package pandoc)")
@pytest.mark.parametrize("mode", ["absolute", "inline"])
def test_docx_embeds_images_resolved_against_the_source(session: Path, tmp_path: Path, mode: str, cli: Cli) -> None:
    out = tmp_path / "docs"
    r = cli("export", str(session), "--to", "docx", "--out", str(out), "--images", mode, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    with zipfile.ZipFile(out / f"{session.stem}.docx") as z:
        media = sorted(z.read(n) for n in z.namelist() if n.startswith("word/media/"))
        document = z.read("word/document.xml").decode("utf-8")
    assert media == sorted([RED, BLUE])
    assert "a1b2c3d" in document and "看图" in document


def test_relative_src_rules() -> None:
    assert is_relative_src("img/a.png") and is_relative_src("../a%20b.png")
    for src in ("", "/abs.png", "#x", "https://h/x.png", "data:image/png;base64,AA", "file:///x.png"):
        assert not is_relative_src(src)


def test_body_html_passes_images_with_their_line() -> None:
    seen: list[tuple[str, int]] = []

    def src(s: str, line: int) -> str:
        seen.append((s, line))
        return "X"

    out = body_html("a\n\n[![i](a.png)](b.md) ~~s~~\n", src, first_line=10)
    assert seen == [("a.png", 12)] and 'src="X"' in out and "<s>s</s>" in out


def test_frontmatter_rows_keep_values_as_written() -> None:
    rows, body, first = frontmatter_rows(session_text({"结论": "ok"}))
    assert ("ts", "2025-06-11T14:32:07+08:00") in rows and ("parent", "null") in rows
    assert body.startswith("\n## 结论") and first == 10
    assert frontmatter_rows("no fence\n") == ([], "no fence\n", 1)
