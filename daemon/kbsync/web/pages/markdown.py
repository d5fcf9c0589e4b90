"""Untrusted Markdown to HTML that cannot run anything: raw HTML is shown as text (markdown-it's html off),
links only to http, https, mailto and relative or # targets (javascript:, data:, vbscript:, file: ... are
dropped: the link's source stays as text), images only from relative workspace paths that the caller maps
to a URL it serves (any other image is dropped and its alt text kept). A list item that starts `[ ]` or
`[x]` (a task, as the 待办 section holds them) shows a box, empty or ticked, named for screen readers."""

from __future__ import annotations

from typing import Callable, Sequence
from urllib.parse import urlsplit

from markdown_it import MarkdownIt
from markdown_it.token import Token

SAFE_SCHEMES = frozenset({"http", "https", "mailto"})
ImageUrl = Callable[[str], str | None]  # a relative image path -> the URL that serves it, or None to drop it


def safe_link(url: str) -> bool:
    """True for http(s), mailto, and scheme-less (relative, #fragment) targets."""
    cleaned = "".join(ch for ch in url if ch.isprintable() and not ch.isspace())
    try:
        scheme = urlsplit(cleaned).scheme.lower()
    except ValueError:
        return False
    return scheme in SAFE_SCHEMES if scheme else True


def web_link(url: str) -> bool:
    """An absolute http(s) URL: what a search hit from elsewhere may link to."""
    return safe_link(url) and urlsplit(url).scheme.lower() in ("http", "https")


def relative_image(src: str) -> bool:
    """A workspace-relative path: no scheme, no host, not absolute."""
    parts = urlsplit(src)
    return not (parts.scheme or parts.netloc or src.startswith(("/", "\\")))


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False}).enable("table").enable("strikethrough")
    md.validateLink = safe_link  # type: ignore[method-assign]
    return md


_MD = _parser()


def render(text: str, image_url: ImageUrl | None = None) -> str:
    """`text` as HTML, safe to put in a page (see the module docstring)."""
    tokens = _MD.parse(text)
    for i, token in enumerate(tokens):
        if token.children:
            token.children = _images(token.children, image_url)
            if i >= 2 and tokens[i - 2].type == "list_item_open":
                _task(token)
    html: str = _MD.renderer.render(tokens, _MD.options, {})
    return html


def _images(children: Sequence[Token], image_url: ImageUrl | None) -> list[Token]:
    out: list[Token] = []
    for tok in children:
        if tok.type != "image":
            out.append(tok)
            continue
        src = str(tok.attrGet("src") or "")
        url = image_url(src) if image_url is not None and relative_image(src) else None
        if url is None:
            out.append(Token("text", "", 0, content=tok.content))
        else:
            tok.attrSet("src", url)
            out.append(tok)
    return out


TASK_BOXES = {" ": ("☐", "to do"), "x": ("☑", "done"), "X": ("☑", "done")}


def _task(inline: Token) -> None:
    """A list item's text that starts `[ ] ` or `[x] `: the marker shown as a box (text kept otherwise)."""
    children = inline.children or []
    first = children[0] if children else None
    if first is None or first.type != "text" or len(first.content) < 4 or first.content[0] != "[" \
            or first.content[2:4] != "] " or first.content[1] not in TASK_BOXES:
        return
    box, name = TASK_BOXES[first.content[1]]
    first.content = first.content[4:]
    html = f'<span class="task" role="img" aria-label="{name}">{box}</span> '
    inline.children = [Token("html_inline", "", 0, content=html), *children]
