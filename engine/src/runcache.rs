//! The commit record's runs of free pages, kept encoded a bucket of pages at a time, so
//! that a commit encodes only the buckets whose pages changed since the last record.
//!
//! Every commit writes the whole free-space record (`freespace.rs`): the runs of the
//! pages free or pending, a few thousand with a commit log of 2,048 pages, most of them
//! the same as in the last record. Encoding them all took 10–16 µs of a one-key logged
//! commit's 35–46 µs under the writer lock (`group_probe`, 2,048-page log). Here the
//! pages are cut into buckets of [`BUCKET_PAGES`]; each bucket keeps its first and last
//! runs and the runs between them already encoded (LEB128 gaps, as in the stream). A
//! record is then the buckets in order: the first and last runs go through the stream's
//! run encoder (a run at a bucket's edge may continue into the next bucket), the
//! middle bytes are copied. The stream is byte for byte what encoding every page gives
//! (a randomised test compares the two).
//!
//! Invariants: a bucket's cache holds exactly the free and pending pages in its range as
//! they were when it was encoded; every change to either set since then named the
//! bucket ([`Touched`]), and the next record encodes it again. Pages a commit frees are
//! not yet pending when its record is encoded: their buckets are encoded for that record
//! alone and stay marked.

use crate::freespace::Runs;
use std::collections::BTreeMap;

/// Pages in a bucket: small enough that re-encoding one costs little (a page map of
/// 1 M keys holds ~10,000 pages, a third of them free or pending), large enough that a
/// record of many sparse buckets is mostly copied.
pub const BUCKET_PAGES: u64 = 64;

/// Bucket numbers noted more often than this since the last record make the next one
/// encode everything (a load of the record, a large free).
const MOST_TOUCHED: usize = 4096;

/// Buckets whose pages changed since they were encoded.
#[derive(Debug, Default)]
pub struct Touched {
    buckets: Vec<u64>,
    all: bool,
}

impl Touched {
    /// Notes that `page` joined or left the free or pending pages.
    #[inline]
    pub fn page(&mut self, page: u64) {
        if !self.all {
            self.buckets.push(page / BUCKET_PAGES);
            if self.buckets.len() > MOST_TOUCHED {
                self.everything();
            }
        }
    }

    /// Notes that any page may have changed.
    pub fn everything(&mut self) {
        self.all = true;
        self.buckets = Vec::new();
    }
}

/// One bucket's runs: the first, the last (the same when there is one), and those
/// between them encoded, each gap counted from the end of the run before it.
#[derive(Debug, Default)]
struct Bucket {
    first: (u64, u64),
    last: (u64, u64),
    middle: Vec<u8>,
    middle_runs: u64,
    /// End of the last run in `middle` (`first`'s end when there is none).
    middle_end: u64,
}

impl Bucket {
    /// The bucket of the ascending, distinct `pages` (none when they are empty), in one
    /// pass: a run is encoded once the one after it shows it is not the last.
    fn of(pages: impl Iterator<Item = u64>) -> Option<Bucket> {
        let mut pages = pages.peekable();
        let mut runs = std::iter::from_fn(|| {
            let start = pages.next()?;
            let mut end = start + 1;
            while pages.next_if_eq(&end).is_some() {
                end += 1;
            }
            Some((start, end))
        });
        let first = runs.next()?;
        let (mut last, mut middle) = (first, None::<Runs>);
        for run in runs {
            if last != first {
                let encoder = middle.get_or_insert_with(|| {
                    let mut encoder = Runs::new(2 * BUCKET_PAGES as usize);
                    encoder.restart_at(first.1);
                    encoder
                });
                encoder.push_run(last.0, last.1);
            }
            last = run;
        }
        let mut bucket = Bucket { first, last, middle_end: first.1, ..Bucket::default() };
        if let Some(encoder) = middle {
            (bucket.middle, bucket.middle_runs, bucket.middle_end) = encoder.into_closed();
        }
        Some(bucket)
    }

