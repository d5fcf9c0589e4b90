#!/usr/bin/env python3
"""Write a synthetic workspace that follows the file protocol, for benchmarks and tests.

    python bench/gen_workspace.py OUT --sessions N [--dirty R] [--seed S] [--size BYTES]

What OUT gets (see docs/protocol.md and docs/board.md):

- `sessions/YYYY-MM-DD/HHMM-<h7>-<title>.md`: N session files spread over 700 days from
  2025-01-01, mostly in +08:00 (a few in Z, +09:00, -07:00), each with the frontmatter fields in
  the protocol's order and the five `##` sections in order, filled with Chinese and English prose,
  lists, tool-call lines and code blocks; about 7 KB a file on average (`--size` is the mean body
  size in bytes, 6800 by default; one session in a hundred is 4-7 times longer, every body stays
  under the 60 KB limit). Rare, valid variants: a parent id, a block-style tag list, unknown extra
  fields, a `title` field, fractional seconds, CRLF line endings, a UTF-8 byte-order mark.
- `index.md`: its header and one row per session save, in time order (some sessions were saved
  twice, so they have two rows; readers keep the last).
- `LEARNING_BOARD.md`: the three sections and about one entry per 50 sessions, most in kbsync's
  own rendering, some in the hand-edited forms the board accepts.
- `memory/facts.md`, `memory/preferences.md` (one keyed bullet per fact), `memory/entities/*.md`.
- `logs/tool-calls.md` (one line per tool call of every session) and `logs/errors.md`.
- `artifacts/YYYY-MM-DD/*.md` (one per 100 sessions), `candidates/.gitkeep`, and the
  `.gitignore` and `.gitattributes` that `kbsync init` writes.

The clean workspace validates without an error or a warning.

With `--dirty R`, each session file independently carries, with probability R, one defect that
`kbsync repair` fixes without losing content, the kind drawn uniformly from: no_frontmatter,
fullwidth_colon_key (`status： open`), unquoted_colon and unquoted_hash (a plain value with `: ` or
` #`), quoted_int (`turns: '14'`), tags_string (`tags: a, b`), naive_ts (`ts` without offset),
missing_field (role, tags, status or summary), heading_level (`### 结论`), heading_note
(`## 结论：第一阶段`), heading_synonym (`## 下一步`, `## 小结`, ...), heading_no_hash (`结论：`),
missing_section, truncated. `.defects.tsv` lists them, `<relpath>TAB<kind>`, sorted by path; it is
written only when there is at least one. `truncated` cuts the text after the frontmatter and
outside code blocks: an error (sections missing) unless the cut falls in the last section. Every
other kind is an error that `kbsync repair` fixes. Only session files are made dirty.

Deterministic: the same arguments give byte-identical output (with the same Python minor
version). The content of the sessions does not depend on --dirty, and the files dirty at a
rate R are among those dirty at any higher rate with the same seed. Only the standard library is
used, and nothing of kbsync: the generator is an independent writer of the protocol.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import os
import random
import re
import sys
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Final, Sequence

# ---- the protocol, as far as the generator needs it -------------------------------------

SECTIONS: Final = ("用户输入", "我的判断", "工具调用", "结论", "待办")
INDEX_HEADER: Final = "| 日期 | 标题 | 标签 | 摘要 | 路径 |\n| --- | --- | --- | --- | --- |\n"
GITIGNORE: Final = ".kbsync/\n*.tmp\n*.lock\n"
GITATTRIBUTES: Final = "index.md merge=union\nlogs/*.md merge=union\n"
MAX_BODY: Final = 56_000  # under the default `[protocol] max_session_kb = 60`
DAYS: Final = 700
START: Final = dt.date(2025, 1, 1)
OFFSETS: Final = (("+08:00", 93), ("Z", 3), ("+09:00", 2), ("-07:00", 2))

_UNSAFE_IN_NAME = re.compile(r'[/\\:*?"<>|\x00-\x1f\x7f]')
_QUOTE_CHARS = frozenset(":#'\"<>[]{},&*!|%@`")
_LOOKS_TYPED = re.compile(
    r"^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF|"
    r"null|Null|NULL|~|[-+]?(?:\d[\d_]*)?\.?\d+(?:[eE][-+]?\d+)?|0x[0-9a-fA-F]+|\d{4}-\d\d?-\d\d?.*)$"
)


def h7(raw_id: str) -> str:
    return hashlib.sha1(raw_id.encode("utf-8")).hexdigest()[:7]


def slug(title: str) -> str:
    """The file-name form of a title: unsafe characters dropped, spaces to `-`, at most 20 characters."""
    text = _UNSAFE_IN_NAME.sub("", unicodedata.normalize("NFC", title).strip())
    text = re.sub(r"-{2,}", "-", re.sub(r"\s", "-", text))[:20]
    return re.sub(r"-{2,}", "-", text).strip("-")


def _fullwidth_punct(ch: str) -> bool:
    return unicodedata.category(ch).startswith("P") and unicodedata.east_asian_width(ch) in ("F", "W")


def yaml_str(value: str) -> str:
    """A frontmatter string by the protocol's quoting rule: double-quoted when it has to be."""
    plain = (value and value == value.strip() and not value.startswith(("-", "?", "~"))
             and not any(ch in _QUOTE_CHARS or _fullwidth_punct(ch) for ch in value)
             and not _LOOKS_TYPED.match(value))
    return value if plain else '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def cell(text: str) -> str:
    return text.replace("|", "\\|")


def utc_stamp(moment: dt.datetime) -> str:
    return moment.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# ---- vocabulary ---------------------------------------------------------------------------

