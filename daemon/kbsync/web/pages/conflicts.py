"""The conflicts page: every conflict copy and every file marked `status: conflict`, each with both versions
side by side: for the board and the memory files entry by entry (the changed fields marked), for a session
section by section, for any other file line by line (the changed words marked); their times and machines;
forms to keep mine, theirs or both, each saying what it does to the file; for the board and the memory
files a side to take for each entry, or the entry as the person edits it (Save my picks), and for any other
file the whole text as the person edits it (Save this text). An edit that is not valid is refused with the
problem beside it and the text kept; nothing is written.
Settling one writes through the same app function as `kbsync conflicts resolve` (the file's lock, a
fingerprint check, a backup; the copy removed; a commit), then the page shows the file as it is on disk."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from kbsync.app import conflicts
from kbsync.errors import KbsyncError
from kbsync.web.deps import WS
from kbsync.web.pages.forms import read_form, refusal_status
from kbsync.web.pages.render import page

router = APIRouter(include_in_schema=False)
MAX_PICKS = 10_000  # entries of one copy a form may name
LABELS: dict[str, dict[str, str]] = {
    "en": {"title": "Conflicts", "none": "No conflicts: nothing waits to be settled.", "kind_copy": "conflict copy",
           "kind_status": "marked status: conflict", "file": "File", "theirs": "Theirs (the file as it stands)",
           "mine": "Mine (the conflict copy)", "marked": "The file (marked status: conflict)",
           "made": "made", "machine": "machine", "unknown": "unknown", "gone": "the file is gone",
           "keep_mine": "Keep mine", "keep_theirs": "Keep theirs", "keep_both": "Keep both", "keep_picked": "my picks", "keep_edited": "my edit",
           "settled": "Settled", "on_disk": "The file as it is on disk now", "commit": "Commit",
           "removed": "Copy removed", "kept": "Kept", "to_list": "Back to the conflicts", "line": "Line",
           "no_commit": "not a git repository: nothing committed", "diff": "Both versions, line by line",
           "status_hint": "There is no other version: keep mine marks the file open again.",
           "what_changed": "What changed", "field": "Field", "changed": "changed", "absent": "(none)",
           "take": "Take", "take_mine": "mine", "take_theirs": "theirs", "save_picks": "Save my picks",
           "lines": "Line by line",
           "does_mine": "Keep mine: {what} below takes the copy's version; the rest of the file stays as it is.",
           "does_mine_file": "Keep mine: the file becomes the copy's text.",
           "does_theirs": "Keep theirs: the file stays exactly as it is; the copy is removed (a backup is kept in "
                          ".kbsync/backup/).",
           "does_both": "Keep both: each fact below keeps both values in one bullet, the copy's on the line below.",
           "does_picks": "Save my picks: each entry below takes the side ticked for it (mine, theirs, or my edit: "
                         "the text in its box); the rest of the file stays as it is; the copy is removed (a backup "
                         "is kept in .kbsync/backup/).",
           "each_entry": "each entry", "each_fact": "each fact", "take_edit": "my edit (below)",
           "edit_entry": "Edit {key} by hand", "edit_hint": "As the file writes it; tick \u201cmy edit\u201d "
                         "above to save it. It starts as mine.",
           "edit_file": "Edit the result by hand", "edit_text": "The file's text after saving",
           "edit_file_hint": "It starts as what Keep mine would write; change anything, then save it.",
           "save_text": "Save this text",
           "does_text": "Save this text: the file becomes exactly the text in the box; the copy is removed "
                        "(backups of the file and the copy are kept in .kbsync/backup/).",
           "refused": "Nothing was written"},
    "zh": {"title": "冲突", "none": "没有冲突：没有待处理的内容。", "kind_copy": "冲突副本",
           "kind_status": "标记为 status: conflict", "file": "文件", "theirs": "对方（现有文件）",
           "mine": "我的（冲突副本）", "marked": "该文件（标记为 status: conflict）",
           "made": "时间", "machine": "机器", "unknown": "未知", "gone": "文件已不存在",
           "keep_mine": "保留我的", "keep_theirs": "保留对方的", "keep_both": "两者都保留", "keep_picked": "我的选择", "keep_edited": "我的修改",
           "settled": "已解决", "on_disk": "磁盘上的文件现状", "commit": "提交",
           "removed": "已删除副本", "kept": "保留了", "to_list": "返回冲突列表", "line": "行",
           "no_commit": "不是 git 仓库：没有提交", "diff": "两个版本逐行对照",
           "status_hint": "没有另一个版本：保留我的会把文件重新标记为 open。",
           "what_changed": "改动了什么", "field": "字段", "changed": "有改动", "absent": "（无）", "take": "采用",
           "take_mine": "我的", "take_theirs": "对方的", "save_picks": "按我的选择保存", "lines": "逐行对照",
           "does_mine": "保留我的：下面的{what}改用副本的版本；文件其余部分不变。",
           "does_mine_file": "保留我的：文件改为副本的内容。",
           "does_theirs": "保留对方的：文件保持原样；删除副本（备份留在 .kbsync/backup/）。",
           "does_both": "两者都保留：下面每条事实在同一条目里保留两个值，副本的值在下一行。",
           "does_picks": "按我的选择保存：下面每个条目采用为它勾选的一方（我的、对方的，或我的修改：框里的文字）；文件其余部分"
                         "不变；删除副本（备份留在 .kbsync/backup/）。",
           "each_entry": "每个条目", "each_fact": "每条事实", "take_edit": "我的修改（见下）",
           "edit_entry": "手动修改 {key}", "edit_hint": "按文件里的写法；在上面勾选“我的修改”才会保存。初始内容是我的版本。",
           "edit_file": "手动修改结果", "edit_text": "保存后的文件内容",
           "edit_file_hint": "初始内容就是“保留我的”会写入的内容；改好后保存。",
           "save_text": "保存这段文字",
           "does_text": "保存这段文字：文件变为框里的文字，一字不差；删除副本（文件和副本的备份留在 .kbsync/backup/）。",
           "refused": "没有写入任何内容"},
}


@dataclass(frozen=True)
class Shown:
    item: conflicts.ConflictItem
    view: conflicts.SideBySide | None
    problem: str  # why it cannot be shown; "" when it can


@dataclass(frozen=True)
class Kept:
    """What a person sent for one conflict when it was refused: shown again as it was sent, the problem beside it."""

    path: str = ""
    picks: dict[str, str] = field(default_factory=dict)  # entry key -> mine, theirs or edited
    edits: dict[str, str] = field(default_factory=dict)  # entry key -> the person's text for it
    text: str | None = None  # the person's text for the whole file
    problem: str = ""


def _shown(ws: WS, item: conflicts.ConflictItem) -> Shown:
    try:
        return Shown(item, conflicts.side_by_side(ws, str(ws.path(item.path))), "")
    except KbsyncError as exc:
        return Shown(item, None, str(exc))


def _items(ws: WS) -> list[Shown]:
    return [_shown(ws, item) for item in conflicts.list_conflicts(ws)]


@router.get("/conflicts")
def conflicts_page(request: Request, ws: WS) -> HTMLResponse:
    return page(request, "conflicts.html", LABELS, items=_items(ws), kept=Kept())


@router.post("/conflicts/resolve")
async def resolve(request: Request, ws: WS) -> Response:
    form = await read_form(request)
    given = form.one("key-count")
    count = min(int(given), MAX_PICKS) if given.isascii() and given.isdigit() and len(given) <= 5 else 0
    picks = {form.one(f"key-{n}"): form.one(f"pick-{n}") for n in range(count)}
    edits = {form.one(f"key-{n}"): form.one(f"edit-{n}") for n in range(count) if f"edit-{n}" in form.fields}
    path, keep = form.one("path"), form.one("keep")
    try:
        done = await run_in_threadpool(_resolve, ws, path, keep, picks, edits, form.one("text"))
    except KbsyncError as exc:  # shown again as sent, the problem beside it; nothing was written
        kept = Kept(path, picks, edits, form.one("text") if keep == "edited" else None, exc.message)
        items = await run_in_threadpool(_items, ws)
        return page(request, "conflicts.html", LABELS, status=refusal_status(exc), items=items, kept=kept)
    query = urlencode({"path": done.path, "keep": done.keep, "removed": done.removed or "", "commit": done.commit or ""})
    return RedirectResponse(f"/conflicts/settled?{query}", status_code=303)


def _resolve(ws: WS, path: str, keep: str, picks: dict[str, str], edits: dict[str, str],
             text: str) -> conflicts.Resolved:
    """The path gate, the file's lock and git: in the thread pool, never on the event loop."""
    return conflicts.resolve(ws, conflicts.named(ws, path), keep, picks, edits, text)


@router.get("/conflicts/settled")
def settled(request: Request, ws: WS, path: str, keep: str = "", removed: str = "", commit: str = "") -> HTMLResponse:
    text = conflicts.read_settled(ws, conflicts.named(ws, path))
    return page(request, "settled.html", LABELS, path=path, keep=keep, removed=removed, commit=commit, text=text)
