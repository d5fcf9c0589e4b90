"""The memory page (/memory): the facts of memory/facts.md, memory/preferences.md and the entity files,
listed and searched a page at a time (kbsync.app.memory.browse: the search and the file before paging); a fact
set (added, or replaced in place) and forgotten through kbsync.app.memory, with the same validation as
`kbsync memory set|forget`. An edit carries the fact's version, so a fact changed elsewhere since the page was
read is not written over. Every action returns to the list as the person had it (its search and file kept),
on the page that shows the fact: a fact set lands on its row, which says what was done; a fact forgotten
leaves a line where its row was, saying so."""

from __future__ import annotations

from dataclasses import dataclass, replace
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from kbsync.app import memory
from kbsync.errors import KbsyncError, StaleError
from kbsync.web.deps import WS
from kbsync.web.pages.forms import Form, read_form, refusal_status
from kbsync.web.pages.render import page

router = APIRouter(include_in_schema=False)
FILES = memory.FILE_KINDS
LABELS = {
    "en": {"title_memory": "Memory", "intro": "Facts the assistant keeps: one `- key: value` bullet each. Setting a "
           "key that is there replaces its fact in place.", "search": "Search", "apply": "Apply",
           "clear_filters": "Clear", "file": "File", "any": "any", "facts": "Facts (memory/facts.md)",
           "preferences": "Preferences (memory/preferences.md)", "entity": "An entity's file",
           "entity_name": "Entity name", "entity_hint": "memory/entities/<slug of the name>.md, made on first use",
           "key": "Key", "value": "Value", "line": "Line", "where": "Where", "set": "Set a fact", "save": "Save",
           "edit": "Edit", "forget": "Forget", "forget_named": "Forget {key}", "edit_named": "Edit {key}",
           "shown": "{n} of {total} facts", "empty": "No fact matches.", "refused": "Not saved:",
           "done_added": "Added.", "done_replaced": "Saved.", "done_unchanged": "Nothing changed.",
           "done_removed": "Forgotten.", "forgotten": "{key} forgotten.",
           "value_hint": "one line; empty for a bare `- key`"},
    "zh": {"title_memory": "记忆", "intro": "助手记住的事实：每条一个 `- 键: 值` 列表项。设置已有的键会就地替换。",
           "search": "搜索", "apply": "筛选", "clear_filters": "清除", "file": "文件", "any": "全部",
           "facts": "事实（memory/facts.md）", "preferences": "偏好（memory/preferences.md）", "entity": "实体文件",
           "entity_name": "实体名", "entity_hint": "memory/entities/<名字的 slug>.md，首次使用时创建", "key": "键",
           "value": "值", "line": "行", "where": "位置", "set": "设置事实", "save": "保存", "edit": "编辑",
           "forget": "忘记", "forget_named": "忘记 {key}", "edit_named": "编辑 {key}", "shown": "{total} 条中的 {n} 条",
           "empty": "没有符合条件的事实。", "refused": "未保存：", "done_added": "已新增。", "done_replaced": "已保存。",
           "done_unchanged": "没有变化。", "done_removed": "已忘记。", "forgotten": "已忘记 {key}。",
           "value_hint": "一行；留空表示只有键"},
}
DONE = {"added": "done_added", "replaced": "done_replaced", "unchanged": "done_unchanged", "removed": "done_removed"}


@dataclass(frozen=True)
class Place:
    """Which memory file a fact is in, as `kbsync memory` names it."""

    file: str  # one of FILES
    entity: str = ""

    @staticmethod
    def of(relpath: str) -> Place:
        kind = memory.file_kind(relpath)
        return Place(kind, relpath.rsplit("/", 1)[1].removesuffix(".md") if kind == "entity" else "")

    @property
    def preferences(self) -> bool:
        return self.file == "preferences"

    @property
    def named(self) -> str | None:
        """The entity, for an entity's file."""
        return self.entity if self.file == "entity" else None


def anchor(item: memory.FactItem) -> str:
    return f"fact-{item.path.replace('/', '-').removesuffix('.md')}-{item.line}"


@dataclass(frozen=True)
class Shown:
    """The list as the person has it: its search words, file and page."""

    q: str = ""
    file: str = ""
    page: int = 1

    def url(self, **more: str) -> str:
        kept = {"q": self.q, "file": self.file, "page": str(self.page) if self.page > 1 else "", **more}
        query = urlencode({k: v for k, v in kept.items() if v})
        return "/memory" + (f"?{query}" if query else "")

    def facts(self, ws: WS) -> list[memory.FactItem]:
        """Every fact the list keeps, on every page."""
        return memory.matching(ws, self.q, self.file)

    def holding(self, ws: WS, path: str, key: str) -> Shown | None:
        """This list at the page that shows the fact `key` of `path`; None when the list does not keep it."""
        kept = [(i.path, i.key) for i in self.facts(ws)]
        if (path, key) not in kept:
            return None
        return replace(self, page=memory.page_holding(kept.index((path, key)), len(kept)))

    @staticmethod
    def sent(form: Form) -> Shown:
        """The list a form was sent from (its fields back_q, back_file and back_page)."""
        at = form.one("back_page")
        return Shown(form.one("back_q"), form.one("back_file"), int(at) if at.isdigit() else 1)


