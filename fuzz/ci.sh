#!/usr/bin/env bash
# CI smoke run of the fuzz targets (under a minute each, about 3 minutes in all).
#
# Builds the stable in-process driver, replays each committed corpus, then runs each
# target with a fixed seed for a bounded time. Exits non-zero on any panic, abort or
# hang that fuzz/known-findings.txt does not list (those are reported, unfixed engine
# and structures bugs; see fuzz/README.md). Coverage-guided campaigns: fuzz/afl.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
# .ci/run builds it beforehand (QUIRE_CI_BUILT) with the rest of the workspace.
[ -n "${QUIRE_CI_BUILT:-}" ] || cargo build --release -p quiredb-fuzz --bin quire-fuzz
driver=${CARGO_TARGET_DIR:-target}/release/quire-fuzz
findings=${CARGO_TARGET_DIR:-target}/fuzz-findings
# target, inputs, seconds: a fixed stretch of inputs (run here in about the time
# given), cut short by the time on a slower machine.
for run in "xpath 750000 30" "xml 200000 30" "xml-store 100000 30" "csv 300000 40" "db 130000 50"; do
  set -- $run
  "$driver" replay "$1" "fuzz/corpus/$1"
  "$driver" run "$1" --seed 18 --inputs "$2" --seconds "$3" --hang-seconds 20 --corpus "fuzz/corpus/$1" \
    --findings "$findings" --known fuzz/known-findings.txt
done
