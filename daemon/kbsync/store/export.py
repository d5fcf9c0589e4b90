"""Export of workspace Markdown (sessions, artifacts, the board) to HTML and DOCX.

HTML is rendered by markdown-it-py (CommonMark, plus GFM tables and
strikethrough) into one self-contained file: an inline style sheet, the
frontmatter as a small table, and relative images either rewritten to absolute
`file:` URIs or inlined as base64 `data:` URIs. Raw HTML in the source is shown
as text, so text a model wrote cannot add scripts to an export. DOCX is that
same HTML converted by pandoc, with images given to pandoc as absolute paths
resolved against the source file.
"""

from __future__ import annotations

import base64
import html
import mimetypes
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Literal
from urllib.parse import unquote, urlsplit

from markdown_it import MarkdownIt
from markdown_it.token import Token

from kbsync import proc
from kbsync.core import frontmatter
from kbsync.core.findings import Finding
from kbsync.errors import EXIT_ENVIRONMENT, InputError, KbsyncError
from kbsync.store.fsio import atomic_write
from kbsync.store.pathgate import UnsafePathError, output_refusal
from kbsync.store.workspace import decode

Format = Literal["html", "docx"]
ImageMode = Literal["absolute", "inline"]
PANDOC_PACKAGE = "pandoc"

STYLE = """
body { max-width: 46em; margin: 2em auto; padding: 0 1em; color: #222; background: #fff;
  font: 16px/1.6 -apple-system, "Segoe UI", "Noto Sans", "PingFang SC", "Microsoft YaHei", sans-serif; }
h1 { font-size: 1.6em; border-bottom: 1px solid #ddd; padding-bottom: .3em; }
h2 { font-size: 1.3em; margin-top: 1.6em; border-bottom: 1px solid #eee; }
h3 { font-size: 1.1em; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: .3em .6em; text-align: left; vertical-align: top; }
table.frontmatter { font-size: .9em; color: #444; }
table.frontmatter th { background: #f6f6f6; font-weight: 600; white-space: nowrap; }
code { font-family: ui-monospace, Menlo, Consolas, monospace; background: #f4f4f4; padding: .1em .3em; }
pre { background: #f4f4f4; padding: .8em; overflow-x: auto; }
pre code { padding: 0; }
blockquote { margin: 0; padding-left: 1em; border-left: 4px solid #ddd; color: #555; }
img { max-width: 100%; }
@media print { body { max-width: none; margin: 0; } a { color: inherit; } }
""".strip()


class ToolError(KbsyncError):
    """An external program an export needs is missing or failed (an environment failure)."""

    exit_code = EXIT_ENVIRONMENT


# ---- pure: Markdown to one HTML document ------------------------------------

ImageSrc = Callable[[str, int], str]  # (src as written, 1-based line) -> src to emit


def markdown_parser() -> MarkdownIt:
    """CommonMark with GFM tables and strikethrough; raw HTML is escaped, not passed through."""
    return MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])


def _rewrite_images(tokens: list[Token], image_src: ImageSrc, first_line: int) -> None:
    for tok in tokens:
        if tok.type != "inline" or not tok.children:
            continue
        line = first_line + (tok.map[0] if tok.map else 0)
        for child in tok.children:
            if child.type == "image":
                child.attrSet("src", image_src(str(child.attrGet("src") or ""), line))


def body_html(markdown: str, image_src: ImageSrc, first_line: int = 1) -> str:
    """The HTML of a Markdown body; every image's src goes through `image_src`."""
    md = markdown_parser()
    tokens = md.parse(markdown)
    _rewrite_images(tokens, image_src, first_line)
    rendered: str = md.renderer.render(tokens, md.options, {})
    return rendered


def fields_table(fields: list[tuple[str, str]]) -> str:
    """The frontmatter as a small two-column table (empty when there is none)."""
    if not fields:
        return ""
    rows = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>\n" for k, v in fields)
    return f'<table class="frontmatter">\n{rows}</table>\n'


def html_document(title: str, fields: list[tuple[str, str]], body: str) -> str:
    """A complete, self-contained HTML page."""
    t = html.escape(title)
    return (
        "<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n"
        f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{t}</title>\n"
        f"<style>\n{STYLE}\n</style>\n</head>\n<body>\n<h1>{t}</h1>\n{fields_table(fields)}{body}</body>\n</html>\n"
    )


def is_relative_src(src: str) -> bool:
    """A link to a local file relative to the document (no scheme, not absolute, not a fragment)."""
    parts = urlsplit(src)
    return bool(src) and not parts.scheme and not parts.netloc and not src.startswith(("/", "#"))


# ---- I/O: images, one file, pandoc ------------------------------------------