@router.get("/memory")
def show_memory(request: Request, ws: WS, q: str = "", file: str = "", at_page: int = Query(1, alias="page"),
                done: str = "", key: str = "", at: str = "", row: str = "", forgot: str = "",
                place: int = -1) -> HTMLResponse:
    """`row`: the anchor of the fact just set; `forgot` and `place`: the key just forgotten, and where its row
    was among the facts the list keeps (on every page)."""
    return _page(request, ws, Shown(q, file, at_page), done=DONE.get(done, ""), values=_values(ws, key, at),
                 problems={}, row=row, forgot=forgot, place=place)


def _values(ws: WS, key: str, at: str) -> dict[str, str]:
    """The set form's values: empty, or the fact `key` of the file `at` (a workspace path) to edit."""
    if not key:
        return {"file": "facts", "entity": "", "key": "", "value": "", "base": ""}
    place = Place.of(at)
    item = memory.get_fact(ws, key, preferences=place.preferences, entity=place.named)
    return {"file": place.file, "entity": place.entity, "key": item.key, "value": item.value, "base": item.version}


def _page(request: Request, ws: WS, shown: Shown, *, done: str, values: dict[str, str], problems: dict[str, str],
          status: int = 200, row: str = "", forgot: str = "", place: int = -1) -> HTMLResponse:
    found = memory.browse(ws, q=shown.q, kind=shown.file, page=shown.page)
    here = replace(shown, page=found.page)  # the page shown (one past the last is the last)
    items, place = found.items, place - found.start  # the forgotten row's place on this page
    row = row if done and any(anchor(i) == row for i in items) else ""  # else the notice tops the page
    forgot = forgot if done and forgot and items and 0 <= place <= len(items) else ""
    return page(request, "memory.html", LABELS, status=status, found=found, items=items, listed=here, files=FILES,
                done=done, values=values, problems=problems, anchor=anchor, row=row, forgot=forgot, place=place,
                edit_url=lambda i: here.url(key=i.key, at=i.path) + "#set",
                page_url=lambda page: replace(here, page=page).url())


def _set(request: Request, ws: WS, form: Form) -> Response:
    values = {k: form.one(k) for k in ("file", "entity", "key", "value", "base")}
    shown = Shown.sent(form)
    place = Place(values["file"] if values["file"] in FILES else "facts", values["entity"].strip())
    if place.file == "entity" and not place.entity:
        return _page(request, ws, shown, done="", values=values, status=422,
                     problems={"entity": "name the entity whose file holds the fact"})
    try:
        done = memory.set_fact(ws, values["key"], values["value"], base=values["base"] or None,
                               preferences=place.preferences, entity=place.named)
    except StaleError as exc:
        newer = "" if exc.current is None else str(exc.current)
        return _page(request, ws, shown, done="", values={**values, "base": exc.version}, status=409,
                     problems={"form": exc.message, "newer": newer})
    except KbsyncError as exc:
        return _page(request, ws, shown, done="", values=values, status=refusal_status(exc),
                     problems={"form": exc.message})
    item = memory.get_fact(ws, done.key, preferences=place.preferences, entity=place.named)
    back = shown.holding(ws, item.path, item.key) or Shown().holding(ws, item.path, item.key) or Shown()
    return RedirectResponse(back.url(done=done.action, row=anchor(item)) + f"#{anchor(item)}", status_code=303)


def _forget(ws: WS, form: Form) -> Response:
    shown, where, key = Shown.sent(form), Place.of(form.one("path")), form.one("key")
    before = [(i.path, i.key) for i in shown.facts(ws)]
    done = memory.forget_fact(ws, key, preferences=where.preferences, entity=where.named)
    if (done.path, done.key) not in before:  # sent from another list: its notice tops the page
        return RedirectResponse(shown.url(done=done.action), status_code=303)
    place = before.index((done.path, done.key))
    back = replace(shown, page=memory.page_holding(place, len(before) - 1))  # the page its row was on
    return RedirectResponse(back.url(done=done.action, forgot=done.key, place=str(place)) + "#forgotten",
                            status_code=303)


@router.post("/memory/set")
async def set_fact(request: Request, ws: WS) -> Response:
    return await run_in_threadpool(_set, request, ws, await read_form(request))


@router.post("/memory/forget")
async def forget_fact(request: Request, ws: WS) -> Response:
    return await run_in_threadpool(_forget, ws, await read_form(request))
