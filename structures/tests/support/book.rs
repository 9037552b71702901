//! The power-cut simulator's bookkeeping of what a crash may bring back: the newest
//! acknowledged commit, the newest one a sync made durable, a commit in flight, and the
//! model of every commit in between ([`Book`]); and the bounds an image must respect
//! ([`Bounds`]).

use super::images::Cut;
use super::workload::Model;
use quiredb_engine::Durability;
use quiredb_engine::storage::CrashMode;
use std::collections::BTreeMap;

/// The driver's knowledge: what was acknowledged, and the model of every commit a crash
/// may still bring back (`durable_acked..=attempted`).
/// The fields are those of [`Bounds`], plus the models.
pub struct Book {
    /// Model of each commit in `durable_acked..=attempted`, by counter.
    pub history: BTreeMap<u64, Model>,
    pub durable_acked: u64,
    pub acked: u64,
    pub attempted: u64,
    pub torn: bool,
}

impl Default for Book {
    /// A new file: commit 0, empty structures, synced.
    fn default() -> Book {
        let history = BTreeMap::from([(0, Model::default())]);
        Book { history, durable_acked: 0, acked: 0, attempted: 0, torn: false }
    }
}

impl Book {
    /// The model of the newest acknowledged commit.
    pub fn model(&self) -> &Model {
        &self.history[&self.acked]
    }

    /// A commit of `model` is about to be attempted.
    pub fn attempt(&mut self, model: Model) {
        self.attempted = model.commit;
        self.history.insert(model.commit, model);
    }

    /// The attempted commit was acknowledged.
    pub fn acknowledge(&mut self, durability: Durability) {
        self.acked = self.attempted;
        if durability != Durability::None {
            self.synced();
        }
    }

    /// Everything acknowledged is durable.
    pub fn synced(&mut self) {
        self.durable_acked = self.acked;
        self.history = self.history.split_off(&self.durable_acked);
    }

    /// The attempt failed before its commit began: it cannot be found after a crash.
    pub fn abandon(&mut self) {
        self.attempted = self.acked;
        self.history.retain(|&commit, _| commit <= self.acked);
    }

    /// A process holding commit `counter` took over (`durable`: the whole file is).
    pub fn recover(&mut self, counter: u64, durable: bool) {
        self.history.retain(|&commit, _| commit <= counter);
        (self.acked, self.attempted, self.torn) = (counter, counter, false);
        if durable {
            self.synced();
        }
    }

    /// What an image taken now may hold.
    pub fn bounds(&self) -> Bounds {
        Bounds { durable_acked: self.durable_acked, acked: self.acked, attempted: self.attempted, torn: self.torn }
    }
}

/// Commit counters a recovered file may hold.
#[derive(Clone, Copy, Debug)]
pub struct Bounds {
    /// Newest acknowledged commit made durable by a sync (its own or a later one's).
    pub durable_acked: u64,
    /// Newest acknowledged commit.
    pub acked: u64,
    /// Newest commit attempted: `acked + 1` while a failed commit is in flight.
    pub attempted: u64,
    /// A torn write happened: even an image keeping every write is a power cut.
    pub torn: bool,
}

impl Bounds {
    /// The lowest counter an image made by `cut` may hold: a process crash (every write
    /// kept, none torn) loses nothing acknowledged, a power cut nothing synced.
    pub fn low(&self, cut: Cut) -> u64 {
        if cut == Cut::Mode(CrashMode::KeepUnsynced) && !self.torn { self.acked } else { self.durable_acked }
    }
}