@dataclass
class ImageResolver:
    """Turns a document's relative image links into absolute or inline ones, noting what is missing."""

    source: Path
    mode: ImageMode
    display: str
    uri: bool = True  # absolute mode: a file: URI (HTML) or a plain path (pandoc's input)
    findings: list[Finding] = field(default_factory=list)

    def __call__(self, src: str, line: int) -> str:
        if not is_relative_src(src):
            return src
        given = self.source.parent / unquote(urlsplit(src).path)
        target = given.resolve()
        outside = image_refusal(self.source, given, target)
        if outside:
            self._warn(line, f"image {src} {outside}; it is neither inlined nor linked, the link is left as written")
            return src
        if not target.is_file():
            self._warn(line, f"image {src} not found (looked for {target}); the link is left as written")
            return src
        if self.mode == "absolute":
            return target.as_uri() if self.uri else str(target)
        mime = mimetypes.guess_type(target.name)[0] or ""
        if not mime.startswith("image/"):
            self._warn(line, f"{src} is not an image file by its name; it is linked by absolute path, not inlined")
            return target.as_uri() if self.uri else str(target)
        return f"data:{mime};base64,{base64.b64encode(target.read_bytes()).decode('ascii')}"

    def _warn(self, line: int, message: str) -> None:
        self.findings.append(Finding(self.display, line, "warning", message))


def content_root(source: Path) -> Path:
    """The folder whose files an export of `source` may embed: its workspace (the nearest folder above it
    holding `.kbsync/`, `sessions/` or `index.md`), else the folder `source` is in."""
    for folder in source.parents:
        if (folder / ".kbsync").is_dir() or (folder / "sessions").is_dir() or (folder / "index.md").is_file():
            return folder
    return source.parent


def image_refusal(source: Path, given: Path, target: Path) -> str | None:
    """Why the image `given` (a relative link of `source`, resolving to `target`) is not read: it lies
    outside the content root, or a symlink is on its way there; None to read it."""
    walked = source.parent
    for part in given.relative_to(source.parent).parts:
        walked = walked / part if part != ".." else walked.parent
        if walked.is_symlink():
            return "passes through a symlink"
    root = content_root(source)
    return None if target.is_relative_to(root) else f"lies outside {root}"


@dataclass(frozen=True)
class Exported:
    source: str
    output: str
    findings: list[Finding]


def _display(value: object, entry: frontmatter.Entry) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return ", ".join(value)
    return "\n".join(line.strip() for line in entry.lines[1:]) or entry.raw


def frontmatter_rows(text: str) -> tuple[list[tuple[str, str]], str, int]:
    """(frontmatter fields for display, body, 1-based line where the body starts)."""
    sp = frontmatter.split(text.replace("\r\n", "\n"))
    if sp.state != "ok":
        return [], sp.body if sp.state == "none" else text, 1
    mapping = frontmatter.parse(sp.lines).mapping or {}
    rows = [(e.key, _display(mapping.get(e.key), e)) for e in frontmatter.entries(sp.lines)]
    return rows, sp.body, sp.body_line


def render_file(source: Path, display: str, mode: ImageMode, *, uri: bool = True) -> tuple[str, list[Finding]]:
    """The HTML page of one Markdown file and the warnings about its images."""
    try:
        text = decode(source.read_bytes(), display)
    except OSError as exc:
        raise InputError(f"cannot read the file ({exc.strerror})", path=display) from exc
    fields, body, first = frontmatter_rows(text)
    resolver = ImageResolver(source.resolve(), mode, display, uri=uri)
    page = html_document(source.stem, fields, body_html(body, resolver, first))
    return page, resolver.findings


def require_pandoc() -> None:
    """KbsyncError naming the package to install when pandoc is not on PATH."""
    if shutil.which("pandoc") is None:
        raise ToolError(
            f"DOCX export needs pandoc, which is not installed; install the `{PANDOC_PACKAGE}` package "
            "(Debian/Ubuntu: apt-get install pandoc) or export --to html"
        )


def html_to_docx(page: str, display: str) -> bytes:
    """DOCX bytes from an HTML page, through pandoc."""
    require_pandoc()
    result = proc.run(["pandoc", "-f", "html", "-t", "docx", "-o", "-"], input=page.encode("utf-8"), check=False)
    if result.returncode != 0:
        detail = result.stderr.decode("utf-8", "replace").strip().splitlines()
        raise ToolError(f"pandoc failed: {detail[-1] if detail else result.returncode}", path=display)
    return result.stdout


def export_file(source: Path, display: str, out_dir: Path, fmt: Format, mode: ImageMode) -> Exported:
    """Write `<out_dir>/<stem>.<fmt>` for one source file (atomically)."""
    page, findings = render_file(source, display, mode, uri=fmt == "html")
    data = page.encode("utf-8") if fmt == "html" else html_to_docx(page, display)
    dest = out_dir / f"{source.stem}.{fmt}"
    why = output_refusal(dest)
    if why:
        raise UnsafePathError(f"the output {why}; choose another --out folder", path=str(dest))
    atomic_write(dest, data)
    return Exported(display, str(dest), findings)
