#!/usr/bin/env bash
# Proves a refactor changed no output: writes every table, report and figure of a fixed set of
# commands into DIR, with fixed seeds and thread counts, for comparison with `diff -r`.
#
#   scripts/same-output.sh /tmp/before        # on the old commit
#   scripts/same-output.sh /tmp/after         # on the new one
#   diff -r /tmp/before /tmp/after && echo identical
#
# Covers `run note`, `run concentrated`, a sweep, a plan (exact and simulated) and `analyze` on
# every fixture. Timing lines on stdout are dropped; files are compared byte for byte.
set -euo pipefail
out=${1:?usage: scripts/same-output.sh DIR}
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin=target/release/evalsim
rm -rf "$out" && mkdir -p "$out"
log() { grep -v -E ' in [0-9.]+ ?(s|ms)|[0-9.]+ s\b|elapsed|took' || true; }

$bin run note --out "$out/run-note" --threads 2 --quiet
$bin run scenarios/concentrated.toml --out "$out/run-concentrated" --threads 1 --quiet
$bin sweep note --set model.long.attractor=0,0.5,0.9 --out "$out/sweep" --threads 2 --quiet
$bin plan --out "$out/plan-exact" --seed 7 --threads 2 --simulate-reruns 0 | log > "$out/plan-exact.stdout"
$bin plan --out "$out/plan-sim" --seed 7 --threads 2 --problems 30,60 --samples 4,16 --simulate-reruns 400 | log > "$out/plan-sim.stdout"
$bin plan --out "$out/plan-maj" --metric maj --k 5 --attractor 0.3 --seed 7 --threads 2 | log > "$out/plan-maj.stdout"
$bin check note --threads 2 2>&1 | log > "$out/check-note.txt"

i=0
for f in tests/fixtures/analyze/*.json* tests/fixtures/analyze/*.csv \
         tests/fixtures/harness/inspect/*.eval tests/fixtures/harness/inspect/*.json \
         tests/fixtures/harness/lm_eval/*/*; do
  i=$((i + 1))
  name=$(echo "$f" | tr '/' '_')
  # Several harness files need a choice (--metric, --score-key): keep the exit code and
  # the message, which are outputs too.
  set +e
  $bin analyze "$f" --out "$out/analyze-$name" --quiet --threads 2 > "$out/analyze-$name.stdout" 2> "$out/analyze-$name.stderr"
  echo "exit $?" >> "$out/analyze-$name.stdout"
  set -e
done
# The inputs that need a choice, analysed with one.
one() { local tag=$1; shift; $bin analyze "$@" --out "$out/analyze-$tag" --quiet --threads 2 > "$out/analyze-$tag.stdout" 2>&1 || echo "exit $?" >> "$out/analyze-$tag.stdout"; }
one dict-exact tests/fixtures/harness/inspect/dict-score.eval --score-key exact
one mc-acc tests/fixtures/harness/lm_eval/mc/fixture-lm --metric acc
one group-a-acc tests/fixtures/harness/lm_eval/group-a/fixture-lm --metric acc
one compare-ab tests/fixtures/analyze/canonical.jsonl --compare
for f in tests/fixtures/analyze/canonical.jsonl tests/fixtures/analyze/humaneval_samples.jsonl_results.jsonl; do
  $bin fit "$f" > "$out/fit-$(basename "$f").toml" 2> "$out/fit-$(basename "$f").stderr" || echo "exit $?" >> "$out/fit-$(basename "$f").toml"
done
echo "wrote $out ($i analyze inputs)"
