"""The board page (/board): the three parts of LEARNING_BOARD.md, its entries filtered, searched and
sorted, an entry's page, the add and edit forms (the full object, each problem beside its field), feedback
and decay. Reads and writes go through kbsync.app.boardview and kbsync.app.board."""

from __future__ import annotations

from dataclasses import replace
from typing import Any
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from kbsync.app import board, boardview, browse
from kbsync.app.guard import learned
from kbsync.errors import KbsyncError, StaleError, UsageError
from kbsync.web.deps import WS
from kbsync.web.pages.forms import Form, local_target, read_form, refusal_status
from kbsync.web.pages.markdown import render
from kbsync.web.pages.render import page

router = APIRouter(include_in_schema=False)
FIELDS = ("title", "type", "topic", "summary", "core_content", "source", "source_date", "scenarios", "confidence",
          "status")
LABELS = {
    "en": {"key_note": "The key is {key}: the title and the source date. Changing either makes a new key.", "keep_counters": "Keep this entry's counters (helpful, harmful, applied) under the new key", "stale_title": "Changed since you opened this form", "stale_note": "Nothing was saved. Below, each field that differs: the version saved now beside yours. Your text is kept in the form; saving again replaces the newer version with it.", "field": "Field", "newer": "Saved now", "yours": "Yours", "title_board": "Knowledge board", "guide": "长期说明 · Guide", "trends": "长期趋势 · Trends",
           "records": "学习记录 · Entries", "title": "Title", "type": "Type", "topic": "Topic", "summary": "Summary",
           "core_content": "Core content", "source": "Source", "source_date": "Source date",
           "scenarios": "Scenarios", "confidence": "Confidence", "status": "Status", "any": "any",
           "search": "Search", "sort": "Sort", "newest": "Newest", "helpful_sort": "Most helpful",
           "idle": "Least recently applied", "relevance": "Search relevance", "best": "Best match with words, else newest", "apply": "Apply",
           "clear_filters": "Clear", "add": "Add entry", "edit": "Edit", "helpful": "Helpful", "harmful": "Harmful",
           "last_applied": "Last applied", "never": "never", "applied": "Applied", "shown": "{n} of {total} entries",
           "decay": "Decay candidates", "mark_decay": "Mark decay", "no_decay": "No entry is a decay candidate.",
           "elsewhere": "Found elsewhere", "failed": "Search source failed", "empty": "No entry matches.",
           "save": "Save", "new_title": "Add an entry", "edit_title": "Edit entry", "refused": "Not saved:",
           "scenarios_hint": "one situation a line; at least one", "date_hint": "YYYY-MM-DD",
           "counts": "helpful {h} · harmful {x}", "entry": "Entry", "done_added": "Added.",
           "done_updated": "Saved.", "done_unchanged": "Nothing changed.", "voted": "Feedback recorded.",
           "marked": "Marked as decaying.", "feedback_note": "Counted on this machine only, never in the Markdown.",
           "nothing": "(empty)", "key": "Key", "why": "Why", "see_fields": "see the problems beside the fields.", "back_board": "Back to the board", "cancel": "Cancel"},
    "zh": {"key_note": "键是 {key}：标题和来源日期。改动其中之一就是新的键。", "keep_counters": "新键沿用本条目的计数（有用、有害、应用）", "stale_title": "打开此表单后条目已被修改", "stale_note": "没有保存。下表列出不同的字段：现在保存的版本与你的版本并列。你的内容仍在表单里；再次保存会用它替换较新的版本。", "field": "字段", "newer": "现在保存的", "yours": "你的", "title_board": "学习看板", "guide": "长期说明", "trends": "长期趋势", "records": "学习记录",
           "title": "标题", "type": "类型", "topic": "主题", "summary": "摘要", "core_content": "核心内容",
           "source": "来源", "source_date": "来源日期", "scenarios": "场景", "confidence": "置信度",
           "status": "状态", "any": "全部", "search": "搜索", "sort": "排序", "newest": "最新",
           "helpful_sort": "最有用", "idle": "最久未应用", "relevance": "搜索相关度", "best": "有搜索词时按相关度，否则最新", "apply": "筛选",
           "clear_filters": "清除", "add": "新增条目", "edit": "编辑", "helpful": "有用 Helpful", "harmful": "有害 Harmful",
           "last_applied": "上次应用", "never": "从未", "applied": "应用次数", "shown": "{total} 条中的 {n} 条",
           "decay": "衰退候选", "mark_decay": "标记衰退 Mark decay", "no_decay": "没有衰退候选。",
           "elsewhere": "其他来源的结果", "failed": "搜索来源失败", "empty": "没有符合条件的条目。",
           "save": "保存", "new_title": "新增条目", "edit_title": "编辑条目", "refused": "未保存：",
           "scenarios_hint": "每行一个场景，至少一个", "date_hint": "YYYY-MM-DD",
           "counts": "有用 {h} · 有害 {x}", "entry": "条目", "done_added": "已新增。", "done_updated": "已保存。",
           "done_unchanged": "没有变化。", "voted": "反馈已记录。", "marked": "已标记为衰退。",
           "feedback_note": "只记在本机，不写入 Markdown。", "nothing": "（空）", "key": "键", "why": "原因", "see_fields": "请看各字段旁的问题。",
           "back_board": "返回看板", "cancel": "取消"},
}
VOTES = ("helpful", "harmful")
DONE = {"added": "done_added", "updated": "done_updated", "unchanged": "done_unchanged", "voted": "voted",
        "marked": "marked"}


