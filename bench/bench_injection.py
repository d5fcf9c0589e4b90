#!/usr/bin/env python3
"""Precision and recall of the embedded-instruction detector on the labelled line set.

    python bench/bench_injection.py [--show]

The sets (tests/data/injection_labelled.jsonl, and injection_heldout.jsonl written after
the rules were tuned and never tuned on) hold injections and benign look-alikes in
English and Chinese, one JSON object per line: {"label": 1|0, "lang": "en"|"zh", "text": ...}.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from kbsync.core.injection import is_flagged

DATA_DIR = Path(__file__).resolve().parent.parent / "tests" / "data"
DATA = DATA_DIR / "injection_labelled.jsonl"
HELD_OUT = DATA_DIR / "injection_heldout.jsonl"  # written after the rules were tuned; never tuned on


def load(path: Path = DATA) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def score(rows: list[dict[str, object]]) -> dict[str, float]:
    tp = sum(1 for r in rows if r["label"] and is_flagged(str(r["text"])))
    fp = sum(1 for r in rows if not r["label"] and is_flagged(str(r["text"])))
    fn = sum(1 for r in rows if r["label"] and not is_flagged(str(r["text"])))
    return {"lines": len(rows), "tp": tp, "fp": fp, "fn": fn,
            "precision": tp / (tp + fp) if tp + fp else 1.0, "recall": tp / (tp + fn) if tp + fn else 1.0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--show", action="store_true", help="print the misclassified lines")
    args = ap.parse_args()
    rows = load()
    for name, path in (("labelled", DATA), ("held-out", HELD_OUT)):
        for lang in ("en", "zh", "all"):
            part = [r for r in load(path) if lang == "all" or r["lang"] == lang]
            s = score(part)
            print(f"{name} {lang:>3}: {s['lines']} lines  precision {s['precision']:.3f}  recall {s['recall']:.3f}  "
                  f"(tp {s['tp']}, fp {s['fp']}, fn {s['fn']})")
    start = time.perf_counter()
    for _ in range(20):
        for r in rows:
            is_flagged(str(r["text"]))
    per_line = (time.perf_counter() - start) / (20 * len(rows))
    print(f"detector speed: {per_line * 1e6:.1f} us per line")
    if args.show:
        for r in rows + load(HELD_OUT):
            if bool(r["label"]) != is_flagged(str(r["text"])):
                print(f"  {'missed' if r['label'] else 'false alarm'}: {r['text']!r}")


if __name__ == "__main__":
    main()
