"""The pages' pure helpers: safe Markdown (raw HTML shown as text, only safe links, only served images) and
the label language from Accept-Language."""

from __future__ import annotations

import pytest

from kbsync.web.pages.markdown import render
from kbsync.web.pages.render import language


@pytest.mark.parametrize("link", ["javascript:alert(1)", "JavaScript:alert(1)", "java\tscript:alert(1)",
                                  "javascript&#58;alert(1)", "data:text/html,x", "vbscript:x", "file:///etc/passwd"])
def test_an_unsafe_link_is_dropped(link: str) -> None:
    html = render(f"[x]({link})")
    assert "<a" not in html


@pytest.mark.parametrize("link", ["https://example.org/a", "http://example.org", "mailto:a@example.org", "../b.md",
                                  "#part", "sessions/2025-06-11/x.md"])
def test_a_safe_link_is_kept(link: str) -> None:
    assert '<a href="' in render(f"[x]({link})")


def test_raw_html_is_text() -> None:
    html = render('<script>alert(1)</script>\n\n<img src=x onerror="alert(1)"> *ok*')
    assert "<script" not in html and "<img" not in html and "&lt;script&gt;" in html and "<em>ok</em>" in html


def test_images_only_from_relative_paths_the_caller_serves() -> None:
    served = render("![a](img/a.png) ![b](https://evil.example/b.png) ![c](/etc/c.png)",
                    lambda src: f"/files/{src}")
    assert served.count("<img") == 1 and 'src="/files/img/a.png"' in served and ">b<" not in served
    assert "<img" not in render("![a](img/a.png)") and "a" in render("![a](img/a.png)")


@pytest.mark.parametrize(("header", "lang"), [("zh-CN,zh;q=0.9,en;q=0.8", "zh"), ("en-US,en;q=0.9,zh;q=0.8", "en"),
                                              ("zh-TW", "zh"), ("fr-FR", "en"), ("", "en"), ("en;q=0.5,zh;q=0.6", "zh"),
                                              ("zh;q=bad", "en")])
def test_the_language_follows_accept_language(header: str, lang: str) -> None:
    assert language(header) == lang
