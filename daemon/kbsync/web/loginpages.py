"""The pages the guard answers itself, before any login: how to log in (none yet, a link used or expired,
logged out, a login that ended while a form was being filled), and the page that offers a kept form back.

A page's form posted after its login ended is kept here, in memory only (a restart forgets it), at most
MAX_KEPT forms of at most MAX_KEPT_BYTES each for KEEP_S, under a random id the browser holds in a cookie;
once the person has logged in again, /login/resume shows what the form held and a button that sends it
again with the new session's CSRF token. Nothing kept is acted on without that click.
"""

from __future__ import annotations

import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass
from html import escape
from typing import Callable
from urllib.parse import parse_qsl

MAX_KEPT = 16
MAX_KEPT_BYTES = 256 * 1024
KEEP_S = 24 * 3600.0

_HEAD = ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" "
         "content=\"width=device-width, initial-scale=1\"><title>kbsync: {title}</title>"
         "<link rel=\"stylesheet\" href=\"/static/kbsync.css\"></head><body><main id=\"main\"><h1>kbsync</h1>")
_TAIL = "</main></body></html>"
_HOW = ("Run <code>kbsync web url</code> on this machine and open the link it prints (it works once, for 5 "
        "minutes).", "请在本机运行 <code>kbsync web url</code>，打开它输出的链接（一次有效，5 分钟内）。")
_WHY = {
    "none": ("Not logged in.", "未登录。"),
    "used": ("This login link was used already or has expired.", "这个登录链接已用过或已过期。"),
    "out": ("You are logged out.", "你已退出登录。"),
    "expired": ("Your login has ended (it expired, or the API token was rotated).",
                "你的登录已结束（已过期，或 API 令牌已更换）。"),
}
_KEPT = (" What you just sent was not saved, but it was kept: after logging in you will be offered to send it "
         "again.", "刚才提交的内容没有保存，但已暂存：登录后可以再次提交。")


def login_page(why: str, *, kept: bool = False) -> str:
    """The page that says why the person is not logged in and what to do."""
    en, zh = _WHY[why]
    more_en, more_zh = _KEPT if kept else ("", "")
    return (_HEAD.format(title="log in") + f"<p role=\"alert\">{en}{more_en} {_HOW[0]}</p>"
            f"<p lang=\"zh\">{zh}{more_zh}{_HOW[1]}</p>" + _TAIL)


@dataclass(frozen=True)
class KeptForm:
    path: str  # where it was posted
    fields: list[tuple[str, str]]  # its fields in order, the old CSRF token left out
    until: float


class PendingForms:
    """Forms posted after their login ended, waiting for the person to log in again."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._kept: OrderedDict[str, KeptForm] = OrderedDict()

    def keep(self, path: str, body: bytes) -> str | None:
        """Keep a form's body; its id, or None when it is too large or not a path of this server."""
        if len(body) > MAX_KEPT_BYTES or not path.startswith("/") or path.startswith("//"):
            return None
        fields = [(k, v) for k, v in parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True)
                  if k != "csrf"]
        kept = secrets.token_hex(16)
        self._kept[kept] = KeptForm(path, fields, self._clock() + KEEP_S)
        while len(self._kept) > MAX_KEPT:
            self._kept.popitem(last=False)
        return kept

    def has(self, kept: str) -> bool:
        form = self._kept.get(kept)
        return form is not None and form.until >= self._clock()

    def take(self, kept: str) -> KeptForm | None:
        form = self._kept.pop(kept, None)
        return form if form is not None and form.until >= self._clock() else None


def resume_page(form: KeptForm | None, csrf_field: str, csrf: str) -> str:
    """The kept form, shown field by field, with a button that sends it again (or a note that none is kept)."""
    if form is None:
        return (_HEAD.format(title="nothing kept") + "<p>No kept form is waiting (it was sent, or more than a day "
                "has passed). <a href=\"/\">Go to the board</a>.</p>" + _TAIL)
    rows = "".join(f"<tr><th scope=\"row\">{escape(k)}</th><td><pre>{escape(v)}</pre></td></tr>"
                   for k, v in form.fields)
    hidden = "".join(f"<input type=\"hidden\" name=\"{escape(k)}\" value=\"{escape(v)}\">" for k, v in form.fields)
    return (_HEAD.format(title="send a kept form again")
            + "<h2>A form you sent while logged out</h2><p>It was not saved. Check what it holds, then send it "
            f"again to <code>{escape(form.path)}</code>, or leave it.</p>"
            "<table><thead><tr><th scope=\"col\">Field</th><th scope=\"col\">Value</th></tr></thead>"
            f"<tbody>{rows}</tbody></table>"
            f"<form method=\"post\" action=\"{escape(form.path)}\">"
            f"<input type=\"hidden\" name=\"{escape(csrf_field)}\" value=\"{escape(csrf)}\">{hidden}"
            "<div class=\"actions\"><button type=\"submit\">Send it again</button> "
            "<a class=\"button secondary\" href=\"/\">Leave it</a></div></form>" + _TAIL)
