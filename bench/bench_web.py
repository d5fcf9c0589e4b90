"""The web board's pages in a real browser (Debian's chromium driven by Playwright): time to first byte and
full load of /board with 1,000 entries and of /sessions on the 12,000-session corpus, each page served by
`kbsync web serve` on a workspace committed and indexed beforehand, the median of several loads.

    python bench/bench_web.py [--sessions 12000] [--entries 1000] [--runs 9]
    python bench/bench_web.py --every-page [--runs 9]

Printed per page: the median and the slowest of the browser's Navigation Timing figures, in ms:
server (requestStart to responseStart: the server's time to the first byte, over loopback), usable
(to DOMContentLoaded: the page can be read and used) and load (to the load event: styles and images in).
The sessions' listing is measured twice: loads back to back, and loads more than FRESH_S apart, each of
which first has the index catch up with the 12,000 files (kbsync.app.browse). Targets: server under
200 ms, usable under 1 s.

--every-page: every page of the board on one workspace at a person's real size (2,000 generated sessions,
500 board entries, 300 candidates from one scan, the corpus's memory and MEMORY_FACTS facts more in ENTITY_FILES
entity files more (about 380 facts in 22 files); committed, with the search index built, kept under
--cache after the first run), each loaded `runs` times by the daemon (`kbsync run`): p50 and p95 of the load
(to the load event), the server's CPU time for it (the daemon's and its git processes', which the other
work on a shared machine barely changes) and the page's bytes. Targets: every page p95 at most 300 ms, the largest page at most
300 KB. The load average is printed before and after (the times depend on it). The semantic leg is off ([search] semantic = false) unless --semantic, which builds the semantic index
too before serving (about an hour for these 2,000 sessions on two busy cores; a daemon started without it
would spend that time building it while the pages are measured).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from common import KBSYNC, REPO, corpus

sys.path.insert(0, str(REPO / "tests"))

from helpers import browser as b  # noqa: E402
from helpers.web import WebServer, configure, server_env  # noqa: E402

if TYPE_CHECKING:
    from playwright.sync_api import Browser

TIMING = """() => { const n = performance.getEntriesByType('navigation')[0];
  return [n.responseStart - n.requestStart, n.domContentLoadedEventEnd - n.startTime, n.loadEventEnd - n.startTime]; }"""
TYPES = ("观点", "方法", "踩坑", "工具")
CONFIDENCES = ("high", "medium", "low")


def board_text(entries: int) -> str:
    """LEARNING_BOARD.md with `entries` entries as kbsync writes them."""
    from kbsync.app.board import render_entry
    from kbsync.core.boardentry import Entry

    start = dt.date(2025, 1, 1)
    rendered = [render_entry(Entry(
        title=f"经验 {n}：发布前检查锁文件", type=TYPES[n % 4], topic=f"主题{n % 12}",
        summary=f"第 {n} 条：锁文件未释放导致发布失败", core_content=f"发布前检查 `.lock` 文件（{n}）。\n\n- 超时后清理",
        source=f"sessions/2025-06-11/1432-a1b2c3d-x{n}.md", source_date=(start + dt.timedelta(days=n % 700)).isoformat(),
        scenarios=("发布流水线", f"场景{n % 7}"), confidence=CONFIDENCES[n % 3])) for n in range(entries)]
    return ("# LEARNING_BOARD\n\n## 长期说明\n\n经验看板：跨会话保留的观点、方法、踩坑与工具。\n\n## 长期趋势\n\n"
            "- 锁文件与发布相关的踩坑最多。\n\n## 学习记录\n\n" + "\n".join(rendered))


def prepared(root: Path, home: Path) -> None:
    """Serve-ready: configured, initialised, committed, the search index built (the daemon keeps these)."""
    configure(root, "enabled = true\n")
    env = server_env(home)
    for args in (("init",), ("commit",), ("index", "rebuild", "--search")):
        subprocess.run([*KBSYNC, "-w", str(root), *args], check=True, stdout=subprocess.DEVNULL, env=env)


def measure(browser: Browser, server: WebServer, path: str, runs: int, pause: float = 0.0,
            before: Callable[[], None] = lambda: None) -> list[list[float]]:
    """Navigation Timing of `runs` loads of `path` (after one load not counted), in one logged-in context,
    `pause` seconds apart, `before()` called before each."""
    page = b.open_logged_in(browser, server)
    page.set_default_timeout(120_000)
    try:
        page.goto(server.url + path)
        out = []
        for _ in range(runs):
            time.sleep(pause)
            before()
            page.goto(server.url + path, wait_until="load")
            out.append(page.evaluate(TIMING))
        return out
    finally:
        page.context.close()


def report(what: str, timings: list[list[float]]) -> None:
    cols = list(zip(*timings))
    cells = [f"{name} {statistics.median(c):.0f} ms (max {max(c):.0f})" for name, c in zip(("server", "usable", "load"), cols)]
    print(f"{what}: " + ", ".join(cells) + f"; {len(timings)} loads")


def run_page(browser: Browser, root: Path, home: Path, what: str, paths: list[str], runs: int) -> None:
    """Each of `paths` loaded back to back, then (for the sessions' listing) FRESH_S apart, so that each
    load asks for a background catch-up of the index with the files (kbsync.app.catchup)."""
    from kbsync.app.catchup import FRESH_S

    prepared(root, home)
    server = WebServer(root, home)
    try:
        for path in paths:
            report(f"{path} ({what}), loads back to back", measure(browser, server, path, runs))
            if path.startswith("/board"):
                board = root / "LEARNING_BOARD.md"
                report(f"{path} ({what}), the file changed before each load (parsed again)",
                       measure(browser, server, path, runs, before=lambda: os.utime(board)))
            if path.startswith("/sessions"):
                report(f"{path} ({what}), loads {FRESH_S + 0.2:g} s apart", measure(browser, server, path, runs,
                                                                                   FRESH_S + 0.2))
    finally:
        server.stop(timeout=60)


EVERY_PAGE = ("/board", "/board?q=%E9%94%81%E6%96%87%E4%BB%B6", "/board/entry?key={key}", "/board/edit?key={key}",
              "/board/new", "/candidates", "/candidates?page_no=6", "/sessions", "/sessions?q=%E9%83%A8%E7%BD%B2",
              "/sessions/{sid}", "/memory", "/memory?q=%E5%8F%91%E5%B8%83", "/memory?page=8", "/conflicts", "/status",
              "/stats", "/review")
MEMORY_FACTS, ENTITY_FILES, ENTITY_KEYS = 240, 12, ("负责人", "仓库", "上线日期", "状态", "备注")
FACT_TOPICS = ("发布窗口", "回滚策略", "值班安排", "依赖版本", "告警阈值", "数据保留", "评审规则", "测试环境")


def add_memory(root: Path) -> None:
    """MEMORY_FACTS facts more in memory/facts.md, 20 preferences more, and ENTITY_FILES entity files of
    ENTITY_KEYS each, as `kbsync memory set` writes them (after the corpus's own facts)."""
    from kbsync.core.facts import entity_relpath, fact_line

    def append(rel: str, lines: list[str]) -> None:
        path = root / rel
        path.write_text(path.read_text(encoding="utf-8").rstrip("\n") + "\n" + "".join(lines), encoding="utf-8")

    append("memory/facts.md", [fact_line(f"{FACT_TOPICS[n % 8]} {n:03d}", f"第 {n} 条：{FACT_TOPICS[n % 8]}按"
                                         f"{'发布' if n % 3 == 0 else '变更'}清单执行，负责人每季度复核一次")
                               for n in range(MEMORY_FACTS)])
    append("memory/preferences.md", [fact_line(f"偏好 {n:02d}", f"回答先给结论（{n}），再给可以直接运行的命令")
                                     for n in range(20)])
    for e in range(ENTITY_FILES):
        name = f"服务 {e:02d}"
        (root / entity_relpath(name)).write_text(f"# {name}\n\n" + "".join(
            fact_line(k, f"{name}的{k}：见 wiki/services/{e:02d}") for k in ENTITY_KEYS), encoding="utf-8")


def every_page_workspace(tmp: Path, cache: Path, sessions: int, entries: int, candidates: int,
                         semantic: bool) -> tuple[Path, str, str]:
    """A copy of the workspace `prepared_every` keeps in `cache`; a session's id and an entry's key (URL-encoded)."""
    import json
    from urllib.parse import quote

    from kbsync.core import protocol

    kept = cache / (f"{corpus(cache, sessions).name}-every-{entries}-{candidates}-{MEMORY_FACTS}"
                    f"{'-semantic' if semantic else ''}")
    if not (kept / "ready").exists():
        shutil.rmtree(kept, ignore_errors=True)
        prepared_every(kept, cache, sessions, entries, candidates, semantic)
        (kept / "ready").write_text("", encoding="utf-8")
    root = tmp / "every"
    shutil.copytree(kept / "every", root, symlinks=True)  # times kept: the indexes see every file as indexed
    listed = subprocess.run([*KBSYNC, "-w", str(root), "search", "tag:部署", "--json", "--top", "1"], check=True,
                            capture_output=True, text=True, env=server_env(tmp)).stdout
    sid = protocol.id_from_relpath(json.loads(listed)[0]["path"])
    assert sid is not None, listed
    return root, sid, quote("经验 0：发布前检查锁文件@2025-01-01", safe="")


def prepared_every(out: Path, cache: Path, sessions: int, entries: int, candidates: int, semantic: bool) -> None:
    """The generated sessions with `entries` board entries, `candidates` scanned items and memory (add_memory), committed, with
    the search index built, and with `semantic` the semantic index too (else the semantic leg turned off)."""
    root = out / "every"
    out.mkdir(parents=True)
    shutil.copytree(corpus(cache, sessions), root, symlinks=True)
    env = server_env(out)
    subprocess.run([*KBSYNC, "-w", str(root), "init"], check=True, stdout=subprocess.DEVNULL, env=env)
    (root / "LEARNING_BOARD.md").write_text(board_text(entries), encoding="utf-8")
    add_memory(root)
    notes = out / "notes"  # the scan's source, named in the config by this path
    notes.mkdir()
    for n in range(candidates):
        (notes / f"n{n:03d}.md").write_text(f"# 笔记 {n}\n\n重试要有上限，第 {n} 次。\n", encoding="utf-8")
    search = "" if semantic else "[search]\nsemantic = false\n"
    configure(root, "enabled = true\n" + search, daemon='commit_every = "1h"')
    with (root / ".kbsync" / "config.toml").open("a", encoding="utf-8") as f:
        f.write(f'\n[[scan.sources]]\nname = "notes"\npath = "{notes}"\n')
    for args in (("scan",), ("commit",), ("index", "rebuild", "--search"),
                 *([("index", "rebuild", "--semantic")] if semantic else [])):
        subprocess.run([*KBSYNC, "-w", str(root), *args], check=True, stdout=subprocess.DEVNULL, env=env, cwd=root)


def cpu_s(pid: int) -> float:
    """CPU seconds process `pid` and its waited-for children (git) have used so far (/proc/PID/stat: utime,
    stime, cutime, cstime): a page's cost to the server, which other work on the machine barely changes."""
    fields = Path(f"/proc/{pid}/stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def load_average() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg()) + " (1, 5, 15 min)"


def run_every_page(browser: Browser, tmp: Path, cache: Path, runs: int, semantic: bool) -> None:
    from kbsync.app.memory import browse, memory_files
    from kbsync.store.workspace import Workspace

    root, sid, key = every_page_workspace(tmp, cache, 2000, 500, 300, semantic)
    ws = Workspace(root)
    every, searched = browse(ws), browse(ws, q="发布")
    print(f"memory: {every.total} facts in {len(memory_files(ws))} files, {every.pages} pages; 发布 matches "
          f"{searched.matched} ({searched.pages} pages); {load_average()}")
    server = WebServer(root, tmp, command=("run",))
    worst_p95, largest = 0.0, (0, "")
    try:
        page = b.open_logged_in(browser, server)
        page.set_default_timeout(120_000)
        for path in (p.format(key=key, sid=sid) for p in EVERY_PAGE):
            page.goto(server.url + path)  # one load not counted
            loads, cpu, size = [], [], 0
            for _ in range(runs):
                before = cpu_s(server.proc.pid)
                answer = page.goto(server.url + path, wait_until="load")
                assert answer is not None and answer.ok, f"{path}: {answer.status if answer else 'no answer'}"
                cpu.append((cpu_s(server.proc.pid) - before) * 1000)
                size = len(answer.body())
                loads.append(page.evaluate(TIMING)[2])
            p95 = statistics.quantiles(loads, n=20, method="inclusive")[18]
            worst_p95, largest = max(worst_p95, p95), max(largest, (size, path))
            print(f"{path}: load p50 {statistics.median(loads):.0f} ms, p95 {p95:.0f} ms; server CPU p50 "
                  f"{statistics.median(cpu):.0f} ms, p95 {statistics.quantiles(cpu, n=20, method='inclusive')[18]:.0f}"
                  f" ms; {size / 1024:.0f} KB")
        page.context.close()
    finally:
        server.stop(timeout=60)
    print(f"every page: the slowest p95 {worst_p95:.0f} ms (target 300), the largest page {largest[0] / 1024:.0f} KB "
          f"({largest[1]}; target 300 KB); {runs} loads each; semantic leg {'on' if semantic else 'off'}; "
          f"{load_average()}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=12000)
    ap.add_argument("--entries", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=9, help="loads of each page measured (after one not counted)")
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "kbsync-bench")
    ap.add_argument("--only", choices=("board", "sessions"), help="measure only that page")
    ap.add_argument("--every-page", action="store_true", help="every page at a person's size (see above)")
    ap.add_argument("--semantic", action="store_true", help="--every-page with the semantic index built and on")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="kbsync-web-") as tmp_name:
        tmp = Path(tmp_name)
        for browser in b.launch():  # one browser for every page, closed when the loop ends
            if a.every_page:
                run_every_page(browser, tmp, a.cache, a.runs, a.semantic)
                continue
            if a.only != "sessions":
                board = tmp / "board"
                subprocess.run([*KBSYNC, "-w", str(board), "init"], check=True, stdout=subprocess.DEVNULL,
                               env=server_env(tmp))
                (board / "LEARNING_BOARD.md").write_text(board_text(a.entries), encoding="utf-8")
                run_page(browser, board, tmp, f"{a.entries} entries", ["/board"], a.runs)
            if a.only != "board":
                sessions = tmp / "sessions"
                shutil.copytree(corpus(a.cache, a.sessions), sessions, symlinks=True)
                run_page(browser, sessions, tmp, f"{a.sessions} sessions", ["/sessions", "/sessions?tag=部署"], a.runs)

if __name__ == "__main__":
    main()
