"""The conflicts page: every conflict copy and every file marked `status: conflict`, each with both versions
side by side (the changed words marked), their times and machines, and forms to keep mine, theirs or both.
Settling one writes through the same app function as `kbsync conflicts resolve` (the file's lock, a
fingerprint check, a backup; the copy removed; a commit), then the page shows the file as it is on disk."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from kbsync.app import conflicts
from kbsync.errors import KbsyncError
from kbsync.web.deps import WS
from kbsync.web.pages.forms import read_form
from kbsync.web.pages.render import page

router = APIRouter(include_in_schema=False)
LABELS: dict[str, dict[str, str]] = {
    "en": {"title": "Conflicts", "none": "No conflicts: nothing waits to be settled.", "kind_copy": "conflict copy",
           "kind_status": "marked status: conflict", "file": "File", "theirs": "Theirs (the file as it stands)",
           "mine": "Mine (the conflict copy)", "marked": "The file (marked status: conflict)",
           "made": "made", "machine": "machine", "unknown": "unknown", "gone": "the file is gone",
           "keep_mine": "Keep mine", "keep_theirs": "Keep theirs", "keep_both": "Keep both",
           "settled": "Settled", "on_disk": "The file as it is on disk now", "commit": "Commit",
           "removed": "Copy removed", "kept": "Kept", "to_list": "Back to the conflicts", "line": "Line",
           "no_commit": "not a git repository: nothing committed", "diff": "Both versions, line by line",
           "status_hint": "There is no other version: keep mine marks the file open again."},
    "zh": {"title": "冲突", "none": "没有冲突：没有待处理的内容。", "kind_copy": "冲突副本",
           "kind_status": "标记为 status: conflict", "file": "文件", "theirs": "对方（现有文件）",
           "mine": "我的（冲突副本）", "marked": "该文件（标记为 status: conflict）",
           "made": "时间", "machine": "机器", "unknown": "未知", "gone": "文件已不存在",
           "keep_mine": "保留我的", "keep_theirs": "保留对方的", "keep_both": "两者都保留",
           "settled": "已解决", "on_disk": "磁盘上的文件现状", "commit": "提交",
           "removed": "已删除副本", "kept": "保留了", "to_list": "返回冲突列表", "line": "行",
           "no_commit": "不是 git 仓库：没有提交", "diff": "两个版本逐行对照",
           "status_hint": "没有另一个版本：保留我的会把文件重新标记为 open。"},
}


@dataclass(frozen=True)
class Shown:
    item: conflicts.ConflictItem
    view: conflicts.SideBySide | None
    problem: str  # why it cannot be shown; "" when it can


def _shown(ws: WS, item: conflicts.ConflictItem) -> Shown:
    try:
        return Shown(item, conflicts.side_by_side(ws, str(ws.path(item.path))), "")
    except KbsyncError as exc:
        return Shown(item, None, str(exc))


@router.get("/conflicts")
def conflicts_page(request: Request, ws: WS) -> HTMLResponse:
    items = [_shown(ws, item) for item in conflicts.list_conflicts(ws)]
    return page(request, "conflicts.html", LABELS, items=items)


@router.post("/conflicts/resolve")
async def resolve(request: Request, ws: WS) -> RedirectResponse:
    form = await read_form(request)
    done = conflicts.resolve(ws, conflicts.named(ws, form.one("path")), form.one("keep"))
    query = urlencode({"path": done.path, "keep": done.keep, "removed": done.removed or "", "commit": done.commit or ""})
    return RedirectResponse(f"/conflicts/settled?{query}", status_code=303)


@router.get("/conflicts/settled")
def settled(request: Request, ws: WS, path: str, keep: str = "", removed: str = "", commit: str = "") -> HTMLResponse:
    text = conflicts.read_settled(ws, conflicts.named(ws, path))
    return page(request, "settled.html", LABELS, path=path, keep=keep, removed=removed, commit=commit, text=text)
