//! XML collection generators: XMark-, DBLP-, SwissProt- and TreeBank-like documents,
//! deterministic for a seed, streamed to any writer, scaled by a factor.
//!
//! XMark, DBLP and SwissProt replay a [`Profile`] learned from the real samples in
//! `../shared/data/xml` (`profiles/*.json`, made by [`learn::learn`]; see the ignored
//! test `regenerate_profiles` in `tests.rs`). Factor 1 is about 116 MB for every kind
//! (the size of XMark at factor 1); XMark at factor 1 matches `xmark_f1.xml` in
//! elements per tag and in depth. TreeBank has no sample: see `treebank.rs`.
//!
//! Read next: `generator.rs` (profile replay), `profile.rs` (the model).

pub mod generator;
pub mod learn;
pub mod profile;
#[cfg(test)]
mod query_tests;
#[cfg(test)]
mod store_tests;
#[cfg(test)]
mod tests;
pub mod treebank;

use std::io::Write;
use std::str::FromStr;

pub use generator::Stats;
pub use profile::Profile;

use crate::error::{Error, Result};

/// The kinds of collection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    Xmark,
    Dblp,
    Swissprot,
    Treebank,
}

impl Kind {
    /// Every kind, in a stable order.
    pub const ALL: [Kind; 4] = [Kind::Xmark, Kind::Dblp, Kind::Swissprot, Kind::Treebank];

    /// The lower-case name used on the command line and in file names.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Xmark => "xmark",
            Kind::Dblp => "dblp",
            Kind::Swissprot => "swissprot",
            Kind::Treebank => "treebank",
        }
    }

    /// The committed profile of a profile-driven kind (`None` for TreeBank).
    pub fn profile(self) -> Result<Option<Profile>> {
        let json = match self {
            Kind::Xmark => include_str!("profiles/xmark.json"),
            Kind::Dblp => include_str!("profiles/dblp.json"),
            Kind::Swissprot => include_str!("profiles/swissprot.json"),
            Kind::Treebank => return Ok(None),
        };
        serde_json::from_str(json).map(Some).map_err(|e| Error::Profile(format!("{} profile: {e}", self.name())))
    }
}

impl FromStr for Kind {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        Kind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| Error::Argument(format!("unknown XML kind `{s}` (xmark, dblp, swissprot, treebank)")))
    }
}

/// Writes one document of `kind` at `factor` (> 0; 1 ≈ 116 MB) for `seed` to `out`.
pub fn generate<W: Write>(kind: Kind, factor: f64, seed: u64, out: W) -> Result<Stats> {
    if !(factor.is_finite() && factor > 0.0 && factor <= 10_000.0) {
        return Err(Error::Argument(format!("factor {factor} is not in (0, 10000]")));
    }
    match kind.profile()? {
        Some(profile) => generator::replay(&profile, factor, seed, out),
        None => treebank::generate(factor, seed, out),
    }
}
