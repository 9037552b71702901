//! quiredb-fuzz: fuzz targets for QuireDB and the stable, in-process driver that runs
//! them (`quire-fuzz`), plus AFL++ harnesses (`afl-*`, feature `afl`).
//!
//! Five targets ([`Target`]): `db` (open and check a mutated database file),
//! `xpath` (the XPath parser and reference evaluator), `xml` (the streaming XML parser
//! against roxmltree), `xml-store` (the native XML store loaded and read back against
//! roxmltree), `csv` (the meteorological CSV loader). Each is a function from bytes to nothing that panics exactly when it finds
//! a bug; each comes with built-in seeds, a dictionary and a structure-aware mutator.
//! `README.md` beside this crate has the commands, the runs and their results.
//!
//! Read next: `db/mod.rs`, `xpath.rs`, `xml.rs`, `xml_store.rs`, `meteo_csv.rs`; `bin/quire-fuzz.rs` for the driver.
#![deny(unsafe_code)]

pub mod alloc_guard;
pub mod db;
pub mod havoc;
pub mod meteo_csv;
pub mod rng;
pub mod xml;
pub mod xml_store;
pub mod xpath;

use rng::Rng;

/// A fuzz target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// Open, check, read and write a mutated database file.
    Db,
    /// Parse XPath text; round-trip and evaluate what parses.
    Xpath,
    /// Load CSV text with one of several schemas.
    Csv,
    /// Parse an XML document with the streaming parser and with roxmltree; compare.
    Xml,
    /// Load one to three XML documents into the native store; check and compare it.
    XmlStore,
}

impl Target {
    /// Every target, in the order CI runs them.
    pub const ALL: [Target; 5] = [Target::Xpath, Target::Xml, Target::XmlStore, Target::Csv, Target::Db];

    /// The target's name on the command line and in file names.
    pub fn name(self) -> &'static str {
        match self {
            Target::Db => "db",
            Target::Xpath => "xpath",
            Target::Csv => "csv",
            Target::Xml => "xml",
            Target::XmlStore => "xml-store",
        }
    }

    /// The target called `name`.
    pub fn from_name(name: &str) -> Option<Target> {
        Target::ALL.into_iter().find(|target| target.name() == name)
    }

    /// Runs one input; a panic is a finding.
    pub fn run(self, input: &[u8]) {
        match self {
            Target::Db => db::run(input),
            Target::Xpath => xpath::run(input),
            Target::Csv => meteo_csv::run(input),
            Target::Xml => xml::run(input),
            Target::XmlStore => xml_store::run(input),
        }
    }

    /// Built-in seed inputs (the committed corpus adds to them).
    pub fn seeds(self) -> Vec<Vec<u8>> {
        match self {
            Target::Db => {
                let mut rng = Rng::new(0xDB);
                let mut seeds: Vec<Vec<u8>> = (0..db::images::PLAIN_IMAGES as u8).map(|image| vec![image]).collect();
                seeds.push(vec![db::images::LOGGED_SELECTOR]);
                seeds.extend((0..32).map(|_| db::program::generate(&mut rng)));
                seeds
            }
            Target::Xpath => xpath::seeds(),
            Target::Csv => meteo_csv::seeds(),
            Target::Xml => xml::seeds(),
            Target::XmlStore => xml_store::seeds(),
        }
    }

    /// Tokens the byte-level mutator inserts.
    pub fn dictionary(self) -> &'static [&'static [u8]] {
        match self {
            Target::Db => &[],
            Target::Xpath => xpath::DICTIONARY,
            Target::Csv => meteo_csv::DICTIONARY,
            Target::Xml => xml::DICTIONARY,
            Target::XmlStore => xml_store::DICTIONARY,
        }
    }

    /// One structure-aware mutation.
    pub fn mutate(self, rng: &mut Rng, input: &mut Vec<u8>) {
        match self {
            Target::Db => db::program::mutate(rng, input),
            Target::Xpath => xpath::mutate(rng, input),
            Target::Csv => meteo_csv::mutate(rng, input),
            Target::Xml => xml::mutate(rng, input),
            Target::XmlStore => xml_store::mutate(rng, input),
        }
    }

    /// The input of index `index` in a run seeded with `seed` over `corpus`: a corpus
    /// entry with 1–8 stacked mutations, each structure-aware or havoc. A pure function
    /// of its arguments, so `(seed, index)` names an input.
    pub fn input(self, seed: u64, index: u64, corpus: &[Vec<u8>]) -> Vec<u8> {
        let mut rng = Rng::for_input(seed, index);
        let mut input = rng.pick(corpus).clone();
        for _ in 0..rng.small_len(8) {
            if rng.ratio(1, 2) {
                self.mutate(&mut rng, &mut input);
            } else {
                havoc::mutate(&mut rng, &mut input, self.dictionary(), corpus);
            }
        }
        input
    }

    /// Runs every seed, then `inputs` inputs of a run seeded with `seed` (the unit tests'
    /// quick check that a target holds; it panics like the target does).
    pub fn smoke(self, seed: u64, inputs: u64) {
        println!("{} smoke: seed {seed:#x}, {inputs} inputs", self.name());
        let corpus = self.seeds();
        for input in &corpus {
            self.run(input);
        }
        for index in 0..inputs {
            self.run(&self.input(seed, index, &corpus));
        }
    }
}
