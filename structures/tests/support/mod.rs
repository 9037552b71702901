//! Helpers of the power-cut simulator (`powercut.rs`), its only user: the workload
//! and its model (`workload.rs`), the bookkeeping of what a crash may bring back
//! (`book.rs`), the opening and verification of crash images (`images.rs`) and the
//! run's counters (`counters.rs`).

pub mod book;
pub mod counters;
pub mod images;
pub mod workload;
