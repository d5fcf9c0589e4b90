"""The candidates page (/candidates): what the watermark scan proposes, newest list first, a page at a time,
filtered by status, source and flag before paging; each item's flags shown prominently with its flagged text
marked; Accept opens the entry form pre-filled (scenarios required; a flagged item only with the
confirmation ticked), Reject records the decision; a selection accepted or rejected at once; the last action
undone; a scan started from the page; an accepted item linked to the entry it became. Everything goes
through kbsync.app.candidates, as `kbsync candidates accept|reject` and `kbsync scan` do."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from kbsync.app import board, boardview, candidates
from kbsync.errors import InputError, KbsyncError
from kbsync.web.deps import WS
from kbsync.web.pages.board import LABELS as BOARD_LABELS
from kbsync.web.pages.board import entry_url
from kbsync.web.pages.forms import Form, read_form, refusal_status
from kbsync.web.pages.render import page, words

router = APIRouter(include_in_schema=False)
EDITABLE = ("title", "type", "topic", "summary", "scenarios", "confidence")
FLAG_NAMES = {"en": {"embedded-instruction": "Embedded instruction", "secret": "Secret"},
              "zh": {"embedded-instruction": "嵌入指令", "secret": "密钥"}}
LABELS = {
    "en": {**BOARD_LABELS["en"], "title_candidates": "Candidates", "list": "List", "item": "Item",
           "path": "Path", "preview": "Preview", "flags": "Flags", "flagged_lines": "Flagged lines",
           "accept": "Accept", "reject": "Reject", "pending": "pending", "no_lists": "No candidate lists yet: "
           "`kbsync scan` writes them under candidates/.", "accept_title": "Accept a candidate",
           "confirm": "I have read the flagged lines and want this item on the board anyway",
           "confirm_needed": "This item is flagged: read its flagged lines, then tick the confirmation.",
           "done_rejected": "Rejected: it will not be proposed again.", "decided": "Decided: {status}",
           "no_flags": "no flags", "warning": "Warning", "status_filter": "Status", "source_filter": "Source",
           "flag_filter": "Flags", "flagged": "flagged", "clean": "no flags", "accepted": "accepted",
           "rejected": "rejected", "shown_items": "{n} of {total} items", "select": "Select {title}",
           "accept_selected": "Accept selected", "reject_selected": "Reject selected",
           "bulk_hint": "Accept selected takes each item as the scan wrote it; an item without scenarios, or flagged, "
                        "needs its own form.", "undo": "Undo", "scan": "Scan the sources now",
           "became": "Became the board entry", "done_bulk": "{accepted} accepted, {rejected} rejected.",
           "done_undone": "Undone.", "done_scanned": "Scanned: {n} new item(s).", "skipped": "Not accepted:"},
    "zh": {**BOARD_LABELS["zh"], "title_candidates": "候选清单", "list": "清单", "item": "条目", "path": "路径",
           "preview": "摘录", "flags": "标记", "flagged_lines": "可疑行", "accept": "采纳 Accept",
           "reject": "拒绝 Reject", "pending": "待审", "no_lists": "还没有候选清单：`kbsync scan` 会写在 candidates/ 下。",
           "accept_title": "采纳候选", "confirm": "我已阅读可疑行，仍要把它加入看板",
           "confirm_needed": "此条目带有标记：请先阅读可疑行，再勾选确认。", "done_rejected": "已拒绝，不会再次提出。",
           "decided": "已决定：{status}", "no_flags": "无标记", "warning": "警告", "status_filter": "状态",
           "source_filter": "来源", "flag_filter": "标记", "flagged": "有标记", "clean": "无标记", "accepted": "已采纳",
           "rejected": "已拒绝", "shown_items": "{total} 个中的 {n} 个", "select": "选择 {title}",
           "accept_selected": "采纳所选", "reject_selected": "拒绝所选",
           "bulk_hint": "采纳所选按扫描写下的内容采纳；没有场景或带标记的条目需要在各自的表单里采纳。", "undo": "撤销",
           "scan": "立即扫描来源", "became": "已成为看板条目", "done_bulk": "采纳 {accepted} 个，拒绝 {rejected} 个。",
           "done_undone": "已撤销。", "done_scanned": "扫描完成：{n} 个新条目。", "skipped": "未采纳："},
}


def _labels_with_flags(lang_labels: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
    return {lang: {**words, **{f"flag:{k}": v for k, v in FLAG_NAMES[lang].items()}}
            for lang, words in lang_labels.items()}


WORDS = _labels_with_flags(LABELS)


def accept_url(item_id: str) -> str:
    return f"/candidates/accept?id={quote(item_id, safe='')}"


@router.get("/candidates")
def show_lists(request: Request, ws: WS, status: str = "", source: str = "", flag: str = "", page_no: int = 1,
               done: str = "", n: str = "", undo: str = "", skipped: str = "") -> HTMLResponse:
    status = status if status in ("pending", "accepted", "rejected") else ""
    flag = flag if flag in candidates.FLAG_FILTERS else ""
    found = candidates.browse(ws, status=status, source=source, flag=flag, page=page_no)
    here = {"status": status, "source": source, "flag": flag}
    groups: dict[str, list[candidates.Card]] = {}
    for c in found.cards:
        groups.setdefault(c.list_path, []).append(c)
    return page(request, "candidates.html", WORDS, found=found, groups=groups, f=here, accept_url=accept_url,
                done=done, n=_counts(n), undo=undo, skipped=skipped.split("\n") if skipped else [],
                back=_url(here), page_url=lambda page_no: _url({**here, "page_no": str(page_no)}),
                entry_url=entry_url)


def _url(params: dict[str, str]) -> str:
    """The candidates page with these filters (and page), the defaults left out."""
    query = urlencode({k: v for k, v in params.items() if v and v != "1"})
    return "/candidates" + (f"?{query}" if query else "")


def _counts(text: str) -> dict[str, int]:
    """The counts a notice shows, from `a=1,r=2` (anything else ignored)."""
    out = {}
    for part in text.split(","):
        name, _, value = part.partition("=")
        if name in ("accepted", "rejected", "n") and value.isdigit():
            out[name] = int(value)
    return out


def _values(card: candidates.Card, form: Form | None = None) -> dict[str, str]:
    """The form's values: what the person typed, else what the item holds."""
    if form is not None:
        return {k: form.one(k) for k in EDITABLE} | {"allow_flagged": form.one("allow_flagged")}
    held: dict[str, Any] = {k: getattr(card, k) for k in EDITABLE}
    return {**held, "scenarios": "\n".join(card.scenarios), "allow_flagged": ""}


