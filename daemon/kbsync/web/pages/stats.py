"""The stats and review pages: /stats draws sessions per month by tag, board entries by type and
confidence, helpful and harmful votes per topic and decay candidates over time as SVG, each picture with
its numbers in a table; /review is the board's weekly review (changes since a date, drift between the
Markdown and what is derived from it, which should read zero, and decay candidates)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from markupsafe import Markup

from kbsync.app import board, insights
from kbsync.web.deps import WS
from kbsync.web.pages import charts
from kbsync.web.pages.render import language, page

router = APIRouter(include_in_schema=False)
LABELS: dict[str, dict[str, str]] = {
    "en": {"title": "Stats", "c_sessions": "Sessions per month by tag (each session once, under its first tag among the most used)",
           "c_entries": "Board entries by type and confidence", "c_feedback": "Helpful and harmful votes per topic "
           "(this machine)", "c_decay": "Decay candidates over time (today's candidates, by when they became one)",
           "numbers": "The numbers", "dirty": "sessions left out: their frontmatter cannot be read (see kbsync "
           "validate)", "weekly": "Weekly review", "since": "Since", "days": "Decay after (days)", "show": "Show",
           "added": "Added", "changed": "Changed", "retired": "Retired", "removed": "Removed",
           "drift": "Drift between the Markdown and the index", "drift_zero": "0: the index and the counters agree "
           "with the Markdown", "decay_list": "Decay candidates", "commits": "Commits", "entries_n": "entries",
           "by": "By", "none": "none", "base": "compared with the board as committed in",
           "s_helpful": "helpful", "s_harmful": "harmful", "s_candidates": "decay candidates", "total": "total",
           "k_sessions": "Month", "k_entries": "Type", "k_feedback": "Topic", "k_decay": "Month"},
    "zh": {"title": "统计", "c_sessions": "每月会话数（按标签；每个会话只计一次，计入它在常用标签中的第一个）",
           "c_entries": "看板条目：按类型与置信度", "c_feedback": "每个主题的有用与有害反馈（本机）",
           "c_decay": "衰减候选随时间变化（今天的候选，按成为候选的时间）", "numbers": "数据表",
           "dirty": "个会话未计入：元数据无法读取（见 kbsync validate）", "weekly": "每周回顾", "since": "起始",
           "days": "衰减天数", "show": "显示", "added": "新增", "changed": "修改", "retired": "退役",
           "removed": "删除", "drift": "Markdown 与索引之间的偏差", "drift_zero": "0：索引和计数与 Markdown 一致",
           "decay_list": "衰减候选", "commits": "提交", "entries_n": "个条目", "by": "按", "none": "无",
           "base": "对比的看板版本", "s_helpful": "有用", "s_harmful": "有害", "s_candidates": "衰减候选", "total": "合计",
           "k_sessions": "月份", "k_entries": "类型", "k_feedback": "主题", "k_decay": "月份"},
}


def _charts(p: insights.Pictures, t: dict[str, str]) -> list[charts.Chart]:
    """The four pictures; the series kbsync names (helpful, harmful, candidates) in the page's language,
    tags, types and confidences as written."""
    specs: tuple[tuple[str, insights.Grid, charts.Layout, bool], ...] = (
        ("sessions", p.sessions, "stacked", False), ("entries", p.entries, "grouped", False),
        ("feedback", p.feedback, "grouped", True), ("decay", p.decay, "stacked", True))
    return [charts.Chart(f"chart-{name}", t[f"c_{name}"], grid.categories,
                         tuple(t[f"s_{s}"] for s in grid.series) if ours else grid.series, grid.values, layout,
                         t["total"], t[f"k_{name}"])
            for name, grid, layout, ours in specs]


@router.get("/stats")
def stats_page(request: Request, ws: WS) -> HTMLResponse:
    pictures = insights.pictures(ws, board.clock(None))
    t = LABELS[language(request.headers.get("accept-language", ""))]
    shown = [(c, Markup(charts.svg(c)), charts.table(c)) for c in _charts(pictures, t)]
    return page(request, "stats.html", LABELS, charts=shown, dirty=pictures.dirty)


@router.get("/review")
def review_page(request: Request, ws: WS, since: str = "", days: float = insights.DECAY_DAYS) -> HTMLResponse:
    report = insights.weekly_review(ws, board.clock(None), since, days)
    return page(request, "review.html", LABELS, r=report, since=since, days=days)