    /// Feeds the bucket's runs to the stream's encoder.
    fn encode_into(&self, runs: &mut Runs) {
        runs.push_run(self.first.0, self.first.1);
        if self.middle_runs > 0 {
            runs.append_encoded(&self.middle, self.middle_runs, self.middle_end);
        }
        if self.last != self.first {
            runs.push_run(self.last.0, self.last.1);
        }
    }
}

/// The encoded buckets of the free and pending pages (under the free-space lock).
#[derive(Debug, Default)]
pub struct RunsCache {
    buckets: BTreeMap<u64, Bucket>,
}

impl RunsCache {
    /// Feeds the runs of `free` ∪ `waiting` ∪ `now` (each ascending, the three disjoint)
    /// to `runs`, encoding again the buckets `touched` names and those holding a page of
    /// `now`; clears `touched`, except for the buckets of `now`.
    pub fn encode(
        &mut self,
        free: &std::collections::BTreeSet<u64>,
        waiting: &[u64],
        now: &[u64],
        touched: &mut Touched,
        runs: &mut Runs,
    ) {
        let pages_in = |bucket: u64| {
            let (low, high) = (bucket * BUCKET_PAGES, (bucket + 1) * BUCKET_PAGES);
            let waiting = &waiting[waiting.partition_point(|&page| page < low)..];
            let waiting = &waiting[..waiting.partition_point(|&page| page < high)];
            crate::freespace::merge_ascending(free.range(low..high).copied(), waiting.iter().copied())
        };
        if std::mem::take(&mut touched.all) {
            self.buckets.clear();
            let mut all = crate::freespace::merge_ascending(free.iter().copied(), waiting.iter().copied()).peekable();
            while let Some(&page) = all.peek() {
                let bucket = page / BUCKET_PAGES;
                let within = std::iter::from_fn(|| all.next_if(|&page| page / BUCKET_PAGES == bucket));
                if let Some(encoded) = Bucket::of(within) {
                    self.buckets.insert(bucket, encoded);
                }
            }
        }
        let mut changed = std::mem::take(&mut touched.buckets);
        changed.sort_unstable();
        changed.dedup();
        for bucket in changed {
            match Bucket::of(pages_in(bucket)) {
                Some(encoded) => self.buckets.insert(bucket, encoded),
                None => self.buckets.remove(&bucket),
            };
        }
        // The buckets holding pages freed by this commit, encoded with them, once.
        let mut with_now: BTreeMap<u64, Bucket> = BTreeMap::new();
        let mut rest = now;
        while let Some(&page) = rest.first() {
            let bucket = page / BUCKET_PAGES;
            let count = rest.partition_point(|&other| other / BUCKET_PAGES == bucket);
            let (mine, after) = rest.split_at(count);
            let pages = crate::freespace::merge_ascending(pages_in(bucket), mine.iter().copied());
            with_now.insert(bucket, Bucket::of(pages).expect("a page of `now` is in it"));
            touched.buckets.push(bucket);
            rest = after;
        }
        let mut stored = self.buckets.iter().peekable();
        let mut fresh = with_now.iter().peekable();
        loop {
            let from_now = match (stored.peek(), fresh.peek()) {
                (Some((a, _)), Some((b, _))) => b <= a,
                (None, Some(_)) => true,
                (Some(_), None) => false,
                (None, None) => break,
            };
            let (bucket, encoded) = if from_now { fresh.next() } else { stored.next() }.expect("peeked");
            if from_now {
                stored.next_if(|(other, _)| *other == bucket); // replaced by the fresh one
            }
            encoded.encode_into(runs);
        }
    }
}

/// The free pages (`FreeSpace::free`): a set that notes in [`Touched`] every page that
/// joins or leaves it, so that the record's cache learns of it. Reads go to the set.
#[derive(Debug, Default)]
pub struct FreePages {
    set: std::collections::BTreeSet<u64>,
    /// What changed since the last record (also noted by the pending pages' changes).
    pub touched: Touched,
}

impl std::ops::Deref for FreePages {
    type Target = std::collections::BTreeSet<u64>;

    fn deref(&self) -> &Self::Target {
        &self.set
    }
}

impl FreePages {
    /// Adds `page`; true if it was not free.
    pub fn insert(&mut self, page: u64) -> bool {
        self.touched.page(page);
        self.set.insert(page)
    }