def _form_page(request: Request, card: candidates.Card, values: dict[str, str], problems: dict[str, str],
               status: int = 200) -> HTMLResponse:
    return page(request, "candidate_form.html", WORDS, status=status, card=card, values=values, problems=problems,
                choices={"type": board.TYPES, "confidence": board.CONFIDENCES})


@router.get("/candidates/accept")
def accept_form(request: Request, ws: WS, id: str) -> HTMLResponse:
    card = candidates.card(ws, id)
    return _form_page(request, card, _values(card), {})


def _problems(card: candidates.Card, form: Form, confirm_needed: str) -> dict[str, str]:
    """What keeps the item from becoming an entry, by field (the entry the board would get, checked whole)."""
    data = {"title": form.one("title"), "type": form.one("type"), "topic": form.one("topic"),
            "summary": form.one("summary"), "scenarios": form.lines("scenarios"),
            "confidence": form.one("confidence"), "core_content": "".join(p for p, _ in card.preview),
            "source": card.source, "source_date": card.source_date}
    problems = boardview.field_problems(data)
    if card.flags and not form.ticked("allow_flagged"):
        problems["allow_flagged"] = confirm_needed
    return problems


def _accept(request: Request, ws: WS, form: Form) -> Response:
    card = candidates.card(ws, form.one("id"))
    problems = _problems(card, form, words(request, WORDS)["confirm_needed"])
    if problems:
        return _form_page(request, card, _values(card, form), problems, 422)
    overrides = candidates.Overrides(title=form.one("title"), type=form.one("type"), topic=form.one("topic"),
                                     summary=form.one("summary"), scenarios=tuple(form.lines("scenarios")),
                                     confidence=form.one("confidence"))
    try:
        done = candidates.accept(ws, card.id, overrides, allow_flagged=form.ticked("allow_flagged"))
    except KbsyncError as exc:
        return _form_page(request, card, _values(card, form), {"form": exc.message}, refusal_status(exc))
    if done.action == candidates.NOTHING_TO_DO:  # accepted before (another tab, the command line)
        return RedirectResponse("/candidates", status_code=303)
    return RedirectResponse(entry_url(done.key, done.action), status_code=303)


