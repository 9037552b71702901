#!/usr/bin/env bash
# Makes the committed benchmark reports in one go, on a QUIET machine (nobody else
# building or testing): every workload (T1 T2 T3 T4 T5 T6 T7 T8 KV), every registered
# engine including quiredb and quiredb-full, 3 repeats, JSON lines into
# results/full/<W>.jsonl, then `quire-bench report --input results/full --output reports`.
# T5 runs BaseX (the only XML engine registered) on generated XMark, SwissProt and
# DBLP-like collections with query sets from `quire gen queries` (cached in the work
# directory between runs). TreeBank-like is left out: at factor 0.1 BaseX needs
# ~60 s per run of its three sets (~7 min for T5's warm-up and 5 runs) here.
#
# Sizes fit the whole run into about 55 minutes on this project's machine kind
# (2 vCPU, 24 GB, ext4 on virtio): each is the published or default size where that
# fits, else reduced, and the reduction is noted on every record of the workload (the
# report pages show it). Estimates below are from one-repeat runs at smaller sizes on
# this machine while it was loaded (load average ≈ 4), scaled linearly to 3 repeats;
# a quiet machine is faster, so the total should come in under them.
#
#   workload  size                               estimate  slowest engine (share)
#   workload  size                                estimate  measured at           slowest engines
#   T1        1,000 keys (published)                1 min   1,000: 22 s/repeat    sqlite-delete (48 %)
#   T2        500,000 records (default 5 M)        10 min   200 k: 68 s/repeat    sqlite-delete, sqlite-wal, bdb
#   T3        2,000,000 records (default 5 M)       6.5 min 500 k: 32 s/repeat    bdb-recno, bdb-queue
#   T4        200,000 points (default 1 M)         10.5 min 100 k: 99 s/repeat    libspatialindex-disk, -mem (one-by-one inserts)
#   T5        3 collections, factor 0.1 (~11 MB)    4 min   one run (JVM each)    dblp query-set generation (~80 s, once)
#   T6        40,000 blobs (published 100,000)      4.5 min 10 k: 23 s/repeat     sqlite-wal-blobio, sqlite-wal, files
#   T7        1,000,000 rows (default)              6.5 min 200 k: 96 s/repeat    sqlite-delete (durable inserts)
#   T8        1,000,000 records/points (default)    1 min   default: 31 s/repeat  -
#   KV        300,000 pairs (default 1 M)          10 min   200 k: 172 s/repeat   bdb, sqlite-delete, sqlite-wal
#   total                                         ≈ 54 min (+ builds if the target directory is cold)
# No peer needs more than ~5 min for one workload at these sizes (the 20-minute limit
# per peer and workload is far); the one-hour total is what bounds the sizes.
#
# Usage: bash benches/run-reports.sh   (env: REPEATS=3, OUT=results/full,
#        WORK=target-bench/run-reports, REPORTS=reports, ONLY="T1 T2 …" for a subset).
# Earlier results in OUT are moved aside first (the report keeps only the newest run
# of each workload/engine/op, so stale ops of an older run would otherwise linger).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}"
REPEATS="${REPEATS:-3}"
OUT="${OUT:-results/full}"
WORK="${WORK:-target-bench/run-reports}"
ONLY="${ONLY:-T1 T2 T3 T4 T5 T6 T7 T8 KV}"
REPORTS="${REPORTS:-reports}"

cargo build --release -p quiredb-bench --features peers
cargo build --release --bin quire
BENCH="$CARGO_TARGET_DIR/release/quire-bench"
QUIRE="$CARGO_TARGET_DIR/release/quire"

if compgen -G "$OUT/*.jsonl" > /dev/null; then
  old="$OUT.old-$(date -u +%Y%m%dT%H%M%S)"
  mkdir -p "$old"
  mv "$OUT"/*.jsonl "$old"/
  echo "run-reports: earlier results moved to $old"
fi
mkdir -p "$OUT" "$WORK"
start=$(date +%s)

# run W NOTE ARGS…: one workload, all engines, REPEATS repeats, into OUT/W.jsonl.
run() {
  local workload=$1 note=$2
  shift 2
  case " $ONLY " in *" $workload "*) ;; *) return 0 ;; esac
  local t0
  t0=$(date +%s)
  echo "== $workload $* — $(date -u +%H:%M:%S), load average $(cut -d' ' -f1-3 /proc/loadavg)"
  local args=("$workload" --repeats "$REPEATS" --work-dir "$WORK/db" --out "$OUT/$workload.jsonl" "$@")
  if [ -n "$note" ]; then
    args+=(--note "$note")
  fi
  "$BENCH" "${args[@]}"
  echo "== $workload took $(( $(date +%s) - t0 )) s"
}

# shellcheck source=benches/t5-inputs.sh
source benches/t5-inputs.sh # (the scripts run from the repository root)

run T1 ""
run T2 "reduced size: 500,000 records (default 5 M, full 57,852,305) to fit the one-hour report run" --n 500000
run T3 "reduced size: 2,000,000 records (default 5 M, full 57,852,305) to fit the one-hour report run" --n 2000000
run T4 "reduced size: 200,000 points (default 1 M): libspatialindex's one-by-one inserts dominate the run" --n 200000
case " $ONLY " in *" T5 "*) t5_inputs "$QUIRE" "$WORK/t5" 0.1 ;; esac
run T5 "collections of factor 0.1 (~11 MB each; XMark f=1 is 116 MB); no TreeBank-like set (BaseX ~7 min on it)" \
  --qsets "$WORK/t5"
run T6 "reduced size: 40,000 blobs (published 100,000) to fit the one-hour report run" --n 40000
run T7 ""
run T8 ""
run KV "reduced size: 300,000 pairs (default 1 M) to fit the one-hour report run" --n 300000

rm -rf "$WORK/db"
"$BENCH" report --input "$OUT" --output "$REPORTS"
echo "run-reports: all done in $(( ($(date +%s) - start) / 60 )) min; $REPORTS/ regenerated from $OUT"
echo "run-reports: update reports/RUN.md (date, load average, sizes) before committing the reports"
