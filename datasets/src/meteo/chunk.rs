//! A chunk of buffered rows on their way from the parse side to the writer (the index
//! thread of `parallel.rs`, or `store.rs`'s single-thread sink): the stored raw
//! records (`record.rs`), the B+tree keys and the R-tree points, [`CHUNK_ROWS`] rows
//! at most. Rows come station by station, so the encoded key prefix of the last
//! station is kept and reused.

use quiredb_structures::queue::RecordId;

use super::Observation;
use super::reader::RawRow;
use super::record::RecordEncoding;
use super::store::{CHUNK_ROWS, encode_station, encode_time};
use crate::error::{Error, Result};

/// One chunk of buffered rows: raw records, B+tree keys and R-tree points.
#[derive(Default)]
pub(crate) struct Chunk {
    raw: Vec<u8>,
    raw_ends: Vec<usize>,
    keys: Vec<u8>,
    key_ends: Vec<usize>,
    /// Whether each row has an R-tree point (all its index measures present).
    has_point: Vec<bool>,
    /// The points' coordinates, one after the other (as many a point as the load's
    /// R-tree has dimensions).
    coords: Vec<f64>,
    /// The station of the last key encoded and its encoding (rows come station by
    /// station: most keys reuse it); `None` before the first key.
    station: Option<(String, Vec<u8>)>,
}

impl Chunk {
    pub(crate) fn len(&self) -> usize {
        self.raw_ends.len()
    }

    fn slice<'a>(bytes: &'a [u8], ends: &[usize], i: usize) -> &'a [u8] {
        let start = if i == 0 { 0 } else { ends[i - 1] };
        &bytes[start..ends[i]]
    }

    /// The stored record of row `i`.
    pub(crate) fn record(&self, i: usize) -> &[u8] {
        Self::slice(&self.raw, &self.raw_ends, i)
    }

    /// The B+tree key of row `i`.
    pub(crate) fn key(&self, i: usize) -> &[u8] {
        Self::slice(&self.keys, &self.key_ends, i)
    }

    pub(crate) fn clear(&mut self) {
        self.raw.clear();
        self.raw_ends.clear();
        self.keys.clear();
        self.key_ends.clear();
        self.has_point.clear();
        self.coords.clear();
    }

    /// Buffers one row, its raw line stored with `encoding`; true when the chunk holds
    /// [`CHUNK_ROWS`] rows.
    pub(crate) fn push(&mut self, observation: &Observation, raw: &mut RawRow<'_>, encoding: RecordEncoding) -> bool {
        raw.encode(encoding, &mut self.raw);
        self.push_fields(observation)
    }

    /// Buffers one row given as its joined raw line (see [`Chunk::push`]).
    pub(crate) fn push_raw(&mut self, observation: &Observation, raw: &[u8], encoding: RecordEncoding) -> bool {
        encoding.encode(raw, &mut self.raw);
        self.push_fields(observation)
    }

    /// Buffers the row's key and point after its raw record.
    fn push_fields(&mut self, observation: &Observation) -> bool {
        self.raw_ends.push(self.raw.len());
        let (_, encoded) = match &mut self.station {
            Some(last) if last.0 == observation.station => last,
            slot => {
                let mut encoded = Vec::new();
                encode_station(&observation.station, &mut encoded);
                slot.insert((observation.station.clone(), encoded))
            }
        };
        self.keys.extend_from_slice(encoded);
        encode_time(observation.time, &mut self.keys);
        self.key_ends.push(self.keys.len());
        let has_point = observation.index_point(&mut self.coords);
        self.has_point.push(has_point);
        self.len() >= CHUNK_ROWS
    }

    /// The points of the chunk with the record ids they get, `D` coordinates each; an
    /// error if the rows' points have another size.
    pub(crate) fn points<'a, const D: usize>(
        &'a self,
        ids: &'a [RecordId],
    ) -> Result<impl Iterator<Item = ([f64; D], RecordId)> + 'a> {
        let count = self.has_point.iter().filter(|&&has| has).count();
        if self.coords.len() != count * D {
            return Err(Error::Argument(format!(
                "{} coordinates for {count} points of an R*-tree of {D} dimensions",
                self.coords.len()
            )));
        }
        let ids = self.has_point.iter().zip(ids).filter_map(|(&has, id)| has.then_some(*id));
        let points = self.coords.chunks_exact(D).map(|point| point.try_into().expect("chunks of D coordinates"));
        Ok(points.zip(ids))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meteo::store::encode_key;

    /// Keys are those of `encode_key` whatever the station sequence, the empty
    /// station (a constant `--station-name ""`) included.
    #[test]
    fn keys_reuse_the_station_prefix_correctly() {
        let mut chunk = Chunk::default();
        let stations = ["", "", "A", "A", "", "B\u{0}C", "B\u{0}C", "A"];
        for (time, station) in stations.iter().enumerate() {
            let observation = Observation { station: (*station).into(), time: time as i64, ..Observation::default() };
            chunk.push_raw(&observation, b"1", RecordEncoding::Raw);
        }
        for (i, station) in stations.iter().enumerate() {
            let mut expected = Vec::new();
            encode_key(&(*station).to_owned(), i as i64, &mut expected);
            assert_eq!(chunk.key(i), expected, "row {i}");
            assert_eq!(chunk.record(i), b"1");
        }
    }
}
