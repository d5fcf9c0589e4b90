#!/usr/bin/env python3
"""Train the instruction classifier (kbsync.core.detect.injectionclassifier) and write daemon/kbsync/data/injection-classifier.json.

    python bench/train_injection.py            # embed (cached in bench/out/), train, write the weights
    python bench/train_injection.py --check    # train again and fail if the stored weights differ

Training set: tests/data/injection_tuning.jsonl, injection_structural.jsonl, injection_authored.jsonl and
injection_ordinary.jsonl (TRAIN below); never injection_heldout.jsonl, which bench/bench_injection.py only
evaluates on, nor any outside test set, nor LoCoMo (its --ordinary check). Each text is embedded as the semantic index embeds a unit (multilingual-e5-small,
"passage: " prefix). The model is an L2-regularised logistic regression fitted by Newton's method on
standardised vectors, the standardisation folded back into the weights so that scoring is one dot product
over the raw vector. The regularisation and the threshold are chosen on the training set alone, by
5-fold cross-validation: the strength with the best out-of-fold recall where at most MAX_FALSE_ALARMS of
the benign texts are flagged out of fold, and the lowest threshold that keeps to that share. The operating
point is a share of ordinary text flagged, not a precision: a workspace holds next to no instructions, so
what its owner sees is how much of their own text is withheld (a precision over a set of as many injections
as benign texts allowed five times as many false alarms). Everything is deterministic: the same sets give the
same file (the folds are by each text's digest).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
from bench_injection import DATA_DIR, Row, load

from kbsync.core.detect import injectionclassifier
from kbsync.retrieval.semanticunits import MODEL, digest

TRAIN = ("injection_tuning.jsonl", "injection_structural.jsonl", "injection_authored.jsonl", "injection_ordinary.jsonl")
FORBIDDEN = "injection_heldout.jsonl"
CACHE = Path(__file__).resolve().parent / "out" / "injection-vectors.json"
STRENGTHS = (1.0, 10.0, 30.0, 100.0, 300.0, 1000.0, 3000.0)
MAX_FALSE_ALARMS = 0.01  # of the benign training texts, flagged out of fold
FOLDS = 5
Matrix = Any  # numpy arrays: numpy's own stubs are too loose to add anything here


def training_rows() -> tuple[list[Row], str]:
    """The training rows and the digest of the files they come from."""
    assert FORBIDDEN not in TRAIN
    h = hashlib.sha256()
    rows: list[Row] = []
    for name in TRAIN:
        path = DATA_DIR / name
        h.update(name.encode() + b"\0" + path.read_bytes())
        rows.extend(load(path))
    return rows, h.hexdigest()[:32]


def vectors(texts: list[str]) -> Matrix:
    """Each text's passage vector, from the cache where it is there (by semanticunits.digest), the model otherwise."""
    cache: dict[str, list[float]] = json.loads(CACHE.read_text()) if CACHE.exists() else {}
    missing = sorted({t for t in texts if digest(t) not in cache})
    if missing:
        from kbsync.retrieval.semanticmodel import Model

        model = Model(2)
        for i in range(0, len(missing), 32):
            batch = missing[i:i + 32]
            for t, packed in zip(batch, model.passages(batch)):
                cache[digest(t)] = np.frombuffer(packed, dtype=np.float32).tolist()
            print(f"  embedded {min(i + 32, len(missing))}/{len(missing)}", file=sys.stderr)
        CACHE.parent.mkdir(parents=True, exist_ok=True)
        tmp = CACHE.with_suffix(".tmp")
        tmp.write_text(json.dumps(cache))
        tmp.replace(CACHE)
    return np.array([cache[digest(t)] for t in texts], dtype=np.float64)


def fit(x: Matrix, y: Matrix, strength: float) -> tuple[Matrix, float]:
    """Weights and bias over the raw vectors: logistic regression on standardised ones, penalty `strength`."""
    mean, std = x.mean(axis=0), x.std(axis=0) + 1e-6
    z = np.hstack([(x - mean) / std, np.ones((len(x), 1))])
    w = np.zeros(z.shape[1])
    penalty = np.full(z.shape[1], strength)
    penalty[-1] = 0.0
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-(z @ w)))
        grad = z.T @ (p - y) + penalty * w
        hess = (z * (p * (1 - p))[:, None]).T @ z + np.diag(penalty) + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    weights = w[:-1] / std
    return weights, float(w[-1] - (weights * mean).sum())


def probabilities(x: Matrix, weights: Matrix, bias: float) -> Matrix:
    return 1.0 / (1.0 + np.exp(-(x @ weights + bias)))


def threshold_at(p: Matrix, y: Matrix, false_alarms: float) -> tuple[float, float]:
    """The lowest threshold that flags at most a `false_alarms` share of the benign texts (and its recall);
    0.99 if none does."""
    best = (0.99, 0.0)
    benign = int((y == 0).sum())
    for t in sorted({round(float(v), 4) for v in p}, reverse=True):
        flagged = p >= t
        if int((flagged & (y == 0)).sum()) > false_alarms * benign:
            break
        if 0.0 < t < 1.0:
            best = (float(t), int((flagged & (y == 1)).sum()) / int((y == 1).sum()))
    return best


def out_of_fold(x: Matrix, y: Matrix, folds: Matrix, strength: float) -> Matrix:
    p = np.zeros(len(y))
    for k in range(FOLDS):
        test = folds == k
        w, b = fit(x[~test], y[~test], strength)
        p[test] = probabilities(x[test], w, b)
    return p


def train() -> dict[str, object]:
    rows, trained_on = training_rows()
    texts = [str(r["text"]) for r in rows]
    x, y = vectors(texts), np.array([1.0 if r["label"] else 0.0 for r in rows])
    folds = np.array([int(digest(t)[:8], 16) % FOLDS for t in texts])
    chosen: tuple[float, float, float] = (0.0, 0.0, STRENGTHS[0])  # recall, threshold, strength
    for strength in STRENGTHS:
        t, recall = threshold_at(out_of_fold(x, y, folds, strength), y, MAX_FALSE_ALARMS)
        print(f"  strength {strength:>5}: out-of-fold recall {recall:.3f} with at most {MAX_FALSE_ALARMS:.0%} of the "
              f"benign texts flagged (threshold {t:.4f})", file=sys.stderr)
        if recall > chosen[0]:
            chosen = (recall, t, strength)
    recall, threshold, strength = chosen
    weights, bias = fit(x, y, strength)
    return {"model": MODEL, "trained_on": trained_on, "sets": list(TRAIN), "texts": len(rows),
            "strength": strength, "threshold": round(threshold, 4), "oof_recall": round(recall, 4),
            "bias": round(bias, 6), "weights": [round(float(w), 6) for w in weights]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="fail if the stored weights are not what training gives")
    args = ap.parse_args()
    text = json.dumps(train(), indent=None, separators=(",", ":")) + "\n"
    injectionclassifier.parse(json.loads(text))  # what is written must load
    if args.check:
        same = injectionclassifier.STORE.exists() and injectionclassifier.STORE.read_text(encoding="utf-8") == text
        print("stored weights are current" if same else "stored weights differ from training: run without --check")
        sys.exit(0 if same else 1)
    tmp = injectionclassifier.STORE.with_suffix(".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(injectionclassifier.STORE)
    print(f"wrote {injectionclassifier.STORE.name}: threshold {json.loads(text)['threshold']}")


if __name__ == "__main__":
    main()
