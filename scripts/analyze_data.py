#!/usr/bin/env python3
"""Write canonical JSONL rows for timing `evalsim analyze` on large inputs.

Model m's problem i has a solve rate p_i = clip(N(0.5 + 0.05 m, 0.3^2), 0, 1); each of its
--samples samples is right with probability p_i. With --answers every row has an `answer`: the
right answer `42`, or a wrong one drawn from `7`, `13` and five others. Deterministic for a given
--seed.

    python3 scripts/analyze_data.py --models 1 --problems 1000000 --samples 1 > 1m.jsonl
"""
import argparse
import sys


def main():
    import random

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=int, default=1)
    ap.add_argument("--problems", type=int, default=1_000_000)
    ap.add_argument("--samples", type=int, default=1)
    ap.add_argument("--answers", action="store_true", help="give every row an answer")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    out = sys.stdout
    for m in range(args.models):
        name = "model-%d" % m
        for i in range(args.problems):
            p = min(max(rng.gauss(0.5 + 0.05 * m, 0.3), 0.0), 1.0)
            for _ in range(args.samples):
                c = rng.random() < p
                flag = "true" if c else "false"
                if args.answers:
                    a = "42" if c else rng.choice(["7", "13", "x%d" % rng.randrange(5)])
                    out.write('{"problem_id": %d, "model": "%s", "correct": %s, "answer": "%s"}\n'
                              % (i, name, flag, a))
                else:
                    out.write('{"problem_id": %d, "model": "%s", "correct": %s}\n' % (i, name, flag))


if __name__ == "__main__":
    main()
