"""The status page (/status): whether the daemon runs, its last event, repair, commit and sync, what waits
for a person and why (linked to the page that settles it), and the last lines of logs/errors.md. Read from
kbsync.app.status (what `kbsync status` prints), kbsync.app.candidates and kbsync.app.board."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from kbsync.app import board, candidates, status
from kbsync.web.deps import WS
from kbsync.web.pages.render import page

router = APIRouter(include_in_schema=False)
SETTLED_ON = {"conflict-copy": "/conflicts", "conflict-status": "/conflicts"}  # a kind of waiting -> its page
DECAY_DAYS = 90.0
LABELS = {
    "en": {"title_status": "Status", "daemon": "Daemon", "running": "running (pid {pid})",
           "stopped": "not running", "machine": "Machine", "last_event": "Last event", "last_repair": "Last repair",
           "last_commit": "Last commit", "last_sync": "Last sync", "pending": "In the daemon's queue",
           "uncommitted": "Uncommitted files", "none": "none", "waiting": "Waiting",
           "nothing_waits": "Nothing waits.", "for_person": "for a person", "for_time": "settles by itself",
           "settle": "Settle it", "candidates_wait": "{n} candidate(s) wait for a review",
           "decay_wait": "{n} board entr(y/ies) are decay candidates", "errors": "Recent lines of logs/errors.md",
           "no_errors": "logs/errors.md holds no lines.", "path": "Path", "why": "Why", "who": "Settled by",
           "failed": "failed", "flagged": "Records carrying an embedded instruction",
           "no_flagged": "No indexed record carries an embedded instruction.", "record": "Record",
           "families": "Families", "classified": "Records the classifier reads as an instruction",
           "classifier_off": "The classifier is off ([search] semantic = false): the rules alone flag.",
           "no_classified": "The classifier flags no indexed record.", "unit": "Where"},
    "zh": {"title_status": "状态", "daemon": "守护进程", "running": "运行中（pid {pid}）", "stopped": "未运行",
           "machine": "本机", "last_event": "最近事件", "last_repair": "最近修复", "last_commit": "最近提交",
           "last_sync": "最近同步", "pending": "队列中", "uncommitted": "未提交的文件", "none": "无",
           "waiting": "等待处理", "nothing_waits": "没有等待处理的事项。", "for_person": "需要人处理",
           "for_time": "会自行解决", "settle": "去处理", "candidates_wait": "{n} 个候选等待审阅",
           "decay_wait": "{n} 个看板条目是衰退候选", "errors": "logs/errors.md 最近的记录",
           "no_errors": "logs/errors.md 还没有记录。", "path": "路径", "why": "原因", "who": "由谁解决",
           "failed": "失败", "flagged": "含嵌入指令的记录", "no_flagged": "索引中没有含嵌入指令的记录。",
           "record": "记录", "families": "类别", "classified": "分类器判为指令的记录",
           "classifier_off": "分类器已关闭（[search] semantic = false）：只由规则标记。",
           "no_classified": "分类器没有标记任何索引记录。", "unit": "位置"},
}


@router.get("/status")
def show_status(request: Request, ws: WS) -> HTMLResponse:
    rep = status.report(ws)
    pending = candidates.list_items(ws, "pending")
    decay = board.decay_candidates(ws, board.clock(None), DECAY_DAYS)
    return page(request, "status.html", LABELS, rep=rep, settled_on=SETTLED_ON, pending=len(pending),
                decay=len(decay), errors=status.recent_errors(ws), flagged_url=_flagged_url)


def _flagged_url(record: dict[str, str]) -> str:
    """The page that shows a flagged record: its session, its board entry, or nothing (memory, artifacts)."""
    from urllib.parse import quote

    if record.get("session_id"):
        return f"/sessions/{quote(record['session_id'])}"
    key = record.get("key", "")
    board_key = key.partition("#")[2] if key.startswith(f"{board.BOARD_FILE}#") else ""
    return f"/board/entry?key={quote(board_key, safe='')}" if board_key else ""
