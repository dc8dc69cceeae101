#!/usr/bin/env bash
# Times every command shown in README.md and docs/ as a whole process and prints a markdown table
# of wall and CPU seconds (user + sys), the median of RUNS runs each (default 3). Placeholders of
# the docs (results.jsonl, a.jsonl b.jsonl, big.jsonl, mine.toml) are filled with the repository's
# fixtures or with inputs written by scripts/analyze_data.py and scripts/fit_data.py, named in
# the table. Run it on an idle machine: wall times are only meaningful without other load.
#
#   scripts/documented-commands.sh [BIN] [RUNS]     # BIN defaults to target/release/evalsim
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
bin=$(realpath "${1:-target/release/evalsim}")
runs=${2:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

# Inputs for the placeholders.
python3 "$root/scripts/analyze_data.py" --models 1 --problems 200 --samples 16 --answers --seed 5 > results.jsonl
python3 "$root/scripts/analyze_data.py" --models 1 --problems 200 --samples 8 --seed 1 > a.jsonl
python3 "$root/scripts/analyze_data.py" --models 1 --problems 200 --samples 8 --seed 2 \
    | sed 's/"model-0"/"model-1"/' > b.jsonl
python3 "$root/scripts/fit_data.py" --models 2 --problems 200 --samples 8 --sigma 1.5 \
    --sd-min 0.3 --sd-max 0.6 --seed 7 > pair.jsonl
python3 "$root/scripts/analyze_data.py" --models 3 --problems 200 --samples 8 --seed 3 > m.jsonl
python3 "$root/scripts/analyze_data.py" --models 50 --problems 1000 --samples 16 --seed 4 > big.jsonl
humaneval="$root/tests/fixtures/eval-arena/humaneval-12-models.jsonl"
fit164="$root/tests/fixtures/fit/humaneval_164.jsonl"
"$bin" init mine > mine.toml
"$bin" fit "$fit164" --quiet > fitted.toml 2>/dev/null
"$bin" fit "$humaneval" --quiet > board.toml 2>/dev/null

# One command per line: a label (the docs' form) | the command run here.
commands=(
  "run note|$bin run note --out o/note -q"
  "run note --no-figures|$bin run note --no-figures --out o/note-nf -q"
  "check note|$bin check note -q"
  "list|$bin list"
  "init mine|$bin init mine"
  "check mine.toml|$bin check mine.toml -q"
  "run mine.toml|$bin run mine.toml --out o/mine -q"
  "run concentrated|$bin run concentrated --out o/concentrated -q"
  "run scenarios/concentrated.toml --seed 7|$bin run $root/scenarios/concentrated.toml --seed 7 --out o/conc7 -q"
  "run contamination|$bin run contamination --out o/contamination -q"
  "run modes|$bin run modes --out o/modes -q"
  "run verifier|$bin run verifier --out o/verifier -q"
  "run extraction|$bin run extraction --out o/extraction -q"
  "run submissions|$bin run submissions --out o/submissions -q"
  "run judge|$bin run judge --out o/judge -q"
  "check judge|$bin check judge -q"
  "run confidence|$bin run confidence --out o/confidence -q"
  "plan --mu 0.2 --sigma 2.2 --gap-logits 0.21 --problems 30,100,300,1000 --samples 1,4,16,64;the README's plan|$bin plan --mu 0.2 --sigma 2.2 --gap-logits 0.21 --problems 30,100,300,1000 --samples 1,4,16,64 --out o/plan -q"
  "sweep note --set model.long.attractor=0,0.25,0.5,0.75,0.9 --set benchmark.sigma=0.6,2.2;the README's sweep|$bin sweep note --set model.long.attractor=0,0.25,0.5,0.75,0.9 --set benchmark.sigma=0.6,2.2 --out o/sweep -q"
  "sweep note --set model.long.attractor=0:0.9:0.05 --set benchmark.sigma=0.6,2.2;19 x 2 cells, from sweep.md|$bin sweep note --set model.long.attractor=0:0.9:0.05 --set benchmark.sigma=0.6,2.2 --out o/sweep2 -q"
  "sweep verifier --set model.checked.verifier.tpr=0.8,0.9|$bin sweep verifier --set model.checked.verifier.tpr=0.8,0.9 --out o/sweepv -q"
  "sweep submissions --set experiment.curves.submissions=1:8:1|$bin sweep submissions --set experiment.curves.submissions=1:8:1 --out o/sweeps -q"
  "sweep submissions --set experiment.curves.submissions=2,3,5|$bin sweep submissions --set experiment.curves.submissions=2,3,5 --out o/sweeps2 -q"
  "sweep note --set benchmark.sigma=0.5:3:0.25 --shard 0/4 --threads 1;the 4 shards one after another, then merge|for i in 0 1 2 3; do $bin sweep note --set benchmark.sigma=0.5:3:0.25 --shard \$i/4 --threads 1 -q --out o/shards/ || exit 1; done && $bin merge o/shards/ --out o/merged"
  "sweep judge --set experiment.judge.position_bias=0:1:0.25|$bin sweep judge --set experiment.judge.position_bias=0:1:0.25 --out o/sweepj -q"
  "analyze results.jsonl --k 1,4,16;200 x 16 with answers|$bin analyze results.jsonl --k 1,4,16 --out o/an -q"
  "analyze a.jsonl b.jsonl --compare;200 x 8 each|$bin analyze a.jsonl b.jsonl --compare --out o/cmp -q"
  "analyze m1.jsonl m2.jsonl m3.jsonl;3 x 200 x 8, in one file here|$bin analyze m.jsonl --out o/m3 -q"
  "analyze -;results.jsonl on standard input|cat results.jsonl | $bin analyze - --out o/stdin -q"
  "analyze humaneval-12-models.jsonl|$bin analyze $humaneval --out o/board -q"
  "analyze big.jsonl;50 x 1,000 x 16|$bin analyze big.jsonl --out o/big -q"
  "fit results.jsonl;HumanEval, 164 problems|$bin fit $fit164 --out o/fit -q"
  "fit base.jsonl tuned.jsonl;2 x 200 x 8|$bin fit pair.jsonl --out o/fit2 -q"
  "fit results.jsonl --model tuned;2 x 200 x 8|$bin fit pair.jsonl --model m1 --out o/fit3 -q"
  "fit humaneval-12-models.jsonl --out out/fit;the leaderboard's plan|$bin fit $humaneval --out o/fitb -q"
  "run out/fit/scenario.toml;12 models: 11 plans, 11 head-to-heads|$bin run board.toml --out o/boardplan -q"
  "run scenarios/mine.toml;the scenario fit wrote for HumanEval|$bin run fitted.toml --out o/fitted -q"
)

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "| command | wall s | CPU s |"
echo "|---|---:|---:|"
for entry in "${commands[@]}"; do
  label=${entry%%|*}
  cmd=${entry#*|}
  note=""
  if [[ $label == *";"* ]]; then note=" (${label#*;})"; label=${label%%;*}; fi
  walls=() cpus=()
  for _ in $(seq "$runs"); do
    rm -rf o
    /usr/bin/time -f "%e %U %S" -o t.txt bash -c "$cmd" > /dev/null 2>&1 || { echo "FAILED: $cmd" >&2; exit 1; }
    read -r w u s < t.txt
    walls+=("$w")
    cpus+=("$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')")
  done
  w=$(printf '%s\n' "${walls[@]}" | median)
  c=$(printf '%s\n' "${cpus[@]}" | median)
  echo "| \`evalsim $label\`$note | $w | $c |"
done