@router.post("/candidates/accept")
async def accept(request: Request, ws: WS) -> Response:
    return await run_in_threadpool(_accept, request, ws, await read_form(request))


def _done(back: str, done: str, anchor: str = "", **extra: str) -> RedirectResponse:
    """Back to the page the person was on, saying what was done (and offering to undo it)."""
    from kbsync.web.pages.forms import local_target

    target = local_target(back, "/candidates")
    query = urlencode({"done": done, **{k: v for k, v in extra.items() if v}})
    hash_ = f"#{quote(anchor, safe='')}" if anchor else ""
    return RedirectResponse(f"{target}{'&' if '?' in target else '?'}{query}{hash_}", status_code=303)


@router.post("/candidates/reject")
async def reject(request: Request, ws: WS) -> RedirectResponse:
    form = await read_form(request)
    item = form.one("id")
    _rel, changed = await run_in_threadpool(candidates.reject, ws, item)
    undo = json.dumps({"rejected": [item] if changed else []})
    return _done(form.one("back"), "done_rejected", item, undo=undo if changed else "")


def _bulk(ws: WS, form: Form) -> RedirectResponse:
    """Accept or reject every selected item; what could not be accepted as the scan wrote it is named."""
    ids, action = form.all("ids"), form.one("action")
    if action not in ("accept", "reject"):
        raise InputError(f"action {action!r}: accept or reject")
    accepted: list[list[str]] = []
    rejected: list[str] = []
    skipped: list[str] = []
    for item in ids:
        try:
            if action == "reject":
                if candidates.reject(ws, item)[1]:
                    rejected.append(item)
                continue
            done = candidates.accept(ws, item, candidates.Overrides())
            if done.action == "added":
                accepted.append([item, done.key, done.version])
        except KbsyncError as exc:
            skipped.append(exc.message.splitlines()[0])
    undo = json.dumps({"rejected": rejected, "accepted": accepted}) if rejected or accepted else ""
    return _done(form.one("back"), "done_bulk", n=f"accepted={len(accepted)},rejected={len(rejected)}", undo=undo,
                 skipped="\n".join(skipped))


@router.post("/candidates/bulk")
async def bulk(request: Request, ws: WS) -> RedirectResponse:
    return await run_in_threadpool(_bulk, ws, await read_form(request))


def _undo(ws: WS, form: Form) -> RedirectResponse:
    """Undo the last action the page offered to undo: rejections made pending again, entries that accepts
    added taken off the board again if no one changed them since (their version is checked)."""
    try:
        last = json.loads(form.one("undo"))
        rejected = [str(i) for i in last.get("rejected", [])]
        accepted = [(str(i), str(k), str(v)) for i, k, v in last.get("accepted", [])]
    except (ValueError, TypeError, AttributeError) as exc:
        raise InputError("the undo field is not what this page wrote; reload the page") from exc
    for item in rejected:
        candidates.reopen(ws, item)
    for item, key, version in accepted:
        candidates.undo_accept(ws, item, key, version)
    return _done(form.one("back"), "done_undone")


@router.post("/candidates/undo")
async def undo(request: Request, ws: WS) -> RedirectResponse:
    return await run_in_threadpool(_undo, ws, await read_form(request))


def _scan(ws: WS, form: Form) -> RedirectResponse:
    found = candidates.scan(ws, board.clock(None))
    return _done(form.one("back"), "done_scanned", n=f"n={sum(len(r.candidates) for r in found)}")


@router.post("/candidates/scan")
async def scan(request: Request, ws: WS) -> RedirectResponse:
    return await run_in_threadpool(_scan, ws, await read_form(request))
