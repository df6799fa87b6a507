#!/usr/bin/env bash
# Run bench/http_bench.py in two checkouts in turn (before, after, before, after, ...), so
# the machine's drift between runs (15-20 % here) falls on both alike.
#
#   bench/interleave.sh TAG ROUNDS BEFORE_DIR AFTER_DIR PAGES [HTTP_BENCH_OPTION...]
#   e.g. git worktree add ../before HEAD~1 && bench/interleave.sh rp 2 ../before . home,welcome
#   bench/interleave.sh p34 2 ../before . home,timeline --profile-updates-per-minute 1000
#
# Each checkout needs .venv and var/bench (a symlink to this one's shares the seeded dump).
# Reports: /tmp/bench_TAG_<dir name>_<round>.md, progress in .log beside them.
set -euo pipefail
tag=$1 rounds=$2 before=$3 after=$4 pages=$5
shift 5  # the rest goes to http_bench.py as it is
for round in $(seq 1 "$rounds"); do
  for dir in "$before" "$after"; do
    name=$(basename "$(cd "$dir" && pwd)")
    (cd "$dir" && .venv/bin/python bench/http_bench.py --pages "$pages" --connections 50 \
      --duration 10 "$@" >"/tmp/bench_${tag}_${name}_${round}.md" 2>"/tmp/bench_${tag}_${name}_${round}.log")
  done
done
