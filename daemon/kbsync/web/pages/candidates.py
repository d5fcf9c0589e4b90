"""The candidates page (/candidates): what the watermark scan proposes, list by list (newest first), each
item's flags shown prominently with its flagged text marked; Accept opens the entry form pre-filled
(scenarios required; a flagged item only with the confirmation ticked), Reject records the decision.
Everything goes through kbsync.app.candidates, as `kbsync candidates accept|reject` does."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from kbsync.app import board, boardview, candidates
from kbsync.errors import KbsyncError
from kbsync.web.deps import WS
from kbsync.web.pages.board import LABELS as BOARD_LABELS, entry_url
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
           "no_flags": "no flags", "warning": "Warning"},
    "zh": {**BOARD_LABELS["zh"], "title_candidates": "候选清单", "list": "清单", "item": "条目", "path": "路径",
           "preview": "摘录", "flags": "标记", "flagged_lines": "可疑行", "accept": "采纳 Accept",
           "reject": "拒绝 Reject", "pending": "待审", "no_lists": "还没有候选清单：`kbsync scan` 会写在 candidates/ 下。",
           "accept_title": "采纳候选", "confirm": "我已阅读可疑行，仍要把它加入看板",
           "confirm_needed": "此条目带有标记：请先阅读可疑行，再勾选确认。", "done_rejected": "已拒绝，不会再次提出。",
           "decided": "已决定：{status}", "no_flags": "无标记", "warning": "警告"},
}


def _labels_with_flags(lang_labels: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
    return {lang: {**words, **{f"flag:{k}": v for k, v in FLAG_NAMES[lang].items()}}
            for lang, words in lang_labels.items()}


WORDS = _labels_with_flags(LABELS)


def accept_url(item_id: str) -> str:
    return f"/candidates/accept?id={quote(item_id, safe='')}"


@router.get("/candidates")
def show_lists(request: Request, ws: WS, done: str = "") -> HTMLResponse:
    return page(request, "candidates.html", WORDS, listings=candidates.review(ws), accept_url=accept_url,
                done="done_rejected" if done == "rejected" else "")


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


@router.post("/candidates/reject")
async def reject(request: Request, ws: WS) -> RedirectResponse:
    form = await read_form(request)
    await run_in_threadpool(candidates.reject, ws, form.one("id"))
    return RedirectResponse(f"/candidates?done=rejected#{quote(form.one('id'), safe='')}", status_code=303)
