#!/usr/bin/env bash
# CI smoke run of the benchmark harness (called by .ci/run after the tests): builds
# quire-bench with the native peers (`--features peers`; benches/install-peers.sh has
# installed their Debian packages) and runs every workload on every peer at tiny sizes
# with cross-checks on (T1–T8 and KV, QuireDB included). One repeat: the smoke run
# proves the harness works, it does not measure. Must stay under 5 minutes including
# the build.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
# .ci/run builds it beforehand (QUIRE_CI_BUILT) with the rest of the workspace.
[ -n "${QUIRE_CI_BUILT:-}" ] || cargo build --release -p quiredb-bench --features peers
target_dir="${CARGO_TARGET_DIR:-target}"
results="$(mktemp -d)"
trap 'rm -rf "$results"' EXIT
"$target_dir/release/quire-bench" all --smoke --repeats 1 \
  --work-dir "$results/work" --out "$results/smoke.jsonl"
"$target_dir/release/quire-bench" report --input "$results" --output "$results/reports"
# Every peer of BENCHMARKS.md must appear in the output: a missing peer fails CI.
for engine in sqlite-wal sqlite-delete lmdb redb fjall bdb bdb-queue bdb-recno rstar rstar-6-16 boost \
  libspatialindex-mem libspatialindex-disk sqlite-rtree basex files; do
  if ! grep -q "\"engine\":\"$engine\"" "$results/smoke.jsonl"; then
    echo "benches/ci.sh: peer $engine missing from the smoke results" >&2
    exit 1
  fi
done
# Every workload of `all` must have produced records, QuireDB's included.
for workload in T1 T2 T3 T4 T5 T6 T7 T8 KV; do
  if ! grep -q "\"workload\":\"$workload\"" "$results/smoke.jsonl"; then
    echo "benches/ci.sh: workload $workload missing from the smoke results" >&2
    exit 1
  fi
done
if ! grep -q '"engine":"quiredb"' "$results/smoke.jsonl"; then
  echo "benches/ci.sh: quiredb missing from the smoke results" >&2
  exit 1
fi
echo "benches/ci.sh: smoke run passed in $(( $(date +%s) - start )) s"
