//! The counters of a power-cut simulation run, printed at its end: what the workload
//! did (commits per durability, aborts, retries, spills, failed commits) and what the
//! crash images held (fallbacks to the older meta, in-flight and older commits).

use super::images::Cut;
use quiredb_engine::Durability;
use quiredb_engine::storage::{CrashMode, FaultKind};

/// What happened in a run, printed at its end.
#[derive(Debug, Default)]
pub struct Counters {
    pub steps: u64,
    /// Acknowledged commits by durability ([`durability_index`]).
    pub commits: [u64; 3],
    pub aborts: u64,
    pub retries: u64,
    pub spilling_txns: u64,
    pub spilled_pages: u64,
    /// Transactions failed by a fault, by its kind ([`fault_index`]).
    pub failed_commits: [u64; 4],
    /// Faults armed at an operation past the transaction (it committed).
    pub faults_missed: u64,
    pub crash_points: u64,
    pub mid_txn_points: u64,
    pub images: usize,
    /// Images by the way they were cut ([`cut_index`]).
    pub images_by_cut: [u64; 5],
    /// Images whose opening fell back to the older meta page.
    pub fell_back: u64,
    pub in_flight_recovered: u64,
    pub older_recovered: u64,
    pub continued: u64,
    pub process_restarts: u64,
    pub image_restarts: u64,
    /// Broken invariants (more than zero only with `QUIRE_POWERCUT_TOLERATE`).
    pub failures: usize,
}

impl Counters {
    /// Prints the counters, a group a line.
    pub fn print(&self, seed: u64, last_commit: u64) {
        let c = self;
        println!("powercut: seed {seed}, {} steps, last commit {last_commit}", c.steps);
        println!("  commits Full/Checksummed/None {:?}, aborts {}, retries {}", c.commits, c.aborts, c.retries);
        println!("  spilling transactions {}, pages spilled {}", c.spilling_txns, c.spilled_pages);
        println!(
            "  failed commits EIO/ENOSPC/power cut/torn write {:?}, faults armed past the transaction {}",
            c.failed_commits, c.faults_missed
        );
        println!("  crash points {} ({} inside a transaction), images {}", c.crash_points, c.mid_txn_points, c.images);
        println!("  images Keep/Drop/RandomSectors/Subset/LoseOne {:?}", c.images_by_cut);
        println!(
            "  recovered: fell back to the older meta {}, in-flight commit {}, older than acknowledged {}",
            c.fell_back, c.in_flight_recovered, c.older_recovered
        );
        println!(
            "  then: continued live {}, process restarts {}, restarts from an image {}",
            c.continued, c.process_restarts, c.image_restarts
        );
        println!("  failures {}", c.failures);
    }
}

/// Position of a durability in [`Counters::commits`].
pub fn durability_index(durability: Durability) -> usize {
    match durability {
        Durability::Full => 0,
        Durability::Checksummed => 1,
        Durability::None => 2,
    }
}

/// Position of a way to cut an image in [`Counters::images_by_cut`].
pub fn cut_index(cut: Cut) -> usize {
    match cut {
        Cut::Mode(CrashMode::KeepUnsynced) => 0,
        Cut::Mode(CrashMode::DropUnsynced) => 1,
        Cut::Mode(CrashMode::RandomSectors(_)) => 2,
        Cut::Mode(CrashMode::Subset(_)) => 3,
        Cut::LoseOne(_) => 4,
    }
}

/// Position of a fault kind in [`Counters::failed_commits`].
pub fn fault_index(kind: FaultKind) -> usize {
    match kind {
        FaultKind::Eio => 0,
        FaultKind::Enospc => 1,
        FaultKind::PowerCut => 2,
        FaultKind::TornWrite => 3,
    }
}
