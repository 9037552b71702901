#!/usr/bin/env bash
# A coverage-guided AFL++ campaign of one fuzz target (the long runs; CI uses ci.sh).
#
#   fuzz/afl.sh TARGET EXECS [SEED] [WORKDIR]
#
# Builds the AFL harness (needs `cargo install cargo-afl --locked`), seeds the queue
# with the built-in seeds and fuzz/corpus/TARGET, writes the target's dictionary, and
# runs afl-fuzz with a fixed seed until about EXECS executions (`-E`), at nice 19, one
# process. Results: WORKDIR/out/default/{fuzzer_stats,queue,crashes,hangs}; replay a
# crash with `quire-fuzz replay TARGET FILE`. Environment: AFL_TARGET_DIR (the
# instrumented build; default target-afl, apart from the normal build, which
# CARGO_TARGET_DIR places as usual), AFL_EXTRA (more afl-fuzz flags).
set -euo pipefail
target=${1:?target: db, xpath or csv}
execs=${2:?executions, e.g. 10000000}
seed=${3:-18}
cd "$(dirname "$0")/.."
work=${4:-target/afl-work/$target}
afl_dir=${AFL_TARGET_DIR:-target-afl}
CARGO_TARGET_DIR=$afl_dir cargo afl build --release -p quiredb-fuzz --features afl --bin "afl-$target"
cargo build --release -p quiredb-fuzz --bin quire-fuzz
driver=${CARGO_TARGET_DIR:-target}/release/quire-fuzz
mkdir -p "$work/in"
"$driver" seeds "$target" "$work/in"
cp fuzz/corpus/"$target"/* "$work/in/" 2>/dev/null || true
"$driver" dict "$target" "$work/dict"
dict=()
[ -s "$work/dict" ] && dict=(-x "$work/dict")
# Inputs are small; 64 KiB is the driver's cap too. -t: ms per execution.
AFL_NO_UI=1 AFL_SKIP_CPUFREQ=1 AFL_NO_AFFINITY=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 \
  AFL_IGNORE_SEED_PROBLEMS=1 nice -n 19 cargo afl fuzz -i "$work/in" -o "$work/out" -s "$seed" -E "$execs" \
  -t 2000 -G 65536 "${dict[@]}" ${AFL_EXTRA:-} -- "$afl_dir/release/afl-$target"
grep -E "^(start_time|last_update|run_time|execs_done|execs_per_sec|corpus_count|saved_crashes|saved_hangs)" \
  "$work/out/default/fuzzer_stats"
