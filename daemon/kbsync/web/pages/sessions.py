"""The sessions pages: /sessions (browse by month, day and tag with counts, or search with the words
marked), /sessions/{id} (the frontmatter as a table, the sections that hold text rendered, parent and
children, an HTML export), and /images/{path} (a workspace image a session shows, read only inside the workspace)."""

from __future__ import annotations

from urllib.parse import quote, urlencode

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, Response
from markupsafe import Markup

from kbsync.app import browse, sessionview
from kbsync.errors import UsageError
from kbsync.web.deps import WS
from kbsync.web.pages import markdown
from kbsync.web.pages.render import page

router = APIRouter(include_in_schema=False)
LABELS: dict[str, dict[str, str]] = {
    "en": {"title": "Sessions", "months": "By month", "days": "By day", "tags": "By tag", "all": "All",
           "search": "Search", "search_label": "Words, or filters such as tag:git",
           "results": "Sessions matching", "no_results": "No session matches.",
           "matched": "{n} sessions match", "matched_one": "1 session matches",
           "everywhere": "Only sessions are listed here. To search everything: the board's own search (Board page) for "
                         "its entries, and `kbsync search` for every source (sessions, board, memory, artifacts).",
           "none": "No sessions here yet.",
           "listed": "{n} sessions", "listed_one": "1 session",
           "state": "Status", "when": "Time", "failed": "Not answered",
           "frontmatter": "Frontmatter", "field": "Field", "value": "Value", "parent": "Split from",
           "children": "Split into", "missing": "not in this workspace", "export": "Export HTML",
           "preamble": "Before the first section", "path": "File"},
    "zh": {"title": "会话", "months": "按月份", "days": "按日期", "tags": "按标签", "all": "全部",
           "search": "搜索", "search_label": "关键词，或 tag:git 这样的筛选",
           "results": "匹配的会话：", "no_results": "没有匹配的会话。",
           "matched": "{n} 个会话匹配", "matched_one": "1 个会话匹配",
           "everywhere": "这里只列出会话。要搜索全部：看板页有看板自己的搜索，命令行 `kbsync search` 搜索所有来源"
                         "（会话、看板、记忆、资料）。",
           "none": "这里还没有会话。",
           "listed": "{n} 个会话", "listed_one": "1 个会话",
           "state": "状态", "when": "时间", "failed": "未响应",
           "frontmatter": "元数据", "field": "字段", "value": "值", "parent": "拆分自",
           "children": "拆分为", "missing": "不在本工作区", "export": "导出 HTML",
           "preamble": "第一节之前", "path": "文件"},
}


def _quoted(value: str) -> str:
    return f'"{value}"' if any(c.isspace() for c in value) else value


def _query(q: str, tag: str, when: str) -> str:
    """The search text with the chosen tag and date as its filters."""
    extra = [f"tag:{_quoted(tag)}"] if tag else []
    extra += [f"since:{when}", f"until:{when}"] if when else []
    return " ".join([q, *extra])


def _link(**values: str) -> str:
    return "/sessions?" + urlencode({k: v for k, v in values.items() if v})


@router.get("/sessions")
def sessions_page(request: Request, ws: WS, month: str = "", day: str = "", tag: str = "", q: str = "",
                  at: int = Query(1, alias="page")) -> HTMLResponse:
    shown = browse.browse_sessions(ws, month=month, day=day, tag=tag, page=1 if q.strip() else at)
    found, problem = None, ""
    try:
        found = browse.search_sessions(ws, _query(q, tag, shown.day or shown.month), at) if q.strip() else None
    except UsageError as exc:  # the query itself: said beside the box, the rest of the page as it is
        problem = exc.message
    kept = {"q": q.strip(), "month": "" if shown.day else shown.month, "day": shown.day, "tag": shown.tag}
    return page(request, "sessions.html", LABELS, status=400 if problem else 200, shown=shown, found=found, q=q,
                problem=problem, link=_link, kept=kept,
                page_url=lambda page: _link(**kept, page=str(page) if page > 1 else ""))


def _image_url(document: str) -> markdown.ImageUrl:
    def url(src: str) -> str | None:
        rel = sessionview.image_path(document, src)
        return "/images/" + quote(rel) if rel else None
    return url


@router.get("/sessions/{sid}")
def session_page(request: Request, ws: WS, sid: str) -> HTMLResponse:
    detail = sessionview.session_detail(ws, sid)
    url = _image_url(detail.path)
    sections = [(heading, Markup(markdown.render(text, url))) for heading, text in detail.sections if text.strip()]
    preamble = Markup(markdown.render(detail.preamble, url)) if detail.preamble.strip() else None
    return page(request, "session.html", LABELS, s=detail, sections=sections, preamble=preamble)


@router.get("/sessions/{sid}/export.html")
def export_page(ws: WS, sid: str) -> Response:
    done = sessionview.export_page(ws, sid)
    return Response(done.html, media_type="text/html; charset=utf-8", headers={
        "content-disposition": f"attachment; filename=\"session.html\"; filename*=UTF-8''{quote(done.filename)}"})


@router.get("/images/{path:path}")
def image(ws: WS, path: str) -> Response:
    found = sessionview.workspace_image(ws, path)
    return Response(found.data, media_type=found.media_type)
