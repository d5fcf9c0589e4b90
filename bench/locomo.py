"""The LoCoMo data set read into conversations, sessions and questions, and a session made the JSON that
`kbsync session save` takes.

LoCoMo (the public snap-research/locomo repository, data/locomo10.json) is a list of samples, each with
`conversation` (speaker_a, speaker_b, session_N_date_time, session_N: turns {speaker, dia_id "D1:3", text,
and for a shared photo blip_caption}), `session_summary` (session_N_summary) and `qa` (question, answer,
evidence ["D1:3"], category). Categories: 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5
adversarial (no answer in the conversation; left out). A few evidence ids in the data are malformed
("D:11:26", "D10:19 "): the session and turn numbers are read from them as written.

A session is saved as a person would save a chat: title "A and B, session N", the date of the session as
`ts`, the data set's session summary as `summary`, and the turns, one line each ("Speaker: text", a shared
photo as "[photo: caption]"), as the section "Conversation". The dia_id stays recoverable: each turn's
text is kept here with its id, so a hit's text tells which turns it holds.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
SECTION = "Conversation"
_EVIDENCE = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")
_SESSION_KEY = re.compile(r"^session_(\d+)$")
_SPACE = re.compile(r"\s+")


class DataError(Exception):
    """The data file is not LoCoMo-shaped: the message names the file and field."""


@dataclass(frozen=True)
class Turn:
    dia_id: str  # "D3:7"
    speaker: str
    text: str  # the turn's words (and the caption of a photo it shares), as saved

    @property
    def line(self) -> str:
        return f"{self.speaker}: {self.text}"


@dataclass(frozen=True)
class Session:
    conv: int  # the conversation's index in the file
    number: int  # N of session_N
    when: dt.datetime
    turns: tuple[Turn, ...]
    summary: str

    @property
    def label(self) -> str:
        return f"conversation {self.conv}, session {self.number}"


@dataclass(frozen=True)
class Question:
    conv: int
    text: str
    answer: str
    category: int
    evidence: tuple[str, ...]  # dia_ids, normalised ("D3:7")

    @property
    def sessions(self) -> frozenset[int]:
        return frozenset(session_of(d) for d in self.evidence)


@dataclass(frozen=True)
class Conversation:
    index: int
    speakers: tuple[str, str]
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]

    def turn(self, dia_id: str) -> Turn | None:
        for s in self.sessions:
            for t in s.turns:
                if t.dia_id == dia_id:
                    return t
        return None


def session_of(dia_id: str) -> int:
    return int(dia_id[1:].split(":", 1)[0])


def normalise(text: str) -> str:
    """Text compared for containment: whitespace runs made one space, case folded."""
    return _SPACE.sub(" ", text).strip().casefold()


def load(path: Path) -> list[Conversation]:
    """Every conversation of the file, in file order; DataError naming the field that is wrong."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"{path}: cannot read it as JSON ({exc}); give the path of locomo10.json") from exc
    if not isinstance(raw, list):
        raise DataError(f"{path}: expected a list of samples (LoCoMo's locomo10.json)")
    return [_conversation(path, i, s) for i, s in enumerate(raw)]


def _conversation(path: Path, i: int, sample: Any) -> Conversation:
    where = f"{path}: sample {i}"
    if not isinstance(sample, dict) or not isinstance(sample.get("conversation"), dict):
        raise DataError(f"{where}: no 'conversation' object")
    conv: dict[str, Any] = sample["conversation"]
    summaries = sample.get("session_summary") or {}
    numbers = sorted(int(m.group(1)) for k in conv if (m := _SESSION_KEY.match(k)))
    sessions = tuple(_session(where, i, n, conv, summaries) for n in numbers if conv[f"session_{n}"])
    questions = tuple(q for q in (_question(where, i, j, x) for j, x in enumerate(sample.get("qa") or [])) if q)
    return Conversation(i, (str(conv.get("speaker_a", "")), str(conv.get("speaker_b", ""))), sessions, questions)


def _session(where: str, conv: int, n: int, raw: dict[str, Any], summaries: dict[str, Any]) -> Session:
    key = f"session_{n}"
    turns = []
    for j, t in enumerate(raw[key]):
        if not isinstance(t, dict) or not all(isinstance(t.get(f), str) for f in ("speaker", "dia_id", "text")):
            raise DataError(f"{where}: {key}[{j}]: a turn needs speaker, dia_id and text strings")
        text = t["text"].strip()
        if isinstance(t.get("blip_caption"), str) and t["blip_caption"].strip():
            text = f"{text} [photo: {t['blip_caption'].strip()}]".strip()
        turns.append(Turn(_dia_id(t["dia_id"]) or t["dia_id"], t["speaker"].strip(), _SPACE.sub(" ", text)))
    return Session(conv, n, parse_when(where, key, raw.get(f"{key}_date_time")), tuple(turns),
                   str(summaries.get(f"{key}_summary") or "").strip())


def parse_when(where: str, key: str, value: Any) -> dt.datetime:
    """LoCoMo's session date ("1:56 pm on 8 May, 2023")."""
    text = _SPACE.sub(" ", str(value or "")).strip()
    for fmt in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%I:%M %p on %B %d, %Y"):
        try:
            return dt.datetime.strptime(text, fmt)
        except ValueError:
            pass
    raise DataError(f"{where}: {key}_date_time {text!r}: expected a date such as '1:56 pm on 8 May, 2023'")


def _dia_id(value: str) -> str | None:
    m = _EVIDENCE.search(value)
    return f"D{int(m.group(1))}:{int(m.group(2))}" if m else None


def _question(where: str, conv: int, j: int, raw: Any) -> Question | None:
    if not isinstance(raw, dict) or not isinstance(raw.get("question"), str):
        raise DataError(f"{where}: qa[{j}]: a question needs a 'question' string")
    category = raw.get("category")
    if category not in CATEGORIES:
        return None
    evidence = tuple(dict.fromkeys(d for e in raw.get("evidence") or [] if isinstance(e, str)
                                   for d in [_dia_id(e)] if d))
    if not evidence:
        return None
    return Question(conv, raw["question"].strip(), str(raw.get("answer", "")), int(category), evidence)


def session_id(s: Session) -> str:
    """The protocol's session id (YYYYMMDD-HHMM-sha7), stable for the conversation and session."""
    digest = hashlib.sha256(f"locomo {s.conv} {s.number}".encode()).hexdigest()[:7]
    return f"{s.when:%Y%m%d-%H%M}-{digest}"


def payload(s: Session, speakers: tuple[str, str]) -> dict[str, Any]:
    """What `kbsync session save` is given for session `s`."""
    return {
        "session_id": session_id(s),
        "title": f"{speakers[0]} and {speakers[1]}, session {s.number}",
        "ts": s.when.strftime("%Y-%m-%dT%H:%M:00+00:00"),
        "role": "user",
        "summary": s.summary,
        "sections": {SECTION: "\n".join(t.line for t in s.turns)},
    }


def parse_range(text: str) -> list[int]:
    """'0-4' or '0,2,5-6' as a sorted list of indexes; ValueError otherwise."""
    out: set[int] = set()
    for part in text.split(","):
        lo, _, hi = part.strip().partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return sorted(out)
