"""The learned half of the embedded-instruction detector: a logistic regression over a passage's embedding. Pure.

The semantic index already embeds each record's units (multilingual-e5-small, see kbsync.retrieval.semanticunits;
"passage: " prefix, L2-normalised); this scores such a vector against the weights stored in
kbsync/data/injection-classifier.json, written by bench/train_injection.py from the labelled sets in
tests/data/ (never from the held-out split). It catches instructions by meaning where no rule's phrasing
matches; the rules (kbsync.core.detect.injection) stay for decoded and disguised text and exact known phrasings,
and a passage flagged by either is flagged. Scoring is a dot product and a sigmoid over 384 numbers: no
numpy here, and the model itself lives in kbsync.retrieval.semanticmodel.

A verdict is given once, at build time, to a unit's vector; where text is handed on (a page of a file, a line
of a context pack, a search hit's summary) it is found again by `Learned`: the lines of the flagged units,
each withheld wherever it appears, found by its first ANCHOR characters and as far as it goes on there (a
summary cut short or joined into one line is still found; the last line of a head cut short when it was
embedded is withheld to the end of its line).
"""

from __future__ import annotations

import json
import math
from array import array
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Final, Mapping, Sequence

from ahocorasick_rs import AhoCorasick

from kbsync.core.detect import injection
from kbsync.core.detect.injection import AUTOMATON, EXCERPT_CHARS, Flag
from kbsync.core.detect.normalize import visible
from kbsync.errors import KbsyncError

STORE: Final = Path(__file__).parents[2] / "data" / "injection-classifier.json"
FAMILY: Final = "classifier"
WHY: Final = "reads as an instruction to an AI by its meaning (learned classifier over the passage's embedding)"
MIN_LINE: Final = 10  # characters: a shorter line of a flagged unit ("Thanks!") is not looked for, being everywhere
ANCHOR: Final = 48  # characters of a line it is found by


@dataclass(frozen=True)
class Classifier:
    """Weights over one model's vectors: `model` must be the embedding model's name the vectors come from."""

    model: str
    weights: tuple[float, ...]
    bias: float
    threshold: float  # a probability: a passage at or above it is flagged
    trained_on: str  # the digest of the training set (bench/train_injection.py)

    def probability(self, vector: Sequence[float]) -> float:
        """The probability that the passage embedded as `vector` is an instruction planted for a model."""
        if len(vector) != len(self.weights):
            raise KbsyncError(f"the instruction classifier takes {len(self.weights)}-dimensional vectors, "
                              f"not {len(vector)}; rebuild the semantic index with the model it names ({self.model})")
        z = self.bias + math.fsum(w * x for w, x in zip(self.weights, vector))
        return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))

    def flags(self, vector: Sequence[float]) -> bool:
        return self.probability(vector) >= self.threshold

    def flags_packed(self, packed: bytes) -> bool:
        """`flags` over a vector as the semantic index stores it (float32, native order, packed)."""
        return self.flags(unpack(packed))


def unpack(packed: bytes) -> array[float]:
    vec = array("f")
    vec.frombytes(packed)
    return vec


def parse(data: object, source: str = STORE.name) -> Classifier:
    """A Classifier from the stored JSON object; KbsyncError naming the field when it is not one."""
    if not isinstance(data, dict):
        raise KbsyncError(f"{source}: not a JSON object; rewrite it with bench/train_injection.py")
    try:
        weights = tuple(float(w) for w in data["weights"])
        out = Classifier(model=str(data["model"]), weights=weights, bias=float(data["bias"]),
                         threshold=float(data["threshold"]), trained_on=str(data["trained_on"]))
    except KeyError as exc:
        raise KbsyncError(f"{source}: field {exc} missing; rewrite it with bench/train_injection.py") from exc
    except (TypeError, ValueError) as exc:
        raise KbsyncError(f"{source}: a field is not a number or list ({exc}); rewrite it with "
                          "bench/train_injection.py") from exc
    if not weights or not 0.0 < out.threshold < 1.0:
        raise KbsyncError(f"{source}: field 'weights' is empty or 'threshold' is not between 0 and 1; rewrite it "
                          "with bench/train_injection.py")
    return out


