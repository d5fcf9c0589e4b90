"""The learned half of the embedded-instruction detector: a logistic regression over a passage's embedding. Pure.

The semantic index already embeds each record's units (multilingual-e5-small, see kbsync.retrieval.semanticunits;
"passage: " prefix, L2-normalised); this scores such a vector against the weights stored in
kbsync/data/injection-classifier.json, written by bench/train_injection.py from the labelled sets in
tests/data/ (never from the held-out split). It catches instructions by meaning where no rule's phrasing
matches; the rules (kbsync.core.injection) stay for decoded and disguised text and exact known phrasings,
and a passage flagged by either is flagged. Scoring is a dot product and a sigmoid over 384 numbers: no
numpy here, and the model itself lives in kbsync.retrieval.semanticmodel.
"""

from __future__ import annotations

import json
import math
from array import array
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Final, Sequence

from kbsync.errors import KbsyncError

STORE: Final = Path(__file__).parent.parent / "data" / "injection-classifier.json"
FAMILY: Final = "classifier"
WHY: Final = "reads as an instruction to an AI by its meaning (learned classifier over the passage's embedding)"


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