TOPICS: Final[tuple[tuple[str, tuple[str, ...]], ...]] = (
    ("合同风险梳理", ("合同", "风险", "法务")), ("接口联调记录", ("接口", "联调", "测试")),
    ("需求评审", ("排期", "前端", "文档")), ("故障复盘", ("复盘", "监控", "部署")),
    ("发布计划", ("部署", "排期", "ci")), ("数据迁移方案", ("迁移", "数据库", "sql")),
    ("性能压测结论", ("性能", "测试", "缓存")), ("安全审计", ("安全", "权限", "日志")),
    ("成本分析", ("预算", "账单", "k8s")), ("客户访谈纪要", ("客服", "需求", "文档")),
    ("代码评审", ("git", "python", "测试")), ("架构讨论", ("接口", "缓存", "数据库")),
    ("周报整理", ("文档", "排期")), ("招聘面试安排", ("招聘", "排期")),
    ("预算复核", ("预算", "账单", "法务")), ("缓存失效排查", ("缓存", "redis", "监控")),
    ("数据库慢查询", ("数据库", "postgres", "性能")), ("前端构建提速", ("前端", "ci", "性能")),
    ("k8s 集群升级", ("k8s", "部署", "风险")), ("CI pipeline 修复", ("ci", "git", "部署")),
    ("Postgres 索引调优", ("postgres", "sql", "性能")), ("API: 超时与重试", ("接口", "性能", "python")),
    ("账单对账", ("账单", "数据库", "客服")), ("客服工单分类", ("客服", "python", "文档")),
    ("法务条款比对", ("法务", "合同")), ("供应商评估", ("合同", "预算", "风险")),
    ("git 冲突处理", ("git", "文档")), ("python 依赖升级", ("python", "安全", "ci")),
    ("Release checklist", ("部署", "ci", "文档")), ("Weekly sync notes", ("排期", "文档")),
    ("On-call handover", ("监控", "日志", "部署")), ("Design review: search", ("接口", "性能")),
    ("迁移到 monorepo", ("git", "ci", "迁移")), ("日志告警降噪", ("日志", "监控")),
    ("权限模型梳理", ("权限", "安全", "接口")), ("SLA 指标定义", ("监控", "客服", "合同")),
    ("数据看板需求", ("前端", "sql", "需求")), ("A/B 实验复盘", ("复盘", "前端", "数据库")),
    ("灰度发布策略", ("部署", "风险", "k8s")), ("备份与恢复演练", ("数据库", "安全", "运维")),
    ("合同|附件 核对", ("合同", "法务")), ("redis 内存告警", ("redis", "监控", "缓存")),
)
ALL_TAGS: Final = ("合同", "风险", "法务", "接口", "联调", "部署", "数据库", "缓存", "前端", "测试", "性能", "安全",
                   "账单", "客服", "招聘", "预算", "排期", "git", "python", "k8s", "postgres", "ci", "监控", "日志",
                   "权限", "迁移", "复盘", "文档", "sql", "redis", "需求", "运维")
ROUNDS: Final = ("（第二轮）", "（续）", " v2", "（补充）", "（终稿）")
MODELS: Final = (("internal-chat-v3", 60), ("internal-chat-v4", 25), ("qwen2.5-72b-instruct", 8), ("gpt-4o-mini", 7))
ROLES: Final = (("assistant", 86), ("user", 10), ("system", 2), ("tool", 2))

PEOPLE: Final = ("张三", "李四", "王五", "赵敏", "陈晨", "刘洋", "周婷", "吴昊", "孙悦", "郑凯")
TEAMS: Final = ("法务", "产品", "运维", "前端", "后端", "测试", "财务", "客服", "数据组", "安全组", "供应商", "客户")
OBJECTS: Final = ("付款条款", "违约条款", "第二条", "接口字段", "超时配置", "重试策略", "回滚方案", "索引", "缓存",
                  "锁文件", "版本号", "提交记录", "推送流程", "迁移脚本", "压测报告", "审计日志", "账单明细", "预算表",
                  "排期", "合同草案", "部署流水线", "连接池", "构建缓存", "权限配置", "告警规则", "灰度开关", "备份策略",
                  "工单分类", "验收标准", "接口文档", "发布清单", "值班记录", "慢查询日志", "对账脚本")
VERBS: Final = ("确认了", "复核了", "调整了", "补充了", "梳理了", "对比了", "排查了", "记录了", "评估了", "更新了",
                "拆分了", "合并了", "重新核对了")
RESULTS: Final = ("风险可控", "还需要再讨论一次", "这次先不改动", "影响范围有限", "周五前给出结论", "暂时没有发现新的问题",
                  "问题出在配置上", "下周由法务复核", "决定按方案二执行", "需要补一份说明", "可以先灰度一部分流量",
                  "等供应商回复后再定", "大家都同意这个做法", "先记下来，月底统一处理")
REASONS: Final = ("锁文件过期", "重试预算用完", "字段格式不一致", "缓存没有及时失效", "两个分支的版本冲突",
                  "超时阈值设得太短", "索引缺失导致全表扫描", "条款表述有歧义", "上游接口改了返回结构",
                  "配置没有同步到所有机器", "磁盘快满了", "证书过期")
WHEN: Final = ("今天上午", "昨天", "上周", "本周三", "会后", "发布前", "联调时", "复盘会上", "晚上值班时", "月初")
METRICS: Final = (("p95 延迟", " ms", 40, 3000), ("错误率", "%", 1, 12), ("缓存命中率", "%", 60, 99),
                  ("吞吐", " QPS", 200, 9000), ("耗时", " 秒", 2, 90), ("涉及金额", " 元", 300, 90000),
                  ("工单量", " 单", 5, 400), ("磁盘占用", " GB", 20, 900))
DEADLINES: Final = ("周五", "月底", "下周一", "发布", "评审会", "季度末")
EN_OBJECTS: Final = ("lock file", "deploy pipeline", "retry budget", "connection pool", "cache key", "index",
                     "migration script", "release branch", "payment webhook", "rate limiter", "build cache",
                     "feature flag", "cron job", "config map", "read replica", "health check")
EN_PEOPLE: Final = ("Alice", "Bob", "Carol", "Dave", "The on-call engineer", "The vendor", "QA")
EN_RESULTS: Final = ("nothing else needs to change", "the fix is already merged", "we will revisit it next week",
                     "the numbers look fine now", "the rollback plan stays as it is", "it only affects staging")
ERRORS: Final = ("connection reset by peer", "deadlock detected", "timeout after 30s", "409 Conflict",
                 "no space left on device", "permission denied", "lock held by pid 4242", "ECONNREFUSED")
