#!/usr/bin/env bash
# Builds the engine broken on purpose, once per mutant, and runs the durability tests
# against each build: every mutant must make at least one of them fail (a test that
# passes whatever the engine does proves nothing). Prints one line per mutant and test
# binary with the failing tests. See engine/MUTANTS.md for what each mutant breaks.
#
#   bash engine/mutants.sh [mutant ...]      # default: all of them
#
# Each mutant builds in its own target directory (RUSTFLAGS differ), at nice 10.
set -euo pipefail
cd "$(dirname "$0")/.."
mutants=("$@")
if [ ${#mutants[@]} -eq 0 ]; then
  mutants=(commit_noop no_sync no_verify stale_record any_version log_no_crc log_no_sync log_skip_last
    checkpoint_no_sync group_no_wait compact_trim_pending log_reuse_epoch no_write_back no_overlay mmap_past_pool
    no_sigbus_handler map_fault_unseen behind_unlisted seen_any seen_kept log_epoch_unsynced stamp_early
    published_seen_early pipeline_epoch_start pipeline_out_of_order catalog_kept_first rebuilt_record_low
    rebuild_log_free group_hold_idle grace_none peeked_ignored group_seen_early compact_no_sync_step
    compact_record_stays)
fi
export QUIRE_CRASH_KILLS="${QUIRE_CRASH_KILLS:-40}"
status=0
for mutant in "${mutants[@]}"; do
  export CARGO_TARGET_DIR="${MUTANT_TARGET_ROOT:-/tmp/quire-mutants}/$mutant"
  export RUSTFLAGS="--cfg quire_mutant=\"$mutant\""
  targets=("-p quiredb-engine --test engine")
  case "$mutant" in
    # The commit log: the XML store's tests do not log; a torn append (log_no_crc) and a
    # checkpoint cut between its meta write and its sync are the engine tests' (the
    # simulator tears a durable write only when a fault strikes that very operation).
    log_no_crc | checkpoint_no_sync) ;;
    # Compaction runs in the engine's compaction tests only; the map's faults are made
    # in the engine's `mapped` test.
    # Read-side mutants (a snapshot shown a version it cannot see) need readers beside
    # commits: the engine's model and snapshot tests have them.
    # Two appends in flight, one landing before the other, need a storage that holds a
    # durable write back on request: the engine's `pipeline` tests have one (the
    # simulator's durable writes land whole and at once).
    pipeline_* | compact_* | mmap_past_pool | no_sigbus_handler | map_fault_unseen | seen_any | stamp_early) ;;
    published_seen_early) targets=("-p quiredb-engine --test engine" "-p quiredb-engine --lib pool::") ;;
    # A frame that kept the snapshots seen to read its old page is trusted by one of
    # them only if it is given a page of another version that snapshot cannot see, and
    # the tests of whole transactions cannot arrange that; the pool's own test does.
    seen_kept) targets=("-p quiredb-engine --lib pool::") ;;
    # A lone record held back with nothing in flight hangs a commit (nothing lands to
    # wake its waiter) only when no later commit comes: the group's own test checks the
    # rule's bounds instead of waiting for a hang.
    group_hold_idle) targets=("-p quiredb-engine --lib txn::group::") ;;
    # A frame read unpinned given new bytes while its reader still reads it: the pool's
    # grace test and the engine's snapshot test that commits inside `with_page` (the
    # B+tree's readers beside a writer meet it only by chance, so they are not asked).
    grace_none | peeked_ignored) targets=("-p quiredb-engine --lib pool::" "-p quiredb-engine --test engine snapshot::") ;;
    # A commit shown to readers while its append is in flight: only a storage that holds
    # the append back (the engine's `pipeline` tests) leaves a reader time to look.
    group_seen_early) ;;
    # The XML store's test steps are logged commits since they write no commit record:
    # their durable append is no sync, so `no_sync` reaches them only through the engine.
    log_* | group_* | no_write_back | no_overlay | rebuil* | no_sync) targets+=("-p quiredb-structures --test crash --test powercut") ;;
    # The catalog kept between write transactions is wrong only once a second
    # structure is created or one moves: the engine's catalog test and the XML store's.
    catalog_kept_first) targets+=("-p quiredb-xml --test xpath store::") ;;
    *) targets+=("-p quiredb-structures --test crash --test powercut" "-p quiredb-xml --test xpath store::") ;;
  esac
  for target in "${targets[@]}"; do
    log="$(mktemp)"
    # shellcheck disable=SC2086
    if nice -n 10 cargo test --release --no-fail-fast $target -- --test-threads=2 >"$log" 2>&1; then
      echo "$mutant [$target]: every test passed -- the tests do not see this mutant"
      status=1
    else
      failed=$(grep -E '^    [a-z_:]+$' "$log" | tr -d ' ' | tr '\n' ' ')
      if [ -z "$failed" ]; then
        echo "$mutant [$target]: did not build or run:"; tail -20 "$log"; status=1
      else
        echo "$mutant [$target]: failing: $failed"
      fi
    fi
    rm -f "$log"
  done
done
exit $status
