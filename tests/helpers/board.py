"""Shared test data for the knowledge board."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

from kbsync.core.board import Entry


def entry(**over: Any) -> Entry:
    base: dict[str, Any] = dict(
        title="发布前确认锁文件", type="踩坑", topic="部署", summary="锁文件未释放导致发布失败",
        core_content="发布前检查 `.lock` 文件。\n\n- 超时后清理", source="sessions/2025-06-11/1432-a1b2c3d-x.md",
        source_date="2025-06-11", scenarios=("发布流水线", "锁文件冲突"), confidence="high",
    )
    base.update(over)
    return Entry(**base)


def payload(**over: Any) -> dict[str, Any]:
    data = entry().as_dict()
    data.pop("status")
    data.update(over)
    return data


HAND_EDITED = """# 学习看板

## 长期说明

说明文字。

## 长期趋势

## 学习记录


### 重试要设上限


置信度：medium
- **Topic**：git
类型: 方法
- 场景： 推送失败、网络抖动，CI
- summary: 推送失败时指数退避，最多五次
- Source Date: 2025-05-02
- 来源: sessions/2025-05-02/0930-1234567-推送.md



核心内容：

推送失败时不要无限重试。

### Tool pick
- type: 工具
- topic: search
- summary: rg 比 grep 快
- source: notes
- source_date: 2025-01-01
- scenarios:
    - 全文搜索
- confidence: low
- status: decaying
- core content: rg is the default.
More lines.
"""


def git(root: Path, *args: str, when: str | None = None) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t")
    if when:
        env.update(GIT_AUTHOR_DATE=when, GIT_COMMITTER_DATE=when)
    return subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True, text=True).stdout


def git_workspace(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    (root / ".gitignore").write_text(".kbsync/\n*.tmp\n*.lock\n", encoding="utf-8")
    return root
