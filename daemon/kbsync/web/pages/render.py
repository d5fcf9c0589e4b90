"""Templates and the page response: a Jinja2 environment with autoescape on, the labels of the language
the browser asks for (Accept-Language: zh... -> Chinese, anything else -> English), and the base page's
values (the CSRF token of the browser session, the navigation)."""

from __future__ import annotations

from typing import Any, Mapping

from fastapi import Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup, escape

from kbsync.app.flagview import families
from kbsync.app.websessions import BrowserSession
from kbsync.web.guard import CSRF_FIELD
from kbsync.web.pages.markdown import web_link

Labels = Mapping[str, Mapping[str, str]]
NAV = ("board", "candidates", "sessions", "memory", "conflicts", "status", "stats", "review")
LABELS: Labels = {
    "en": {"board": "Board", "candidates": "Candidates", "sessions": "Sessions", "memory": "Memory", "conflicts": "Conflicts",
           "status": "Status", "stats": "Stats", "review": "Review", "skip": "Skip to content",
           "nav": "Pages", "api": "API document", "error": "Error", "back": "Back", "logout": "Log out",
           "flagged_text": "Embedded instruction", "flag_line": "line {n}",
           "page_of": "Page {n} of {pages}", "prev": "Previous page", "next": "Next page",
           "flagged_hint": "This text holds an instruction addressed to an AI: a model is given it with the marked "
                           "words withheld, never as an instruction."},
    "zh": {"board": "看板", "candidates": "候选", "sessions": "会话", "memory": "记忆", "conflicts": "冲突", "status": "状态",
           "stats": "统计", "review": "回顾", "skip": "跳到正文", "nav": "页面", "api": "API 文档",
           "error": "错误", "back": "返回", "logout": "退出登录",
           "flagged_text": "嵌入指令", "flag_line": "第 {n} 行",
           "page_of": "第 {n} 页，共 {pages} 页", "prev": "上一页", "next": "下一页",
           "flagged_hint": "这段文字含有针对 AI 的指令：交给模型时，标出的文字会被扣下，绝不作为指令。"},
}

_env = Environment(loader=PackageLoader("kbsync.web", "templates"), autoescape=select_autoescape(default=True),
                   undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
_env.globals["flag_families"] = families  # a search hit's flags (as the index keeps them) as badges


def when(text: object) -> Markup:
    """An ISO 8601 time as a person reads it, `2025-06-11 14:32 (UTC+08:00)`, in a <time> element that
    /static/localtime.js shows in the viewer's own zone (without the script: in the zone it was written in)."""
    import datetime as dt

    raw = str(text or "")
    try:
        at = dt.datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        return Markup(escape(raw))
    zone = at.strftime("%z")
    shown = at.strftime("%Y-%m-%d %H:%M") + (f" (UTC{zone[:3]}:{zone[3:]})" if zone else "")
    return Markup(f'<time datetime="{escape(at.isoformat())}">{escape(shown)}</time>')


_env.filters["when"] = when
_env.tests["web_link"] = web_link


def language(accept: str) -> str:
    """The label language for an Accept-Language header: the better of zh and en by q-value (en on a tie)."""
    best = ("en", 0.0)
    for part in accept.split(","):
        tag, _, params = part.strip().partition(";")
        q = _q(params)
        lang = "zh" if tag.strip().lower().startswith("zh") else "en" if tag.strip().lower().startswith("en") else ""
        if lang and q > best[1]:
            best = (lang, q)
    return best[0]


def _q(params: str) -> float:
    for p in params.split(";"):
        name, _, value = p.strip().partition("=")
        if name.strip() == "q":
            try:
                return float(value)
            except ValueError:
                return 0.0
    return 1.0


def csrf_token(request: Request) -> str:
    who = request.scope.get("state", {}).get("browser_session")
    return who.csrf if isinstance(who, BrowserSession) else ""


def words(request: Request, own: Labels) -> dict[str, str]:
    """The shared labels and a page's `own`, in the browser's language."""
    lang = language(request.headers.get("accept-language", ""))
    return {**LABELS[lang], **own.get(lang, {})}


def page(request: Request, template: str, own: Labels, *, status: int = 200, **values: Any) -> HTMLResponse:
    """The page `template` rendered with `values`, the labels (`t`) of the browser's language and its own."""
    lang = language(request.headers.get("accept-language", ""))
    body = _env.get_template(template).render(
        t=words(request, own), lang=lang, csrf=csrf_token(request), csrf_field=CSRF_FIELD, nav=NAV,
        here=request.url.path, **values)
    return HTMLResponse(body, status_code=status)