COMMANDS: Final[tuple[tuple[str, str, tuple[str, ...]], ...]] = (  # tool, command line, results
    ("git", "git log --oneline -5", ("最近一次提交是回滚", "5 条提交，2 条来自 release 分支")),
    ("rg", "rg -n 超时 services/payment", ("14 处匹配", "3 处匹配，都在重试逻辑里")),
    ("kubectl", "kubectl get pods -n billing", ("3 个 pod 重启过", "全部 Running")),
    ("psql", "psql -c 'explain analyze select count(*) from invoices'", ("慢查询 1.8 s", "Seq Scan，缺索引")),
    ("pytest", "pytest -q tests/test_pay.py", ("12 passed, 1 failed", "31 passed", "exit 1: timeout")),
    ("du", "du -sh /var/lib/app", ("占用 41G", "占用 7.2G")),
    ("curl", "curl -s localhost:8080/healthz", ("返回 200，耗时 38 ms", "返回 503")),
    ("git", "git diff --stat main", ("差异集中在 2 个文件", "9 files changed")),
    ("redis-cli", "redis-cli info stats", ("命中率 91%", "evicted_keys 增长很快")),
    ("grep", "grep -c ERROR app.log", ("1432", "17")),
    ("search", "search 违约条款 合同", ("找到 2 份相关记录", "没有结果")),
    ("read_file", "read_file contracts/draft-v3.md", ("读取成功，共 6 页",)),
    ("web_fetch", "web_fetch wiki/pages/release-checklist", ("读取成功", "exit 1: timeout")),
    ("python", "python scripts/reconcile.py --month 06", ("对账差异 3 笔", "exit 0")),
    ("make", "make build", ("exit 0", "exit 1: timeout")),
)

ZH_TEMPLATES: Final = (
    "{team}{verb}{obj}，{result}。", "{obj}的问题是因为{reason}，{result}。", "关于{obj}，{person}认为{result}。",
    "{when}{person}{verb}{obj}和{obj2}。", "如果{obj}再出问题，就先回滚，再排查{obj2}。",
    "{obj}和{obj2}之间有冲突，{result}。", "目前{metric}是 {value}{unit}，{result}。",
    "{person}提出要先看{obj}，我们同意了。", "这一步不改{obj}，只补充{obj2}的说明。", "复核{obj}时发现{reason}。",
    "{team}希望{obj}在{deadline}前定下来。", "按现有流程，{obj}需要{team}确认后才能生效。",
    "我们决定下周由{team}复核{obj}，并在周五前给出结论。", "{obj}已经{verb}一遍，{result}。",
    "从{obj}看，{reason}的可能性更大。", "第{small}条里{obj}的写法和{obj2}不一致，需要统一。",
)
EN_TEMPLATES: Final = (
    "The deploy pipeline failed because the lock file was stale and the retry budget ran out.",
    "We checked the {eobj} and the {eobj2}; {eresult}.", "The {eobj} timed out after {num} ms, so the client retried {small} times.",
    "{eperson} will review the {eobj} before the next release.", "Rolling back the {eobj} fixed the error rate within {small} minutes.",
    "The root cause was a stale {eobj}, not the {eobj2}.", "Keep the {eobj} change small and ship it behind a feature flag.",
    "No data was lost; the {eobj} only delayed writes by {small} seconds.",
    "{small} of {num} checks passed; the failing ones touch the {eobj}.", "{eperson} confirmed that {eresult}.",
)
MIXED_TEMPLATES: Final = (
    "{person}把 {eobj} 的 timeout 从 {num} ms 调到了 {num2} ms。", "{obj}在 staging 上复现了，日志里是 `{error}`。",
    "用 `{cmd}` 看了一下，{result}。", "{eobj} 这块{result}，{person}会跟进。", "这次 retry 的上限改成 {small} 次，{result}。",
)
TODO_ITEMS: Final = ("复核{obj}", "补充{obj}的说明", "更新{obj}", "和{team}确认{obj}", "把{obj}同步到所有机器",
                     "回归测试{obj}", "给出{obj}的结论", "清理过期的{obj}", "fix the {eobj}", "write up the {eobj} change")
SUMMARY_CLAUSES: Final = ("梳理了三条付款风险", "确认了回滚方案", "定位到超时原因", "补齐了接口字段", "整理了压测数据",
                          "比对了两版条款", "排查了缓存失效", "拆分了发布步骤", "记录了值班问题", "核对了账单差异",
                          "评估了迁移风险", "更新了告警规则")
BOARD_TITLES: Final = ("发布前确认锁文件已释放", "重试要有预算上限", "条款比对先统一术语", "慢查询先看执行计划",
                       "缓存键要带版本号", "迁移脚本先在副本上跑", "告警要能直接行动", "灰度开关默认关闭",
                       "对账差异按金额排序处理", "接口字段变更先发公告", "值班交接写清未结事项", "备份要定期演练恢复",
                       "压测要用生产规模的数据", "权限按角色而不是按人", "依赖升级一次只动一个", "Pin the lock file in CI",
                       "Read the plan before adding an index", "Retry only idempotent calls", "合同附件单独归档",
                       "日志里不要打印完整账号")
BOARD_TYPES: Final = ("观点", "方法", "踩坑", "工具")
SCENARIOS: Final = ("发布流水线", "锁文件冲突", "合同审阅", "付款条款复核", "接口联调", "数据库迁移", "性能压测",
                    "值班排障", "成本复核", "客户访谈", "代码评审", "告警处理", "依赖升级", "权限变更")


@dataclass(frozen=True)
class Pool:
    """Sentences made once from the templates; paragraphs are drawn from it."""

    sentences: tuple[str, ...]
    mean_bytes: float


