//! Recycled query results.
//!
//! A [`ResultSet`] is a list of rows, each a `u64` id, an `f64` score (a distance, or 0)
//! and a byte string, stored in three flat vectors. Queries take one from the
//! database's bounded [`ResultSetPool`]; dropping it clears it and returns its buffers,
//! capacity kept, so a repeated query allocates nothing in steady state.
//!
//! Life cycle: `Pooled ──take──> InUse ──drop──> Pooled` (or freed, when the pool is
//! full or the buffers grew beyond [`ResultSetPool::max_retained_bytes`]).

use parking_lot::Mutex;
use std::sync::Arc;

/// The buffers of a result set.
#[derive(Debug, Default)]
struct Buffers {
    ids: Vec<u64>,
    scores: Vec<f64>,
    bytes: Vec<u8>,
    ends: Vec<u32>,
}

impl Buffers {
    fn retained_bytes(&self) -> usize {
        self.ids.capacity() * 8 + self.scores.capacity() * 8 + self.bytes.capacity() + self.ends.capacity() * 4
    }

    fn clear(&mut self) {
        self.ids.clear();
        self.scores.clear();
        self.bytes.clear();
        self.ends.clear();
    }
}

/// A bounded pool of result-set buffers, one per database.
#[derive(Debug)]
pub struct ResultSetPool {
    free: Mutex<Vec<Buffers>>,
    capacity: usize,
    max_retained_bytes: usize,
}

impl ResultSetPool {
    /// A pool keeping at most `capacity` idle result sets of at most
    /// `max_retained_bytes` each.
    pub fn new(capacity: usize, max_retained_bytes: usize) -> Arc<Self> {
        Arc::new(ResultSetPool { free: Mutex::new(Vec::with_capacity(capacity)), capacity, max_retained_bytes })
    }

    /// The retention limit per result set.
    pub fn max_retained_bytes(&self) -> usize {
        self.max_retained_bytes
    }

    /// Idle result sets in the pool.
    pub fn idle(&self) -> usize {
        self.free.lock().len()
    }

    /// Takes an empty result set (recycled if one is idle).
    pub fn take(self: &Arc<Self>) -> ResultSet {
        let buffers = self.free.lock().pop().unwrap_or_default();
        ResultSet { buffers, pool: Some(Arc::clone(self)) }
    }

    fn give_back(&self, mut buffers: Buffers) {
        if buffers.retained_bytes() > self.max_retained_bytes {
            return;
        }
        buffers.clear();
        let mut free = self.free.lock();
        if free.len() < self.capacity {
            free.push(buffers);
        }
    }
}

/// Rows of a query result. Returns its buffers to the pool on drop.
#[derive(Debug)]
pub struct ResultSet {
    buffers: Buffers,
    pool: Option<Arc<ResultSetPool>>,
}

impl ResultSet {
    /// A result set that does not belong to any pool.
    pub fn detached() -> Self {
        ResultSet { buffers: Buffers::default(), pool: None }
    }

    /// Appends a row with id and score only.
    pub fn push(&mut self, id: u64, score: f64) {
        self.push_with_bytes(id, score, &[]);
    }

    /// Appends a row carrying bytes (a key, a value, a text).
    pub fn push_with_bytes(&mut self, id: u64, score: f64, bytes: &[u8]) {
        let buffers = &mut self.buffers;
        buffers.ids.push(id);
        buffers.scores.push(score);
        buffers.bytes.extend_from_slice(bytes);
        buffers.ends.push(u32::try_from(buffers.bytes.len()).expect("result set bytes stay below 4 GiB"));
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.buffers.ids.len()
    }

    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.buffers.ids.is_empty()
    }

    /// Removes all rows, keeping the buffers.
    pub fn clear(&mut self) {
        self.buffers.clear();
    }

    /// The ids of all rows.
    pub fn ids(&self) -> &[u64] {
        &self.buffers.ids
    }

    /// The scores of all rows.
    pub fn scores(&self) -> &[f64] {
        &self.buffers.scores
    }

    /// The bytes of row `row`.
    pub fn bytes(&self, row: usize) -> &[u8] {
        let end = self.buffers.ends[row] as usize;
        let start = if row == 0 { 0 } else { self.buffers.ends[row - 1] as usize };
        &self.buffers.bytes[start..end]
    }

    /// Row `row` as `(id, score, bytes)`.
    pub fn row(&self, row: usize) -> (u64, f64, &[u8]) {
        (self.buffers.ids[row], self.buffers.scores[row], self.bytes(row))
    }

    /// Sorts rows by (score, id) — for k-nearest results. Allocation-free for rows
    /// without bytes.
    pub fn sort_by_score(&mut self) {
        assert!(self.buffers.bytes.is_empty(), "sort_by_score is for rows without bytes");
        let buffers = &mut self.buffers;
        let len = buffers.ids.len();
        // Insertion sort on the parallel arrays: no scratch allocation; k is small.
        for i in 1..len {
            let mut j = i;
            while j > 0 && (buffers.scores[j - 1], buffers.ids[j - 1]) > (buffers.scores[j], buffers.ids[j]) {
                buffers.scores.swap(j - 1, j);
                buffers.ids.swap(j - 1, j);
                j -= 1;
            }
        }
    }
}

impl Drop for ResultSet {
    fn drop(&mut self) {
        if let Some(pool) = self.pool.take() {
            pool.give_back(std::mem::take(&mut self.buffers));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_return_to_the_pool_and_keep_capacity() {
        let pool = ResultSetPool::new(2, 1 << 20);
        let mut set = pool.take();
        set.push_with_bytes(1, 0.5, b"abc");
        set.push(2, 0.25);
        assert_eq!(set.row(0), (1, 0.5, &b"abc"[..]));
        assert_eq!(set.bytes(1), b"");
        drop(set);
        assert_eq!(pool.idle(), 1);
        let set = pool.take();
        assert!(set.is_empty());
        assert!(set.buffers.ids.capacity() >= 2);
    }

    #[test]
    fn pool_is_bounded_and_drops_oversized_buffers() {
        let pool = ResultSetPool::new(1, 64);
        let (a, b) = (pool.take(), pool.take());
        drop(a);
        drop(b);
        assert_eq!(pool.idle(), 1);
        let mut big = pool.take();
        for id in 0..100 {
            big.push(id, 0.0);
        }
        drop(big);
        assert_eq!(pool.idle(), 0);
    }
}
