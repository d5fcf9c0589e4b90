"""The cross-language set of the LoCoMo bench (bench/data/crosslang.json): Chinese questions about English
LoCoMo sessions, and English questions about short Chinese work sessions written for the set.

The file holds:
- zh_about_en: {conv, sessions, question}: a Chinese question about conversation `conv` of LoCoMo, answered
  by the session numbers listed (people's names stay as written; nothing else is in English);
- zh_sessions: {key, date, title, tags, summary, sections}: Chinese sessions as `kbsync session save` takes
  them (the protocol's section headings);
- en_about_zh: {session, question}: an English question answered by the Chinese session `session` (a key).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CJK = re.compile("[\u3400-\u9fff]")
DATA = Path(__file__).resolve().parent / "data" / "crosslang.json"


@dataclass(frozen=True)
class ZhAboutEn:
    conv: int
    sessions: tuple[int, ...]
    question: str


@dataclass(frozen=True)
class EnAboutZh:
    session: str  # a zh_sessions key
    question: str


@dataclass(frozen=True)
class CrossSet:
    zh_about_en: tuple[ZhAboutEn, ...]
    zh_sessions: dict[str, dict[str, Any]]  # key -> its entry
    en_about_zh: tuple[EnAboutZh, ...]


class CrossError(Exception):
    """The cross-language file is wrong: the message names the file and entry."""


def load(path: Path = DATA) -> CrossSet:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        zh_en = tuple(ZhAboutEn(int(x["conv"]), tuple(int(n) for n in x["sessions"]), str(x["question"]))
                      for x in raw["zh_about_en"])
        sessions = {str(s["key"]): s for s in raw["zh_sessions"]}
        en_zh = tuple(EnAboutZh(str(x["session"]), str(x["question"])) for x in raw["en_about_zh"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CrossError(f"{path}: cannot read the cross-language set ({type(exc).__name__}: {exc})") from exc
    unknown = sorted({q.session for q in en_zh} - set(sessions))
    if unknown:
        raise CrossError(f"{path}: en_about_zh names sessions that zh_sessions lacks: {', '.join(unknown)}")
    return CrossSet(zh_en, sessions, en_zh)


def payload(entry: dict[str, Any]) -> dict[str, Any]:
    """What `kbsync session save` is given for a Chinese session of the set."""
    date = str(entry["date"])
    digest = hashlib.sha256(f"crosslang {entry['key']}".encode()).hexdigest()[:7]
    return {
        "session_id": f"{date[:10].replace('-', '')}-{date[11:16].replace(':', '')}-{digest}",
        "title": entry["title"],
        "ts": f"{date}:00+08:00",
        "role": "user",
        "tags": list(entry.get("tags") or []),
        "summary": entry["summary"],
        "sections": dict(entry["sections"]),
    }