def _fill(rng: random.Random, template: str) -> str:
    metric, unit, lo, hi = rng.choice(METRICS)
    obj, obj2 = rng.sample(OBJECTS, 2)
    eobj, eobj2 = rng.sample(EN_OBJECTS, 2)
    return template.format(
        team=rng.choice(TEAMS), verb=rng.choice(VERBS), obj=obj, obj2=obj2, result=rng.choice(RESULTS),
        reason=rng.choice(REASONS), person=rng.choice(PEOPLE), when=rng.choice(WHEN), metric=metric, unit=unit,
        value=rng.randint(lo, hi), deadline=rng.choice(DEADLINES),
        num=rng.randrange(20, 5000), num2=rng.randrange(20, 5000), small=rng.randrange(2, 9), eobj=eobj, eobj2=eobj2,
        eresult=rng.choice(EN_RESULTS), eperson=rng.choice(EN_PEOPLE), error=rng.choice(ERRORS),
        cmd=rng.choice(COMMANDS)[1],
    )


def make_pool(rng: random.Random) -> Pool:
    out: list[str] = []
    for templates, n, end in ((ZH_TEMPLATES, 2600, ""), (EN_TEMPLATES, 900, " "), (MIXED_TEMPLATES, 700, "")):
        out += [_fill(rng, rng.choice(templates)) + end for _ in range(n)]
    rng.shuffle(out)
    return Pool(tuple(out), sum(len(s.encode("utf-8")) for s in out) / len(out))


def weighted(rng: random.Random, table: Sequence[tuple[str, int]]) -> str:
    return rng.choices([v for v, _ in table], [w for _, w in table])[0]


# ---- sessions -------------------------------------------------------------------------------

@dataclass
class Session:
    index: int
    sid: str
    ts: str
    moment: dt.datetime  # aware, in the session's offset
    title: str
    relpath: str
    tags: list[str]
    summary: str
    status: str
    tool_calls: list[tuple[str, str, str]] = field(default_factory=list)  # tool, command, result


@dataclass
class Doc:
    """A session file being assembled: frontmatter entries (key, lines), sections (heading line, text)."""

    fm: list[tuple[str, list[str]]] | None
    sections: list[tuple[str, str]]
    crlf: bool = False
    bom: bool = False

    def text(self) -> str:
        body = "\n\n".join(f"{h}\n\n{c}" if c else h for h, c in self.sections) + "\n"
        if self.fm is None:
            return body
        return "---\n" + "\n".join(line for _, lines in self.fm for line in lines) + "\n---\n\n" + body


