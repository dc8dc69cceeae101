#!/usr/bin/env python3
"""Write canonical JSONL drawn from the joint model of `evalsim fit`, for timing the fit.

Problem i has z_i ~ N(mu, sigma^2); model m's logit on it is z_i + shift_m + shift_sd_m e_{m,i}
(e standard normal), plus, with --runs R, an N(0, run_sd^2) offset per run; each run draws
--samples samples. Model 0 has shift 0; the others' shifts and shift_sds are spread evenly over
[--shift-min, --shift-max] and [--sd-min, --sd-max]. Deterministic for a given --seed.

    python3 scripts/fit_data.py --models 2 --problems 800 --samples 10 --sigma 12 \
        --sd-min 2.5 --sd-max 4 > code-800x2.jsonl
"""
import argparse
import math
import random
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=int, default=2)
    ap.add_argument("--problems", type=int, default=800)
    ap.add_argument("--samples", type=int, default=10, help="samples per run")
    ap.add_argument("--runs", type=int, default=0, help="runs per problem (0: no run column)")
    ap.add_argument("--run-sd", type=float, default=0.7)
    ap.add_argument("--mu", type=float, default=0.0)
    ap.add_argument("--sigma", type=float, default=12.0)
    ap.add_argument("--shift-min", type=float, default=-1.0)
    ap.add_argument("--shift-max", type=float, default=1.0)
    ap.add_argument("--sd-min", type=float, default=2.5)
    ap.add_argument("--sd-max", type=float, default=4.0)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    models = []
    for m in range(a.models):
        f = m / (a.models - 1) if a.models > 1 else 0.0
        shift = 0.0 if m == 0 else a.shift_min + f * (a.shift_max - a.shift_min)
        models.append((f"m{m}", shift, a.sd_max - f * (a.sd_max - a.sd_min)))
    z = [rng.gauss(a.mu, a.sigma) for _ in range(a.problems)]
    out = sys.stdout
    for name, shift, sd in models:
        for i, zi in enumerate(z):
            logit = zi + shift + sd * rng.gauss(0.0, 1.0)
            for r in range(max(a.runs, 1)):
                u = logit + (a.run_sd * rng.gauss(0.0, 1.0) if a.runs else 0.0)
                p = 1.0 / (1.0 + math.exp(-u)) if u > -700 else 0.0
                run = f', "run": {r}' if a.runs else ""
                for s in range(a.samples):
                    ok = "true" if rng.random() < p else "false"
                    out.write(f'{{"problem_id": "q{i}", "model": "{name}"{run}, '
                              f'"sample": {s}, "correct": {ok}}}\n')


if __name__ == "__main__":
    main()
