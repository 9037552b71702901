#!/usr/bin/env bash
# Shared by run-reports.sh and run-full.sh (sourced): T5's generated XML collections
# and their query sets (deterministic, seed 42), cached in DIR between runs.
# Usage: t5_inputs QUIRE DIR FACTOR
t5_inputs() {
  local quire=$1 dir=$2 factor=$3
  mkdir -p "$dir"
  for kind in xmark swissprot dblp; do
    if [ ! -f "$dir/$kind-1.qset" ]; then
      "$quire" gen xml --kind "$kind" --factor "$factor" --out "$dir/$kind.xml"
      "$quire" gen queries "$dir/$kind.xml" --name "$kind" --out "$dir"
    fi
  done
}