class Writer:
    """Writes files under the output folder, creating folders once."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.made: set[str] = set()
        self.files = 0
        self.bytes = 0  # written, byte-order marks included

    def write(self, rel: str, text: str, *, bom: bool = False) -> None:
        folder = os.path.dirname(rel)
        if folder not in self.made:
            os.makedirs(self.root / folder, exist_ok=True)
            self.made.add(folder)
        data = (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8")
        with open(self.root / rel, "wb") as fh:
            fh.write(data)
        self.files += 1
        self.bytes += len(data)


def session_times(rng: random.Random, n: int) -> list[tuple[int, int]]:
    """(day number, second of the day) per session, in order: working hours, a few late ones."""
    per_day: dict[int, int] = {}
    for i in range(n):
        day = i * DAYS // n
        per_day[day] = per_day.get(day, 0) + 1
    out: list[tuple[int, int]] = []
    for day, count in per_day.items():
        seconds = sorted(rng.randrange(8 * 3600, 23 * 3600 + 1800) for _ in range(count))
        out += [(day, s) for s in seconds]
    return out


def paragraph(rng: random.Random, pool: Pool, budget: float) -> str:
    k = max(1, round(budget / pool.mean_bytes))
    return "".join(rng.choices(pool.sentences, k=k)).rstrip()


def short_sentence(rng: random.Random, pool: Pool, limit: int = 60) -> str:
    """One sentence of at most `limit` characters (a board entry's summary)."""
    while True:
        text = rng.choice(pool.sentences).strip()
        if len(text) <= limit:
            return text


def prose(rng: random.Random, pool: Pool, budget: float) -> list[str]:
    """Paragraphs of two to seven sentences that together take about `budget` bytes."""
    out: list[str] = []
    left = budget
    while left > pool.mean_bytes / 2 or not out:
        size = min(left, pool.mean_bytes * rng.randint(2, 7))
        out.append(paragraph(rng, pool, size))
        left -= size
    return out


def section_user(rng: random.Random, pool: Pool, budget: float) -> str:
    parts: list[str] = []
    if rng.random() < 0.25:
        parts.append("> " + paragraph(rng, pool, pool.mean_bytes * 2))
    if rng.random() < 0.3:
        items = [f"- {paragraph(rng, pool, pool.mean_bytes)}" for _ in range(rng.randint(2, 4))]
        parts.append("\n".join(items))
    used = sum(len(p.encode("utf-8")) for p in parts)
    return "\n\n".join(parts + prose(rng, pool, max(budget - used, pool.mean_bytes)))


def section_judgement(rng: random.Random, pool: Pool, budget: float) -> str:
    if rng.random() < 0.15:
        half = budget / 2
        return "\n\n".join([*prose(rng, pool, half / 3), "### 方案一", *prose(rng, pool, half * 2 / 3),
                            "### 方案二", *prose(rng, pool, half)])
    parts = prose(rng, pool, budget * 0.75)
    if rng.random() < 0.4:
        parts.append("\n".join(f"{i}. {paragraph(rng, pool, pool.mean_bytes)}" for i in range(1, rng.randint(3, 5))))
    else:
        parts += prose(rng, pool, budget * 0.25)
    return "\n\n".join(parts)


def section_tools(rng: random.Random, pool: Pool, budget: float, s: Session) -> str:
    lines: list[str] = []
    for _ in range(rng.randint(1, 5)):
        tool, cmd, results = rng.choice(COMMANDS)
        result = rng.choice(results)
        s.tool_calls.append((tool, cmd, result))
        lines.append(f"- `{cmd}` → {result}")
    parts = ["\n".join(lines)]
    if rng.random() < 0.35:
        tool, cmd, result = s.tool_calls[-1]
        output = [f"{rng.choice(('INFO', 'WARN', 'ERROR'))} {rng.randrange(10, 99)}:{rng.randrange(10, 59)} "
                  f"{rng.choice(ERRORS)}" for _ in range(rng.randint(2, 8))]
        parts.append("```text\n$ " + cmd + "\n" + "\n".join(output) + "\n```")
    used = sum(len(p.encode("utf-8")) for p in parts)
    return "\n\n".join(parts + prose(rng, pool, max(budget - used, pool.mean_bytes)))


def section_conclusion(rng: random.Random, pool: Pool, budget: float) -> str:
    parts = prose(rng, pool, budget)
    if rng.random() < 0.1:
        rows = [f"| {rng.choice(OBJECTS)} | {rng.choice(RESULTS)} |" for _ in range(rng.randint(2, 4))]
        parts.append("\n".join(["| 项目 | 结论 |", "| --- | --- |", *rows]))
    return "\n\n".join(parts)


def section_todo(rng: random.Random, pool: Pool, budget: float, s: Session) -> str:
    items: list[str] = []
    for _ in range(rng.randint(1, 6)):
        due = s.moment.date() + dt.timedelta(days=rng.randint(1, 14))
        box = "x" if rng.random() < 0.3 else " "
        task = _fill(rng, rng.choice(TODO_ITEMS))
        items.append(f"- [{box}] {task}（{rng.choice(PEOPLE)}，{due:%m-%d} 前）")
    parts = ["\n".join(items)]
    used = len(parts[0].encode("utf-8"))
    if budget - used > pool.mean_bytes:
        parts += prose(rng, pool, budget - used)
    return "\n\n".join(parts)


def body_size(rng: random.Random, mean: int) -> float:
    if rng.random() < 0.01:
        size = mean * rng.uniform(4, 7)
    else:
        sigma = 0.4
        size = mean * 0.955 * rng.lognormvariate(-sigma * sigma / 2, sigma)
    return min(max(size, mean / 5, 400.0), MAX_BODY)


def make_session(rng: random.Random, pool: Pool, i: int, day: int, second: int, h: str,
                 earlier: Sequence[str], size: int) -> tuple[Session, Doc]:
    offset = weighted(rng, [(o, w) for o, w in OFFSETS])
    sign = -1 if offset.startswith("-") else 1
    tz = dt.timezone.utc if offset == "Z" else dt.timezone(sign * dt.timedelta(hours=int(offset[1:3]), minutes=int(offset[4:])))
    moment = dt.datetime.combine(START + dt.timedelta(days=day), dt.time(), tz) + dt.timedelta(seconds=second)
    frac = f".{rng.randrange(1000):03d}" if rng.random() < 0.03 else ""
    ts = f"{moment:%Y-%m-%dT%H:%M:%S}{frac}{offset}"
    sid = f"{moment:%Y%m%d-%H%M}-{h}"
    base, topic_tags = rng.choice(TOPICS)
    title = base + (rng.choice(ROUNDS) if rng.random() < 0.15 else "")
    name = slug(title)
    relpath = f"sessions/{moment:%Y-%m-%d}/{moment:%H%M}-{h}" + (f"-{name}.md" if name else ".md")
    tags = rng.sample(topic_tags, rng.randint(1, len(topic_tags)))
    extra_tags = [t for t in ALL_TAGS if t not in tags]
    tags += rng.sample(extra_tags, rng.choice((0, 0, 1, 2)))
    summary = f"{base}：{rng.choice(SUMMARY_CLAUSES)}；待办：{_fill(rng, rng.choice(TODO_ITEMS))}"[:80]
    status = "open" if rng.random() < 0.25 else "closed"
    s = Session(i, sid, ts, moment, title, relpath, tags, summary, status)

    fm: list[tuple[str, list[str]]] = [("id", [f"id: {sid}"]), ("ts", [f"ts: {ts}"]),
                                        ("role", [f"role: {weighted(rng, ROLES)}"])]
    parent = rng.choice(earlier[-20:]) if earlier and rng.random() < 0.1 else None
    fm.append(("parent", [f"parent: {parent or 'null'}"]))
    if rng.random() < 0.015:
        fm.append(("tags", ["tags:", *(f"  - {t}" for t in tags)]))
    else:
        fm.append(("tags", [f"tags: [{', '.join(tags)}]"]))
    if rng.random() < 0.96:
        turns = rng.randint(1, 40)
        fm += [("model", [f"model: {weighted(rng, MODELS)}"]), ("turns", [f"turns: {turns}"]),
               ("tokens_in", [f"tokens_in: {rng.randint(200, 900) * turns + rng.randrange(100)}"]),
               ("tokens_out", [f"tokens_out: {rng.randint(50, 300) * turns + rng.randrange(100)}"])]
    fm += [("status", [f"status: {status}"]), ("summary", [f"summary: {yaml_str(summary)}"])]
    if name != title:
        fm.append(("title", [f"title: {yaml_str(title)}"]))
    if rng.random() < 0.06:
        for key, value in rng.sample([("project", "alpha"), ("client", "vscode"), ("lang", "zh-CN"),
                                      ("source", "cli"), ("machine", "laptop-02")], rng.randint(1, 2)):
            fm.append((key, [f"{key}: {value}"]))

    budget = body_size(rng, size)
    shares = [0.18, 0.30, 0.20, 0.22, 0.10]
    texts = [section_user(rng, pool, budget * shares[0]), section_judgement(rng, pool, budget * shares[1]),
             section_tools(rng, pool, budget * shares[2], s), section_conclusion(rng, pool, budget * shares[3]),
             section_todo(rng, pool, budget * shares[4], s)]
    sections = [(f"## {name_}", text) for name_, text in zip(SECTIONS, texts)]
    if rng.random() < 0.03:
        extra = ("## 附录", "\n".join(f"- {rng.choice(OBJECTS)}：{rng.choice(RESULTS)}" for _ in range(3)))
        sections.insert(rng.choice((3, 5)), extra)
    doc = Doc(fm, sections, crlf=rng.random() < 0.01, bom=rng.random() < 0.003)
    return s, doc


# ---- defects ------------------------------------------------------------------------------------

def _entry(doc: Doc, key: str) -> int:
    assert doc.fm is not None
    return next(i for i, (k, _) in enumerate(doc.fm) if k == key)


def _set(doc: Doc, key: str, line: str) -> None:
    assert doc.fm is not None
    doc.fm[_entry(doc, key)] = (key, [line])


def _value(doc: Doc, key: str) -> str:
    assert doc.fm is not None
    return doc.fm[_entry(doc, key)][1][0].split(": ", 1)[1]


def _keys(doc: Doc) -> list[str]:
    return [k for k, _ in doc.fm or []]


def _section(doc: Doc, rng: random.Random, names: Sequence[str] = SECTIONS) -> tuple[int, str]:
    name = rng.choice(list(names))
    return next(i for i, (h, _) in enumerate(doc.sections) if h == f"## {name}"), name


def d_no_frontmatter(doc: Doc, s: Session, rng: random.Random) -> None:
    doc.fm = None


def d_fullwidth_colon_key(doc: Doc, s: Session, rng: random.Random) -> None:
    key = rng.choice([k for k in ("role", "parent", "model", "turns", "tokens_in", "tokens_out", "status") if k in _keys(doc)])
    _set(doc, key, key + rng.choice(("： ", "：", " ： ")) + _value(doc, key))


def d_unquoted_colon(doc: Doc, s: Session, rng: random.Random) -> None:
    if rng.random() < 0.5:
        _set(doc, "summary", "summary: " + s.summary.replace("：", ": "))
    else:
        assert doc.fm is not None
        note = f"{rng.choice(('会议纪要', '第一阶段', '结论'))}: {rng.choice(RESULTS)}"
        doc.fm.insert(_entry(doc, "status"), ("note", [f"note: {note}"]))


def d_unquoted_hash(doc: Doc, s: Session, rng: random.Random) -> None:
    if rng.random() < 0.5:
        _set(doc, "summary", f"summary: 复盘了发布 #{rng.randrange(10, 300)} 的回滚")
    else:
        assert doc.fm is not None
        doc.fm.insert(_entry(doc, "status"), ("note", ["note: 讨论了三件事 # 预算、排期、人力"]))


def d_quoted_int(doc: Doc, s: Session, rng: random.Random) -> None:
    present = [k for k in ("turns", "tokens_in", "tokens_out") if k in _keys(doc)]
    q = rng.choice(("'", '"'))
    if present:
        key = rng.choice(present)
        _set(doc, key, f"{key}: {q}{_value(doc, key)}{q}")
    else:
        assert doc.fm is not None
        doc.fm.insert(_entry(doc, "status"), ("turns", [f"turns: {q}{rng.randint(1, 40)}{q}"]))


def d_tags_string(doc: Doc, s: Session, rng: random.Random) -> None:
    _set(doc, "tags", "tags: " + rng.choice((", ", "，", "、", ",")).join(s.tags))


def d_naive_ts(doc: Doc, s: Session, rng: random.Random) -> None:
    local = s.ts[:-1] if s.ts.endswith("Z") else s.ts[:-6]
    _set(doc, "ts", "ts: " + (local.replace("T", " ") if rng.random() < 0.5 else local))


def d_missing_field(doc: Doc, s: Session, rng: random.Random) -> None:
    assert doc.fm is not None
    del doc.fm[_entry(doc, rng.choice(("role", "tags", "status", "summary")))]


def d_heading_level(doc: Doc, s: Session, rng: random.Random) -> None:
    i, name = _section(doc, rng)
    doc.sections[i] = (rng.choice(("#", "###", "####")) + " " + name, doc.sections[i][1])


def d_heading_note(doc: Doc, s: Session, rng: random.Random) -> None:
    i, name = _section(doc, rng)
    note = rng.choice(("第一阶段", "初稿", "本周", "draft"))
    doc.sections[i] = (f"## {name}" + rng.choice(("：", ": ", " ")) + note, doc.sections[i][1])


def d_heading_synonym(doc: Doc, s: Session, rng: random.Random) -> None:
    i, name = _section(doc, rng, ("结论", "待办"))
    words = ("总结", "小结") if name == "结论" else ("后续", "后续事项", "下一步", "To-Do", "TODO", "next steps", "Next steps")
    doc.sections[i] = (f"## {rng.choice(words)}" + ("：" if rng.random() < 0.2 else ""), doc.sections[i][1])


def d_heading_no_hash(doc: Doc, s: Session, rng: random.Random) -> None:
    i, name = _section(doc, rng)
    doc.sections[i] = (name + rng.choice(("：", ":")), doc.sections[i][1])


def d_missing_section(doc: Doc, s: Session, rng: random.Random) -> None:
    del doc.sections[_section(doc, rng)[0]]


def d_truncated(doc: Doc, s: Session, rng: random.Random) -> None:
    """Marked here, done on the finished text by `truncate`."""


DEFECTS: Final[dict[str, Callable[[Doc, Session, random.Random], None]]] = {
    "no_frontmatter": d_no_frontmatter, "fullwidth_colon_key": d_fullwidth_colon_key,
    "unquoted_colon": d_unquoted_colon, "unquoted_hash": d_unquoted_hash, "quoted_int": d_quoted_int,
    "tags_string": d_tags_string, "naive_ts": d_naive_ts, "missing_field": d_missing_field,
    "heading_level": d_heading_level, "heading_note": d_heading_note, "heading_synonym": d_heading_synonym,
    "heading_no_hash": d_heading_no_hash, "missing_section": d_missing_section, "truncated": d_truncated,
}
KINDS: Final = tuple(DEFECTS)
_FENCE_LINE = re.compile(r"^```", re.M)


def truncate(text: str, rng: random.Random) -> str:
    """The text cut at a random point after its frontmatter, never inside a code block."""
    start = text.find("\n---\n", 4) + 5
    lo, hi = start + (len(text) - start) * 3 // 10, len(text) - 10
    cut = rng.randint(lo, max(lo, hi))
    fences = [m.start() for m in _FENCE_LINE.finditer(text)]
    for a, b in zip(fences[::2], fences[1::2]):
        if a < cut <= b + 3:
            cut = a
    return text[:cut]


# ---- the other files ------------------------------------------------------------------------

def board_text(rng: random.Random, pool: Pool, sessions: Sequence[Session]) -> str:
    n = min(max(len(sessions) // 50, 5), 400) if sessions else 0
    picked = sorted(rng.sample(range(len(sessions)), min(n, len(sessions))))
    keys: set[str] = set()
    entries: list[str] = []
    for k in picked:
        s = sessions[k]
        title = rng.choice(BOARD_TITLES)
        date = f"{s.moment:%Y-%m-%d}"
        while f"{title}@{date}" in keys:
            title += "（补充）"
        keys.add(f"{title}@{date}")
        fields = {"类型": rng.choice(BOARD_TYPES), "主题": rng.choice(s.tags),
                  "摘要": short_sentence(rng, pool),
                  "置信度": rng.choice(("high", "medium", "medium", "low")),
                  "状态": weighted(rng, (("active", 85), ("decaying", 10), ("retired", 5))),
                  "来源": s.relpath, "来源日期": date}
        scenarios = rng.sample(SCENARIOS, rng.randint(1, 3))
        core = "\n\n".join(prose(rng, pool, pool.mean_bytes * rng.randint(3, 8)))
        if rng.random() < 0.2:
            core += "\n\n```bash\n$ " + rng.choice(COMMANDS)[1] + "\n```"
        if rng.random() < 0.12:  # a person's edit: bold labels, full-width colons, scenarios inline
            lines = [f"**{label}**：{value}" for label, value in fields.items() if label != "状态"]
            lines.insert(3, "**场景**：" + "、".join(scenarios))
            entries.append(f"### {title}\n\n" + "\n".join(lines) + f"\n\n核心内容：\n\n{core}\n")
        else:
            head = [f"- {label}: {fields[label]}" for label in ("类型", "主题", "摘要")]
            tail = [f"- {label}: {fields[label]}" for label in ("置信度", "状态", "来源", "来源日期")]
            scen = ["- 场景:", *(f"  - {x}" for x in scenarios)]
            entries.append(f"### {title}\n\n" + "\n".join(head + scen + tail) + f"\n\n核心内容:\n\n{core}\n")
    trends = "\n".join(f"- {rng.choice(OBJECTS)}相关的记录最多，{rng.choice(RESULTS)}。" for _ in range(rng.randint(3, 6)))
    intro = ("这里记录跨会话仍然有用的经验：每条记录是一个三级标题，下面是它的字段和核心内容。\n"
             "开始一项任务前，先按场景和主题查找相关记录。")
    return f"# 学习看板\n\n## 长期说明\n\n{intro}\n\n## 长期趋势\n\n{trends}\n\n## 学习记录\n\n" + "\n".join(entries)


FACTS: Final[tuple[tuple[str, tuple[str, ...]], ...]] = (
    ("项目名", ("Alpha", "Alpha 二期")), ("默认时区", ("+08:00",)), ("主仓库", ("monorepo，main 分支受保护", "git.example.com/alpha")),
    ("发布窗口", ("周二、周四 14:00-16:00", "每周三晚上")), ("值班表", ("wiki/oncall，每周一轮换",)),
    ("法务联系人", PEOPLE), ("合同模板版本", ("v3", "v4（2025 年起）")), ("预算周期", ("按季度", "按月，月底复核")),
    ("测试环境", ("staging，每天凌晨重置数据",)), ("数据库版本", ("Postgres 15", "Postgres 16")),
    ("缓存集群", ("redis 3 主 3 从",)), ("监控面板", ("grafana/billing-overview",)), ("告警渠道", ("值班群，电话升级",)),
    ("文档位置", ("wiki/alpha",)), ("代码规范", ("提交前跑 make lint", "python 用 ruff 和 mypy")),
    ("评审规则", ("两人评审，改动超过 400 行要拆分",)), ("对账周期", ("每天 02:00", "每周一")),
    ("供应商", ("ACME，合同到 2026 年底",)), ("客服系统", ("工单按产品线分类",)), ("权限审批人", PEOPLE),
)
PREFERENCES: Final = (("语言", "中文"), ("回复风格", "先结论后细节"), ("列表", "少用枚举符号"), ("代码", "给完整命令"),
                      ("时间", "用北京时间显示"), ("称呼", "直接说事"), ("长度", "能短则短"), ("English", "keep terms in English"))
ENTITIES: Final = (("project-alpha", "Alpha 项目", "项目"), ("vendor-acme", "ACME 供应商", "供应商"),
                   ("person-zhangsan", "张三", "人员"), ("person-lisi", "李四", "人员"), ("team-legal", "法务组", "团队"),
                   ("system-billing", "账单系统", "系统"), ("system-search", "搜索服务", "系统"),
                   ("customer-beta", "Beta 客户", "客户"), ("repo-monorepo", "monorepo", "仓库"),
                   ("cluster-prod", "生产集群", "系统"))


def facts_text(rng: random.Random, n_sessions: int) -> str:
    count = min(len(FACTS), 8 + n_sessions // 500)
    lines = [f"- {key}: {rng.choice(values)}" for key, values in FACTS[:count]]
    return "# 长期事实\n\n" + "\n".join(lines) + "\n"


def entity_text(rng: random.Random, pool: Pool, name: str, kind: str, s: Session | None) -> str:
    lines = [f"# {name}", "", f"- 类型: {kind}", f"- 负责人: {rng.choice(PEOPLE)}"]
    if s is not None:
        lines.append(f"- 最近: {s.moment:%Y-%m-%d} {s.title}（{s.sid}）")
    lines += ["", "## 备注", "", *(f"- {paragraph(rng, pool, pool.mean_bytes)}" for _ in range(rng.randint(1, 4)))]
    return "\n".join(lines) + "\n"


def artifact_text(rng: random.Random, pool: Pool, s: Session) -> str:
    parts = [f"# {s.title} 附件", f"> 来源：{s.relpath}", *prose(rng, pool, rng.randint(1500, 5000))]
    rows = [f"| {rng.choice(OBJECTS)} | {rng.choice(PEOPLE)} | {rng.choice(RESULTS)} |" for _ in range(rng.randint(2, 6))]
    parts.append("\n".join(["| 事项 | 负责人 | 结论 |", "| --- | --- | --- |", *rows]))
    return "\n\n".join(parts) + "\n"


ERROR_MESSAGES: Final = ("stale lock on {rel}.lock removed (pid {pid} is gone)",
                         "sync: push rejected (non-fast-forward); fetched and integrated",
                         "sync: remote unreachable ({error}); will retry", "daemon: configuration reloaded (SIGHUP)")


# ---- driver -------------------------------------------------------------------------------------

def generate(out: Path, sessions: int, dirty: float, seed: int, size: int) -> tuple[int, int, int, int]:
    """Write the workspace; (sessions, files with a defect, files written, bytes written)."""
    master = random.Random(f"kbsync-gen/{seed}")
    dirt = random.Random(f"kbsync-gen/{seed}/dirty")
    pool = make_pool(random.Random(f"kbsync-gen/{seed}/pool"))
    w = Writer(out)
    made: list[Session] = []
    ids: list[str] = []
    seen_h7: set[str] = set()
    defects: list[tuple[str, str]] = []
    index_rows: list[tuple[dt.datetime, int, str]] = []
    tool_log: list[tuple[dt.datetime, int, str]] = []
    for i, (day, second) in enumerate(session_times(master, sessions)):
        rng = random.Random(master.getrandbits(64))
        raw = f"{rng.getrandbits(128):032x}"
        while h7(raw) in seen_h7:
            raw = f"{rng.getrandbits(128):032x}"
        seen_h7.add(h7(raw))
        s, doc = make_session(rng, pool, i, day, second, h7(raw), ids, size)
        u, kind, drng = dirt.random(), dirt.choice(KINDS), random.Random(dirt.getrandbits(64))
        if u < dirty:
            DEFECTS[kind](doc, s, drng)
            defects.append((s.relpath, kind))
        text = doc.text()
        if u < dirty and kind == "truncated":
            text = truncate(text, drng)
        if doc.crlf:
            text = text.replace("\n", "\r\n")
        w.write(s.relpath, text, bom=doc.bom)
        made.append(s)
        ids.append(s.sid)
        row = [f"{s.moment:%Y-%m-%d}", cell(s.title), ",".join(s.tags), cell(s.summary), s.relpath]
        if rng.random() < 0.02:  # saved twice: the first row has the summary of the first save
            first = row[:3] + [cell(s.summary.split("；")[0]), s.relpath]
            index_rows.append((s.moment, len(index_rows), "| " + " | ".join(first) + " |"))
            later = s.moment + dt.timedelta(minutes=rng.randint(5, 3 * 24 * 60))
            index_rows.append((later, len(index_rows), "| " + " | ".join(row) + " |"))
        else:
            index_rows.append((s.moment, len(index_rows), "| " + " | ".join(row) + " |"))
        at = s.moment
        for tool, cmd, result in s.tool_calls:
            at += dt.timedelta(seconds=rng.randint(2, 240))
            state = "error" if result.startswith("exit 1") else "ok"
            detail = cell(f"{cmd} → {result}")
            tool_log.append((at, len(tool_log), f"{utc_stamp(at)} | {s.sid} | {tool} | {state} | {detail}"))

    index_rows.sort()
    w.write("index.md", INDEX_HEADER + "".join(line + "\n" for _, _, line in index_rows))
    tool_log.sort()
    w.write("logs/tool-calls.md", "".join(line + "\n" for _, _, line in tool_log))
    errors: list[tuple[dt.datetime, str]] = []
    for s in master.sample(made, len(made) // 250):
        msg = master.choice(ERROR_MESSAGES).format(rel=s.relpath, pid=master.randrange(1000, 60000),
                                                   error=master.choice(ERRORS))
        at = s.moment + dt.timedelta(minutes=master.randint(1, 30))
        errors.append((at, f"{utc_stamp(at)} | {msg}"))
    errors.sort()
    w.write("logs/errors.md", "".join(line + "\n" for _, line in errors))

    w.write("LEARNING_BOARD.md", board_text(master, pool, made))
    w.write("memory/facts.md", facts_text(master, sessions))
    w.write("memory/preferences.md", "# 偏好\n\n" + "".join(f"- {k}: {v}\n" for k, v in PREFERENCES))
    for slug_, name, kind in ENTITIES[: min(len(ENTITIES), 2 + sessions // 300)]:
        w.write(f"memory/entities/{slug_}.md", entity_text(master, pool, name, kind, master.choice(made) if made else None))
    names: set[str] = set()
    for s in sorted(master.sample(made, len(made) // 100), key=lambda x: x.index):
        rel = f"artifacts/{s.moment:%Y-%m-%d}/{slug(s.title) or 'artifact'}-{s.sid[-7:]}.md"
        if rel not in names:
            names.add(rel)
            w.write(rel, artifact_text(master, pool, s))
    w.write("candidates/.gitkeep", "")
    w.write(".gitignore", GITIGNORE)
    w.write(".gitattributes", GITATTRIBUTES)

    tsv = out / ".defects.tsv"
    if defects:
        tsv.write_bytes("".join(f"{rel}\t{kind}\n" for rel, kind in sorted(defects)).encode("utf-8"))
    elif tsv.exists():
        tsv.unlink()
    return sessions, len(defects), w.files, w.bytes


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path, help="the workspace folder to write (created if missing)")
    ap.add_argument("--sessions", type=int, default=1000, help="number of session files (default 1000)")
    ap.add_argument("--dirty", type=float, default=0.0, help="fraction of session files with a defect (0 to 1)")
    ap.add_argument("--seed", type=int, default=7, help="random seed (default 7)")
    ap.add_argument("--size", type=int, default=6800, help="mean session body size in bytes (default 6800)")
    a = ap.parse_args(argv)
    if a.sessions < 0 or not 0.0 <= a.dirty <= 1.0 or a.size < 1:
        ap.error("--sessions must be >= 0, --dirty between 0 and 1, --size >= 1")
    a.out.mkdir(parents=True, exist_ok=True)
    n, bad, files, size = generate(a.out, a.sessions, a.dirty, a.seed, a.size)
    print(f"{n} sessions, {bad} with defects, {files} files ({size / 1e6:.1f} MB) in {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