def entry_url(key: str, done: str = "") -> str:
    return f"/board/entry?key={quote(key, safe='')}" + (f"&done={done}" if done else "")


def _choices() -> dict[str, tuple[str, ...]]:
    return {"type": board.TYPES, "confidence": board.CONFIDENCES, "status": board.STATUSES}


@router.get("/board")
def show_board(request: Request, ws: WS, type: str = "", topic: str = "", confidence: str = "", status: str = "",
               q: str = "", sort: str = "", at: int = Query(1, alias="page"), decay_page: int = 1,
               done: str = "", card: str = "") -> HTMLResponse:
    f = boardview.Filters(type, topic, confidence, status, q, sort if sort in boardview.SORTS else "",
                          at, decay_page)
    shown = boardview.view(ws, f, board.clock(None))
    return page(request, "board.html", LABELS, view=shown, f=f, sorts=boardview.SORTS, choices=_choices(),
                md=render, entry_url=entry_url, done=DONE.get(done, ""), back=_board_url(f), card=card,
                card_id=card_id, session_of=browse.session_of, page_url=lambda **at: _board_url(replace(f, **at)))


def card_id(key: str) -> str:
    """The id of an entry's card on the board: where an action on it brings the person back."""
    import hashlib

    return "e-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]


def _board_url(f: boardview.Filters) -> str:
    """The board with the same filters and pages (where a button on it sends the person back)."""
    defaults = vars(boardview.Filters())
    query = urlencode({k: v for k, v in vars(f).items() if v != defaults[k]})
    return "/board" + (f"?{query}" if query else "")


@router.get("/board/entry")
def show_entry(request: Request, ws: WS, key: str, done: str = "") -> HTMLResponse:
    shown = board.show_entry(ws, board.entry_key(key))
    return page(request, "entry.html", LABELS, shown=shown, md=render, done=DONE.get(done, ""),
                flags=boardview.entry_flags(shown.entry, learned(ws)),
                back=entry_url(shown.key), entry_url=entry_url)


def _values(data: dict[str, Any]) -> dict[str, str]:
    """A form's values as its fields show them (scenarios one a line)."""
    out = {k: str(data.get(k, "")) for k in FIELDS if k != "scenarios"}
    out["scenarios"] = "\n".join(data.get("scenarios", []))
    return out


