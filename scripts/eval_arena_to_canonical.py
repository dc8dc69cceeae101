#!/usr/bin/env python3
"""Convert eval-arena per-example records to evalsim's canonical JSONL (one row per sample).

eval-arena (github.com/crux-eval/eval-arena) stores one record per (benchmark, model, example):
{"benchmark_id", "model", "example_id", "pass1", "correct"?, "count"?}. A record with `correct`
and `count` becomes `count` rows, `correct` of them right; one without `count` (greedy runs,
pass1 0 or 1) becomes one row. A fractional pass1 without `count` cannot be turned into samples
and is refused, as is a record whose numbers disagree.

    python3 scripts/eval_arena_to_canonical.py humaneval.jsonl --models a,b,c > out.jsonl

Models are written in the order given by --models (all, sorted by name, when absent), each
model's examples in input order.
"""
import argparse
import json
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("input", help="eval-arena JSONL file")
    ap.add_argument("--models", help="comma-separated model names to keep (default: all)")
    ap.add_argument("--benchmark", help="keep only this benchmark_id")
    args = ap.parse_args()
    keep = args.models.split(",") if args.models else None
    rows = {}
    with open(args.input, encoding="utf-8") as f:
        for line_no, line in enumerate(f, 1):
            if not line.strip():
                continue
            r = json.loads(line)
            if args.benchmark and r.get("benchmark_id") != args.benchmark:
                continue
            model = r["model"]
            if keep is not None and model not in keep:
                continue
            count = r.get("count")
            if count is None:
                if r["pass1"] not in (0, 1):
                    sys.exit(f"{args.input}:{line_no}: pass1 = {r['pass1']} without `count`; "
                             "cannot tell how many samples were right")
                count, correct = 1, int(r["pass1"])
            else:
                correct = r.get("correct")
                if correct is None:
                    correct = round(r["pass1"] * count)
                if abs(correct - r["pass1"] * count) > 1e-6 or not 0 <= correct <= count:
                    sys.exit(f"{args.input}:{line_no}: correct = {correct} of count = {count} "
                             f"disagrees with pass1 = {r['pass1']}")
            rows.setdefault(model, []).extend(
                {"model": model, "problem_id": r["example_id"], "correct": i < correct}
                for i in range(count))
    missing = [m for m in (keep or []) if m not in rows]
    if missing:
        sys.exit(f"{args.input}: no records for model(s) {', '.join(missing)}")
    out = sys.stdout
    for model in keep or sorted(rows):
        for row in rows[model]:
            out.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