def load(path: Path = STORE) -> Classifier:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise KbsyncError(f"{path.name}: cannot be read as JSON ({exc}); reinstall kbsync") from exc
    return parse(data, path.name)


@lru_cache(maxsize=1)
def shipped() -> Classifier:
    """The classifier kbsync ships (kbsync/data/injection-classifier.json), read once."""
    return load()


@dataclass(frozen=True)
class Learned:
    """What the classifier flags in a workspace, to withhold wherever its text is handed on: the lines of each
    flagged unit (a record's head or passage, as the file reads now), and each flagged record's flags in its
    file's offsets by key (beside the rules' flags the search index keeps)."""

    lines: tuple[str, ...] = ()
    runs_on: frozenset[str] = frozenset()  # lines cut short when embedded (a long head's last): withheld to their end
    records: Mapping[str, tuple[dict[str, object], ...]] = field(default_factory=dict)

    @cached_property
    def _anchors(self) -> tuple[AhoCorasick, list[list[str]]] | None:
        by_anchor: dict[str, list[str]] = {}
        for ln in {ln.strip() for ln in self.lines}:
            if len(ln) >= MIN_LINE:
                by_anchor.setdefault(ln[:ANCHOR], []).append(ln)
        found = sorted(by_anchor)
        return (AhoCorasick(found, implementation=AUTOMATON), [by_anchor[a] for a in found]) if found else None

    def flags(self, text: str) -> list[Flag]:
        """A flag for each run of `text` that holds a flagged unit's lines, as far as it goes on as the line does
        (white space aside: a summary joined into one line or cut short is still found), and to the end of its
        line for a line cut short when it was embedded; runs parted by white space alone are one."""
        if self._anchors is None or not text:
            return []
        automaton, lines = self._anchors
        found = sorted((s, max(self._reach(text, s, ln) for ln in lines[i]))
                       for i, s, _e in automaton.find_matches_as_indexes(text, overlapping=True))
        spans: list[list[int]] = []
        for start, end in found:
            if spans and (start <= spans[-1][1] or not text[spans[-1][1]:start].strip()):
                spans[-1][1] = max(spans[-1][1], end)
            else:
                spans.append([start, end])
        return [Flag(FAMILY, lo, hi, text.count("\n", 0, lo) + 1, WHY, _excerpt(text[lo:hi]), 1.0) for lo, hi in spans]

    def _reach(self, text: str, at: int, line: str) -> int:
        """Where `line`, found at `at`, stops matching `text` (runs of white space match each other), within the
        line of `text`; a line that ran on is withheld to that line's end once it matched whole."""
        i, j, end = at, 0, _line_end(text, at)
        while i < end and j < len(line):
            if line[j].isspace() and text[i].isspace():
                while j < len(line) and line[j].isspace():
                    j += 1
                while i < end and text[i].isspace():
                    i += 1
            elif line[j] == text[i]:
                i, j = i + 1, j + 1
            else:
                break
        return end if j == len(line) and line in self._cut else i

    @cached_property
    def _cut(self) -> frozenset[str]:
        return frozenset(ln.strip() for ln in self.runs_on)


NO_VERDICTS: Final = Learned()


def detect(text: str, verdicts: Learned | None = None) -> list[Flag]:
    """A passage is flagged by either: the rules' flags of `text` (kbsync.core.detect.injection) and the classifier's,
    by position; the rules' alone without verdicts."""
    if verdicts is None or not verdicts.lines:
        return injection.detect(text)
    return sorted([*injection.detect(text), *verdicts.flags(text)], key=lambda f: (f.start, f.end))


def _line_end(text: str, at: int) -> int:
    end = text.find("\n", at)
    return len(text) if end < 0 else end


def _excerpt(span: str) -> str:
    shown = visible(" ".join(span.split()))
    return shown if len(shown) <= EXCERPT_CHARS else shown[:EXCERPT_CHARS - 1] + "…"