def _form_page(request: Request, values: dict[str, str], problems: dict[str, str], *, key: str = "",
               base: str = "", status: int = 200, stale: StaleError | None = None,
               keep_counters: bool = True) -> HTMLResponse:
    newer = _values(stale.current) if stale is not None and isinstance(stale.current, dict) else None
    return page(request, "entry_form.html", LABELS, status=status, values=values, problems=problems, key=key,
                base=base, keep_counters=keep_counters, choices=_choices(),
                action="/board/edit" if key else "/board/new",
                cancel=entry_url(key) if key else "/board", newer=newer,
                changed=[f for f in FIELDS if stale is not None and f in stale.changed])


def _data(form: Form) -> dict[str, Any]:
    """The full entry object the form sends (the update rule: every field, every time)."""
    data: dict[str, Any] = {k: form.one(k) for k in FIELDS if k != "scenarios"}
    data["scenarios"] = form.lines("scenarios")
    return data


@router.get("/board/new")
def new_entry(request: Request) -> HTMLResponse:
    return _form_page(request, _values({"status": "active", "confidence": "medium"}), {})


@router.get("/board/edit")
def edit_entry(request: Request, ws: WS, key: str) -> HTMLResponse:
    shown = board.show_entry(ws, board.entry_key(key))
    return _form_page(request, _values(shown.entry.as_dict()), {}, key=shown.key, base=shown.version)


def _save(request: Request, ws: WS, form: Form, key: str) -> Response:
    """Add or update from the form. An edit carries the version it was opened on (`base`): when the entry
    changed since, nothing is saved and the form comes back with both versions side by side, the person's
    text kept, and the newer version as the base of the next save."""
    data, base, keep = _data(form), form.one("base"), form.one("keep_counters") == "on"
    problems = boardview.field_problems(data)
    if problems:
        return _form_page(request, _values(data), problems, key=key, base=base, status=422, keep_counters=keep)
    try:
        done = (board.update_entry(ws, key, data, "form", base=base or None, keep_counters=keep) if key
                else board.add_entry(ws, data, board.clock(None), "form"))
    except StaleError as exc:
        return _form_page(request, _values(data), {"form": exc.message}, key=key, base=exc.version, status=409,
                          stale=exc, keep_counters=keep)
    except KbsyncError as exc:
        return _form_page(request, _values(data), {"form": exc.message}, key=key, base=base,
                          status=refusal_status(exc), keep_counters=keep)
    return RedirectResponse(entry_url(done.key, done.action), status_code=303)


@router.post("/board/new")
async def add_entry(request: Request, ws: WS) -> Response:
    return await run_in_threadpool(_save, request, ws, await read_form(request), "")


@router.post("/board/edit")
async def update_entry(request: Request, ws: WS) -> Response:
    form = await read_form(request)
    return await run_in_threadpool(_save, request, ws, form, board.entry_key(form.one("key")))


def _with_done(target: str, done: str) -> str:
    """`target` telling the page what was done (and, with an anchor, on which card: its notice is shown there
    and the browser lands on it)."""
    path, hash_, anchor = target.partition("#")
    card = f"&card={quote(anchor, safe='')}" if anchor else ""
    return f"{path}{'&' if '?' in path else '?'}done={done}{card}{hash_}{anchor}"


@router.post("/board/feedback")
async def feedback(request: Request, ws: WS) -> RedirectResponse:
    form = await read_form(request)
    key, vote = board.entry_key(form.one("key")), form.one("vote")
    if vote not in VOTES:
        raise UsageError(f"vote must be one of {', '.join(VOTES)}, not {vote!r}")
    await run_in_threadpool(board.give_feedback, ws, key, helpful=vote == "helpful")
    return RedirectResponse(_with_done(local_target(form.one("back"), entry_url(key)), "voted"), status_code=303)


@router.post("/board/decay")
async def mark_decay(request: Request, ws: WS) -> RedirectResponse:
    form = await read_form(request)
    await run_in_threadpool(board.set_status, ws, [board.entry_key(form.one("key"))], "decaying")
    return RedirectResponse("/board?done=marked#decay", status_code=303)
