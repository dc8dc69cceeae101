"""Speed of the Python package against the command line (see docs/performance.md).

    python python/benches/bench.py [--rows 1000000] [--repeats 3] [--cli target/release/evalsim]

1. `analyze` of a DataFrame of ROWS samples in memory, against `evalsim analyze` of the same rows
   in a canonical CSV file and a canonical JSONL file (whole process, with reading the file).
2. `pass_at_k` over 1e6 (n, c) pairs (the unbiased estimator, one call on numpy arrays).

Prints the median of REPEATS runs of each, and the ratios.
"""

import argparse
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

import evalsim

ROOT = Path(__file__).resolve().parents[2]


def rows(n_rows: int, seed: int = 1) -> pd.DataFrame:
    """N_ROWS samples: 100 per problem, per-problem rates from a Beta(0.7, 0.7), answers among a
    few strings (so maj@k has work to do), output token counts."""
    rng = np.random.default_rng(seed)
    per = 100
    problems = n_rows // per
    rate = np.repeat(rng.beta(0.7, 0.7, size=problems), per)
    correct = rng.random(problems * per) < rate
    wrong = rng.integers(1, 6, size=problems * per)
    answer = np.where(correct, "42", np.char.add("w", wrong.astype(str)))
    return pd.DataFrame(
        {
            "problem_id": np.repeat(np.arange(problems), per),
            "correct": correct,
            "answer": answer,
            "output_tokens": rng.integers(50, 4000, size=problems * per).astype(np.float64),
        }
    )


def median_time(f, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--cli", default=str(ROOT / "target" / "release" / "evalsim"))
    args = ap.parse_args()

    df = rows(args.rows)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        csv_path, jsonl_path = tmp / "rows.csv", tmp / "rows.jsonl"
        df.to_csv(csv_path, index=False)
        df.to_json(jsonl_path, orient="records", lines=True)

        def cli(path: Path) -> None:
            subprocess.run(
                [args.cli, "analyze", str(path), "--quiet", "--no-figures", "--out", str(tmp / "out")],
                check=True,
            )

        t_csv = median_time(lambda: cli(csv_path), args.repeats)
        t_jsonl = median_time(lambda: cli(jsonl_path), args.repeats)
        t_py = median_time(lambda: evalsim.analyze(df), args.repeats)
        t_convert = median_time(
            lambda: evalsim._source(df, "dataframe"), args.repeats
        )
        ours = evalsim.analyze(df).tables["model-dataframe"]
        cli(csv_path)
        theirs = evalsim._table((tmp / "out" / "model-rows.csv").read_bytes())
        numbers = [c for c in theirs.columns if c not in ("source", "model")]
        same = ours[numbers].equals(theirs[numbers])
    print(f"analyze of {args.rows:,} rows (median of {args.repeats}):")
    print(f"  CLI, canonical CSV file:   {t_csv:.3f} s")
    print(f"  CLI, canonical JSONL file: {t_jsonl:.3f} s")
    print(f"  Python, DataFrame:         {t_py:.3f} s  ({t_py / t_csv:.2f}x the CSV run, {t_py / t_jsonl:.2f}x the JSONL run)")
    print(f"    of which DataFrame -> canonical rows: {t_convert:.3f} s")
    print(f"  same numbers as the CLI's: {same}")

    rng = np.random.default_rng(2)
    n = rng.integers(10, 200, size=1_000_000)
    c = (rng.random(1_000_000) * (n + 1)).astype(np.int64)
    t_pass = median_time(lambda: evalsim.pass_at_k(n, c, 10), max(args.repeats, 5))
    cpu = time.process_time()
    evalsim.pass_at_k(n, c, 10)
    cpu = time.process_time() - cpu
    print(
        f"pass_at_k over 1e6 (n, c) pairs, k = 10: {t_pass * 1000:.1f} ms wall (median of "
        f"{max(args.repeats, 5)}), {cpu * 1000:.1f} ms of CPU over all threads"
    )


if __name__ == "__main__":
    main()
