#!/usr/bin/env bash
# The full-size report run of issue 3, on a QUIET machine, in parts (ONLY=…) because
# the whole of it takes about 8.5 hours on this project's machine kind (2 vCPU, 24 GB,
# ext4 on virtio), more than one session's quiet time.
#
# Every workload runs at its published full size (BENCHMARKS.md; `--full`), except
# that a peer which would need more than about 20 minutes for the workload (3 repeats)
# runs at the largest size that fits. Such peers run in a group of their own at that
# size, with QuireDB beside them, so every ratio compares equal sizes; the report
# gives each size its own section (`quire-bench report` keys records by data set).
#
# Sizes come from the reduced run of reports/RUN.md (wall seconds per engine and
# workload at the reduced size), scaled linearly with a 1.5× margin for the growth of
# trees beyond the caches:
#
#   workload  group (size: engines)                                          estimate
#   T1        1,000 keys: all                                                   1 min
#   T2        10 M: quiredb quiredb-full sqlite-wal sqlite-delete bdb redb lmdb   100 min
#             40 M: quiredb lmdb (LMDB at 57.8 M ≈ 25 min)                      35 min
#             (57.8 M, issue 7: not in this script; one engine and one cache budget per
#             run, `quire-bench T2 --full --repeats 1 --cache all|80 --engines E`,
#             20–60 min each: QuireDB's all-fits part took 32 min with the huge-page pool)
#   T3        57,852,305: quiredb files sqlite-wal                             15 min
#             20 M: quiredb bdb-recno bdb-queue (recno at 57.8 M ≈ 48 min)       27 min
#   T4        500 k: quiredb libspatialindex-mem libspatialindex-disk sqlite-rtree  48 min
#             2.5 M: quiredb quiredb-f32 quiredb-hilbert rstar rstar-6-16 boost
#                    boost-quadratic-16                                         82 min
#   T5        XMark, SwissProt, DBLP-like at factor 1 (BaseX)                   30 min
#             (TreeBank-like left out: BaseX needs ~60 s a run of its sets at 0.1)
#   T6        100,000 blobs: all                                                 8 min
#   T7        5 M rows: all                                                     32 min
#   T8        5 M records/points: quiredb quiredb-detached                      22 min
#   KV        1.5 M pairs: all (SQLite DELETE at 5 M ≈ 60 min)                   70 min
#             5 M pairs: quiredb quiredb-full lmdb                              40 min
#
# Usage: ONLY="T2" bash benches/run-full.sh   (env: REPEATS=3, OUT=results/full-size,
#        WORK=target-bench/run-full, REPORTS=reports, DRY=1 prints the commands only,
#        BIN=DIR takes quire-bench and quire from DIR (a copy, so builds cannot replace them
#        mid-run) instead of building them,
#        PIN=1 runs the benchmark on CPU 1 alone (taskset) while other work keeps to CPU 0;
#        the tables then say "1 cores" and RUN.md must say what ran beside it).
# Results of the parts accumulate in OUT; each part regenerates the reports from all
# of OUT, so the committed pages always show the newest figures of every part.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}"
REPEATS="${REPEATS:-3}"
OUT="${OUT:-results/full-size}"
WORK="${WORK:-target-bench/run-full}"
ONLY="${ONLY:-T1 T2 T3 T4 T5 T6 T7 T8 KV}"
REPORTS="${REPORTS:-reports}"
DRY="${DRY:-}"
PIN="${PIN:-}"

if [ -z "$DRY" ] && [ -z "${BIN:-}" ]; then
  cargo build --release -p quiredb-bench --features peers
  cargo build --release --bin quire
fi
BENCH="${BIN:-$CARGO_TARGET_DIR/release}/quire-bench"
QUIRE="${BIN:-$CARGO_TARGET_DIR/release}/quire"
mkdir -p "$OUT" "$WORK"
start=$(date +%s)

# run W ENGINES NOTE ARGS…: one workload and engine group, REPEATS repeats, into OUT/W.jsonl.
run() {
  local workload=$1 engines=$2 note=$3
  shift 3
  case " $ONLY " in *" $workload "*) ;; *) return 0 ;; esac
  local args=("$workload" --repeats "$REPEATS" --work-dir "$WORK/db" --out "$OUT/$workload.jsonl" "$@")
  if [ "$engines" != all ]; then
    args+=(--engines "$engines")
  fi
  if [ -n "$note" ]; then
    args+=(--note "$note")
  fi
  echo "== $workload [$engines] $* — $(date -u +%H:%M:%S), load average $(cut -d' ' -f1-3 /proc/loadavg)"
  if [ -n "$DRY" ]; then
    echo "$BENCH ${args[*]}"
    return 0
  fi
  local t0
  t0=$(date +%s)
  if [ -n "$PIN" ]; then
    taskset -c "$PIN" "$BENCH" "${args[@]}"
  else
    "$BENCH" "${args[@]}"
  fi
  echo "== $workload took $(( $(date +%s) - t0 )) s"
}

# shellcheck source=benches/t5-inputs.sh
source benches/t5-inputs.sh # (the scripts run from the repository root)

slow="the largest size that fits about 20 minutes for this peer (3 repeats); QuireDB beside it at the same size"
run T1 all "" --full
run T2 quiredb,quiredb-full,sqlite-wal,sqlite-delete,bdb,redb,lmdb "10 M records: $slow (full 57,852,305)" --n 10000000
run T2 quiredb,lmdb "40 M records: $slow (full 57,852,305)" --n 40000000
run T3 quiredb,files,sqlite-wal "" --full
run T3 quiredb,bdb-recno,bdb-queue "20 M records: $slow (full 57,852,305)" --n 20000000
run T4 quiredb,libspatialindex-mem,libspatialindex-disk,sqlite-rtree "500 k points: $slow (full 57,852,305)" --n 500000
run T4 quiredb,quiredb-f32,quiredb-hilbert,rstar,rstar-6-16,boost,boost-quadratic-16 \
  "2.5 M points: $slow (full 57,852,305)" --n 2500000
case " $ONLY " in *" T5 "*) [ -n "$DRY" ] || t5_inputs "$QUIRE" "$WORK/t5" 1 ;; esac
run T5 all "collections of factor 1 (~116 MB each); XMark f=10 of full mode and TreeBank-like left out: BaseX needs hours" \
  --qsets "$WORK/t5"
run T6 all "" --full
run T7 all "" --full
run T8 all "" --full
run KV all "1.5 M pairs: $slow (full 5 M)" --n 1500000
run KV quiredb,quiredb-full,lmdb "" --full

if [ -z "$DRY" ]; then
  rm -rf "$WORK/db"
  "$BENCH" report --input "$OUT" --output "$REPORTS"
fi
echo "run-full: done in $(( ($(date +%s) - start) / 60 )) min; $REPORTS/ regenerated from $OUT"
echo "run-full: update reports/RUN.md (date, load average, which parts, sizes) before committing"
