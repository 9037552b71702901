#!/usr/bin/env bash
# Side-by-side cost of QuireDB's durable single-operation commit, baseline against
# candidate (issue 18: "T1 and KV individual writes no more than 5 % slower than before
# the fixes, measured side by side with quire-bench").
#
# What it measures: with two quire-bench binaries A (baseline) and B (candidate), for
# the `quiredb` (Durability::Checksummed) and `quiredb-full` (Durability::Full) engines:
#   T1  insert / update / delete, one durable commit per operation (BENCHMARKS.md T1,
#       1,000 string pairs by default), and all three together ("all commits");
#   KV  "individual writes (commit each)": 1,000 single-pair durable commits into a
#       B+tree bulk-loaded with KV_N pairs (the other KV phases run too, as the harness
#       has no switch for them, but are not reported here).
# Berkeley DB (`bdb`, transactional, synchronous commit) runs once per round with the
# baseline binary as a reference peer: its spread across rounds shows how much the
# machine itself drifted during the comparison.
# Every figure comes from the harness's own JSON lines (`--out`): `value` = wall ms per
# commit, `cpu_value` = process CPU (getrusage user+sys) ms per commit, one sample per
# process (`--repeats 1`). Per round the binaries run alternately (A B, then B A), each in its
# own process and its own work dir (both under one temporary base dir, so on the same
# file system); the summary prints, per workload/op/mode, the median over rounds of A and
# of B, their ratio B/A, and the min–max of the per-round paired ratios B_i/A_i.
# Wall time per commit is fsync-bound (one sync for Checksummed, two for Full); CPU time
# per commit is the figure that is robust to neighbours on a shared machine.
#
# Usage: benches/compare-commit.sh [BASELINE [CANDIDATE]]
#   BASELINE   default /work/baseline-target/release/quire-bench (build of 9171b5e)
#   CANDIDATE  default ${CARGO_TARGET_DIR:-target}/release/quire-bench (relative paths are
#              taken from the repository root); pass the same binary twice to measure
#              the noise floor.
# Environment:
#   ROUNDS=3        rounds of A B (medians over rounds)
#   T1_N=1000       T1 pairs (published size; ~10 s Checksummed + ~19 s Full per run)
#   KV_N=250000     KV bulk-loaded pairs under the 1,000 single writes (published default
#                   1,000,000 costs ~40 s per engine per run instead of ~15 s; the single
#                   writes are 1,000 at any KV_N)
#   BDB_KV_N=20000  KV size of the Berkeley DB reference (its bulk load and 100×1,000
#                   batched writes run at ~3 k/s; at 20,000 a run takes ~40 s)
#   REF=1           0 skips the Berkeley DB reference runs
#   WORK_BASE=$TMPDIR or /tmp  where the scratch databases go (must not be tmpfs: fsync
#                   would be free there); removed at exit
#   KEEP=DIR        copy the raw JSON lines to DIR before cleaning up
#   PIN=CPU         run every benchmark process under `taskset -c CPU` (off by default:
#                   the commit path is single-threaded and CPU time does not depend on
#                   the core, while pinning on a shared 2-core machine only helps when
#                   the neighbours are kept off that core; nice is not used either —
#                   a lower priority would only add neighbours' time to the wall figures)
# The binaries are copied into the scratch dir first, so a rebuild of the candidate's
# target dir during the comparison cannot change what is measured. Before every run the
# scratch file system is synced (`sync -f`), so no run pays for the previous run's
# write-back. Output: a table on stdout; progress on stderr.
# Duration (measured on the 2-core machine, busy, load 5–10): 2.5–4 minutes per round
# with the defaults (2 × 10–37 s T1, 2 × 31–52 s KV, 25–80 s reference) plus a few
# seconds of preflight; ROUNDS=3 ≈ 8–12 minutes, ROUNDS=2 took 5.3 and 7.1 minutes.
# Noise floor (same binary as A and B, ROUNDS=2, load 5–10): B/A of the medians ranged
# 0.38–1.33 for wall and 0.69–1.55 for CPU per commit, so a 5 % verdict needs a quiet
# machine and a noise-floor run made in the same conditions.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
abs() { case "$1" in /*) printf '%s\n' "$1" ;; *) printf '%s\n' "$repo/$1" ;; esac; }

if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
  exit 0
fi
[ $# -le 2 ] || { echo "compare-commit: usage: $0 [BASELINE [CANDIDATE]]" >&2; exit 2; }

base_bin="$(abs "${1:-/work/baseline-target/release/quire-bench}")"
cand_bin="$(abs "${2:-${CARGO_TARGET_DIR:-target}/release/quire-bench}")"
ROUNDS="${ROUNDS:-3}"
T1_N="${T1_N:-1000}"
KV_N="${KV_N:-250000}"
BDB_KV_N="${BDB_KV_N:-20000}"
REF="${REF:-1}"
KEEP="${KEEP:-}"
PIN="${PIN:-}"
WORK_BASE="${WORK_BASE:-${TMPDIR:-/tmp}}"

for v in ROUNDS T1_N KV_N BDB_KV_N; do
  [[ "${!v}" =~ ^[1-9][0-9]*$ ]] || { echo "compare-commit: $v must be a positive integer" >&2; exit 2; }
done
for b in "$base_bin" "$cand_bin"; do
  [ -x "$b" ] || { echo "compare-commit: not an executable: $b" >&2; exit 2; }
done
command -v python3 >/dev/null || { echo "compare-commit: python3 is needed for the summary" >&2; exit 2; }
if [ -n "$PIN" ]; then command -v taskset >/dev/null || { echo "compare-commit: PIN needs taskset" >&2; exit 2; }; fi
mkdir -p "$WORK_BASE"
fstype="$(stat -f -c %T "$WORK_BASE")"
case "$fstype" in
  tmpfs | ramfs) echo "compare-commit: $WORK_BASE is on $fstype, where fsync costs nothing; set WORK_BASE" >&2; exit 2 ;;
esac

tmp="$(mktemp -d "$WORK_BASE/compare-commit.XXXXXX")"
child=""
cleanup() {
  local rc=$?
  if [ -n "$KEEP" ] && [ -d "$tmp/jsonl" ]; then
    mkdir -p "$KEEP" && cp "$tmp"/jsonl/* "$KEEP"/ 2>/dev/null || true
  fi
  if [ -n "$child" ]; then kill "$child" 2>/dev/null || true; wait "$child" 2>/dev/null || true; fi
  rm -rf "$tmp"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mkdir -p "$tmp/bin" "$tmp/jsonl" "$tmp/work-A" "$tmp/work-B" "$tmp/work-ref"
cp "$base_bin" "$tmp/bin/A"
cp "$cand_bin" "$tmp/bin/B"
cd "$tmp" # the harness writes nothing but --out and --work-dir; keep the caller's dir clean

log() { printf '[compare-commit %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# run WHO OUTFILE WORKLOAD ARGS… — one harness process, its table kept in a log.
run() {
  local who="$1" out="$2" workload="$3"
  shift 3
  local bin="$tmp/bin/$who" work="$tmp/work-$who"
  [ "$who" = ref ] && bin="$tmp/bin/A"
  local cmd=("$bin" "$workload" --repeats 1 --work-dir "$work/w" --out "$out" "$@")
  [ -n "$PIN" ] && cmd=(taskset -c "$PIN" "${cmd[@]}")
  sync -f "$tmp"
  local t0=$SECONDS
  "${cmd[@]}" >"$out.log" 2>&1 &
  child=$!
  if ! wait "$child"; then
    child=""
    log "FAILED: ${cmd[*]}"
    tail -20 "$out.log" >&2
    return 1
  fi
  child=""
  local load
  load="$(cut -d' ' -f1 /proc/loadavg)"
  echo "$load" >>"$tmp/load"
  log "$who $workload $* — $((SECONDS - t0)) s, load average $load"
}

start=$SECONDS
log "A (baseline)  $base_bin  sha256 $(sha256sum "$tmp/bin/A" | cut -c1-16)"
log "B (candidate) $cand_bin  sha256 $(sha256sum "$tmp/bin/B" | cut -c1-16)"
log "rounds $ROUNDS, T1_N $T1_N, KV_N $KV_N, reference bdb $([ "$REF" = 1 ] && echo "on (KV at $BDB_KV_N)" || echo off), scratch $tmp ($fstype)"

# Preflight at smoke size: both binaries run both modes (and the reference binary bdb).
mkdir -p "$tmp/preflight"
run A "$tmp/preflight/A.jsonl" T1 --smoke --engines quiredb,quiredb-full
run B "$tmp/preflight/B.jsonl" T1 --smoke --engines quiredb,quiredb-full
if [ "$REF" = 1 ]; then run ref "$tmp/preflight/ref.jsonl" T1 --smoke --engines bdb; fi

for r in $(seq 1 "$ROUNDS"); do
  log "round $r of $ROUNDS"
  # A B in odd rounds, B A in even ones: an order effect (the second run found the
  # disk cache warmer in the noise-floor runs) cancels out over pairs of rounds.
  order="A B"
  if [ $((r % 2)) -eq 0 ]; then order="B A"; fi
  for who in $order; do
    run "$who" "$tmp/jsonl/r$r-$who-T1.jsonl" T1 --n "$T1_N" --engines quiredb,quiredb-full
  done
  for who in $order; do
    run "$who" "$tmp/jsonl/r$r-$who-KV.jsonl" KV --n "$KV_N" --engines quiredb,quiredb-full
  done
  if [ "$REF" = 1 ]; then
    run ref "$tmp/jsonl/r$r-ref-T1.jsonl" T1 --n "$T1_N" --engines bdb
    run ref "$tmp/jsonl/r$r-ref-KV.jsonl" KV --n "$BDB_KV_N" --engines bdb
  fi
done
elapsed=$((SECONDS - start))

python3 - "$tmp/jsonl" "$ROUNDS" <<'PY'
import json, os, re, statistics, sys

folder, rounds = sys.argv[1], int(sys.argv[2])
OPS = {
    "T1": ["insert (commit each)", "update (commit each)", "delete (commit each)"],
    "KV": ["individual writes (commit each)"],
}
# data[(who, workload, engine, op)][round] = (wall ms/commit, cpu ms/commit)
data, commits = {}, {}
for name in sorted(os.listdir(folder)):
    m = re.fullmatch(r"r(\d+)-(A|B|ref)-(T1|KV)\.jsonl", name)
    if not m:
        continue
    rnd, who, wl = int(m[1]), m[2], m[3]
    totals = {}
    for line in open(os.path.join(folder, name)):
        rec = json.loads(line)
        if rec["op"] not in OPS[wl]:
            continue
        assert rec["unit"] == "ms/op" and rec["repeats"] == 1, rec
        key = (who, wl, rec["engine"], rec["op"])
        data.setdefault(key, {})[rnd] = (rec["value"], rec["cpu_value"])
        commits[(who, rec["context"]["commit"])] = 1
        t = totals.setdefault(rec["engine"], [0.0, 0.0, 0])
        t[0] += rec["wall_s"]; t[1] += rec["cpu_s"]; t[2] += rec["n"]
    if wl == "T1":
        for engine, (w, c, n) in totals.items():
            data.setdefault((who, wl, engine, "all commits"), {})[rnd] = (w * 1e3 / n, c * 1e3 / n)

med = statistics.median
def rng(xs):
    return f"{min(xs):.3f}–{max(xs):.3f}"

print(f"\nmedian over {rounds} rounds, ms per commit (A = baseline, B = candidate; "
      "B/A = ratio of medians; paired = min–max of per-round B_i/A_i)")
for who, commit in sorted(commits):
    print(f"  {who}: built from {commit}")
hdr = f"{'workload':8} {'op':32} {'engine':13} {'metric':5} {'A':>8} {'B':>8} {'B/A':>7}  {'paired B/A':13}  {'A min–max':13}  {'B min–max':13}"
print(hdr)
print("-" * len(hdr))
order = [("T1", op) for op in OPS["T1"] + ["all commits"]] + [("KV", op) for op in OPS["KV"]]
for wl, op in order:
    for engine in ["quiredb", "quiredb-full"]:
        a, b = data.get(("A", wl, engine, op), {}), data.get(("B", wl, engine, op), {})
        paired = sorted(set(a) & set(b))
        if not paired:
            continue
        for i, metric in enumerate(["wall", "cpu"]):
            xa, xb = [a[r][i] for r in paired], [b[r][i] for r in paired]
            ratios = [b[r][i] / a[r][i] for r in paired]
            print(f"{wl:8} {op:32} {engine:13} {metric:5} {med(xa):8.3f} {med(xb):8.3f} "
                  f"{med(xb) / med(xa):7.3f}  {rng(ratios):13}  {rng(xa):13}  {rng(xb):13}")
refs = [(wl, op) for wl, op in order if ("ref", wl, "bdb", op) in data]
if refs:
    print("\nreference peer bdb (baseline binary, once per round): median, min–max over rounds "
          "(max/min = the machine's drift)")
    for wl, op in refs:
        d = data[("ref", wl, "bdb", op)]
        for i, metric in enumerate(["wall", "cpu"]):
            xs = [d[r][i] for r in sorted(d)]
            print(f"{wl:8} {op:32} {'bdb':13} {metric:5} {med(xs):8.3f}  {rng(xs):13}  max/min {max(xs) / min(xs):.3f}")
PY
cores="$(nproc)"
lmin="$(sort -g "$tmp/load" | head -1)"
lmax="$(sort -g "$tmp/load" | tail -1)"
echo
echo "1-min load average after each run: $lmin–$lmax on $cores cores (the benchmark itself counts ~1)"
if awk -v l="$lmax" -v c="$cores" 'BEGIN { exit !(l > c) }'; then
  echo "WARNING: the machine was busy (load above $cores): differences of a few per cent are within the noise;"
  echo "         compare the paired B/A ranges with a noise-floor run (same binary as A and B) made alike."
fi
log "done in $elapsed s ($ROUNDS rounds)"