    /// Removes `page`; true if it was free.
    pub fn remove(&mut self, page: &u64) -> bool {
        self.touched.page(*page);
        self.set.remove(page)
    }

    /// Takes the lowest free page.
    pub fn pop_first(&mut self) -> Option<u64> {
        let page = self.set.pop_first()?;
        self.touched.page(page);
        Some(page)
    }

    /// Takes the highest free page.
    pub fn pop_last(&mut self) -> Option<u64> {
        let page = self.set.pop_last()?;
        self.touched.page(page);
        Some(page)
    }

    /// Takes every free page at or above `page`.
    pub fn split_off(&mut self, page: &u64) -> std::collections::BTreeSet<u64> {
        let taken = self.set.split_off(page);
        taken.iter().for_each(|&page| self.touched.page(page));
        taken
    }

    /// The set and the changes, to encode a record ([`RunsCache::encode`]).
    pub fn parts(&mut self) -> (&std::collections::BTreeSet<u64>, &mut Touched) {
        (&self.set, &mut self.touched)
    }
}

impl Extend<u64> for FreePages {
    fn extend<I: IntoIterator<Item = u64>>(&mut self, pages: I) {
        for page in pages {
            self.insert(page);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::freespace::{FreeSpace, encode_record, merge_ascending};
    use crate::page::TxnId;
    use std::collections::BTreeSet;

    /// Pages free, pending or freed now, none in two of them: the pages `0..universe`
    /// not yet used, drawn at random.
    fn unused(space: &FreeSpace, now: &BTreeSet<u64>, page: u64) -> bool {
        !space.free.contains(&page) && !space.waiting().contains(&page) && !now.contains(&page)
    }

    #[test]
    fn records_encoded_from_the_cache_equal_records_encoded_page_by_page() {
        // Proves: after any sequence of changes to the free and pending pages (one by
        // one, in runs, many at once), the record built from the cached buckets is the
        // same stream as the one built from every page, with the pages a commit frees.
        let seed = quiredb_test_support::random_seed();
        let mut rng = quiredb_test_support::Rng::new(seed);
        for round in 0..20 {
            let universe = 200 + rng.below(3000);
            let mut space = FreeSpace::default();
            let mut txn = 1;
            for step in 0..300 {
                let mut now = BTreeSet::new();
                for _ in 0..rng.below(12) {
                    let page = rng.below(universe);
                    match rng.below(9) {
                        0 | 1 if unused(&space, &now, page) => drop(space.free.insert(page)),
                        2 => drop(space.free.remove(&page)),
                        3 => drop(space.free.pop_first()),
                        4 => drop(space.free.pop_last()),
                        5 => {
                            let run: Vec<u64> = (page..page + rng.below(80))
                                .filter(|&other| other < universe && unused(&space, &now, other))
                                .collect();
                            space.push_pending(TxnId(txn), run);
                            txn += 1;
                        }
                        6 => space.promote(None, TxnId(txn)),
                        7 if unused(&space, &now, page) => drop(now.insert(page)),
                        8 if rng.below(40) == 0 => {
                            let taken = space.free.split_off(&page);
                            let back: Vec<u64> = taken.into_iter().filter(|_| rng.below(2) == 0).collect();
                            space.free.extend(back);
                        }
                        _ => {}
                    }
                }
                if rng.below(60) == 0 {
                    let many: Vec<u64> = (0..universe).filter(|&page| unused(&space, &now, page)).collect();
                    space.free.extend(many.into_iter().filter(|page| page % 3 != 0)); // past the bound
                }
                let now: Vec<u64> = now.into_iter().collect();
                let (logical, unsynced) = (vec![4, 9], vec![(3, 7)]);
                let pending = merge_ascending(space.waiting().iter().copied(), now.iter().copied());
                let every_page = merge_ascending(space.free.iter().copied(), pending);
                let expected = encode_record(every_page, &logical, &unsynced);
                let cached = space.encode_record(&now, &logical, &unsynced);
                assert_eq!(cached, expected, "seed {seed} round {round} step {step}");
            }
        }
    }
}
