//! Deterministic, seeded data generators shared by all engines of a workload:
//! random string pairs (T1), meteo records with 5 measures from the calibrated
//! generator of `quiredb-datasets` (T2, T3, T7, T8), points and query windows (T4),
//! incompressible blobs (T6). Equal seed, equal data.
//! Coordinates are f32 values widened to f64, so SQLite's float32 R*Tree stores them
//! exactly and every spatial engine sees the same points.

use crate::error::{BenchError, Result};
use quiredb_datasets::meteo::{GeneratorConfig, Observation, ObservationGenerator};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, RngCore, SeedableRng};
use std::collections::HashSet;

/// The default seed of every generator (printed with each run).
pub const DEFAULT_SEED: u64 = 0x5155_4952_4544_4231;

/// `n` distinct random keys of 16 alphanumeric characters, each with a 32-character value.
pub fn string_pairs(n: usize, seed: u64) -> Vec<(String, String)> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut seen = HashSet::with_capacity(n);
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let key = alnum(&mut rng, 16);
        if seen.insert(key.clone()) {
            out.push((key, alnum(&mut rng, 32)));
        }
    }
    out
}

/// A random alphanumeric string of `len` characters.
pub fn alnum(rng: &mut impl Rng, len: usize) -> String {
    const CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    (0..len).map(|_| CHARS[rng.random_range(0..CHARS.len())] as char).collect()
}

/// One meteorological observation: station, hour, five measures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Meteo {
    pub station: u32,
    pub time: u64,
    pub measures: [f32; 5],
}

/// Bytes of an encoded key (station BE, time BE: sorts by station then time).
pub const METEO_KEY_LEN: usize = 12;
/// Bytes of an encoded value (five f32 LE).
pub const METEO_VALUE_LEN: usize = 20;
/// Bytes of a whole fixed-length record (key then value).
pub const METEO_RECORD_LEN: usize = METEO_KEY_LEN + METEO_VALUE_LEN;

impl Meteo {
    /// The B-tree key: big-endian station and time, so byte order is key order.
    pub fn key(&self) -> [u8; METEO_KEY_LEN] {
        let mut k = [0u8; METEO_KEY_LEN];
        k[..4].copy_from_slice(&self.station.to_be_bytes());
        k[4..].copy_from_slice(&self.time.to_be_bytes());
        k
    }

    /// The five measures, little-endian f32.
    pub fn value(&self) -> [u8; METEO_VALUE_LEN] {
        let mut v = [0u8; METEO_VALUE_LEN];
        for (i, m) in self.measures.iter().enumerate() {
            v[i * 4..i * 4 + 4].copy_from_slice(&m.to_le_bytes());
        }
        v
    }

    /// Key and value in one fixed-length record.
    pub fn record(&self) -> [u8; METEO_RECORD_LEN] {
        let mut r = [0u8; METEO_RECORD_LEN];
        r[..METEO_KEY_LEN].copy_from_slice(&self.key());
        r[METEO_KEY_LEN..].copy_from_slice(&self.value());
        r
    }
}

/// `n` meteo records in key order from the calibrated generator of `quiredb-datasets`
/// (`ObservationGenerator`, every measure present): station `Sk` becomes id k, the
/// time its seconds since the epoch, the five measures (temp, pres, dewp, rain, wspm)
/// f32. Deterministic for the seed; ≈ 1.85 GB for the full 57,852,305 records.
pub fn meteo(n: usize, seed: u64) -> Result<Vec<Meteo>> {
    let config = GeneratorConfig { seed, with_missing: false, ..GeneratorConfig::new(n as u64) };
    let mut generator = ObservationGenerator::new(config).map_err(|e| BenchError::Usage(e.to_string()))?;
    let mut out = Vec::with_capacity(n);
    let mut row = Observation::default();
    let (mut name, mut station) = (String::new(), 0u32);
    while generator.next_into(&mut row) {
        if row.station != name {
            name.clone_from(&row.station);
            station += 1;
        }
        let mut measures = [0f32; 5];
        for (slot, value) in measures.iter_mut().zip(&row.measures) {
            *slot = value.unwrap_or(f64::NAN) as f32;
        }
        out.push(Meteo { station, time: row.time.max(0) as u64, measures });
    }
    Ok(out)
}

/// A seeded permutation of `0..n` (random insertion and query orders).
pub fn permutation(n: usize, seed: u64) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..n).collect();
    idx.shuffle(&mut StdRng::seed_from_u64(seed ^ 0x5045_524d));
    idx
}

/// `n` points in the unit cube of `dims` dimensions, flat (point i at `[i*dims..]`),
/// every coordinate an f32 value.
pub fn points(n: usize, dims: usize, seed: u64) -> Vec<f64> {
    let mut rng = StdRng::seed_from_u64(seed ^ 0x504f_494e_5453 ^ dims as u64);
    (0..n * dims).map(|_| f64::from(rng.random::<f32>())).collect()
}

/// An axis-aligned query window: lower and upper corners.
#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    pub lo: Vec<f64>,
    pub hi: Vec<f64>,
}

/// `count` windows covering `selectivity` (a fraction, e.g. 1e-4) of the unit cube's
/// volume, hence about that fraction of uniform points; corners are f32 values.
pub fn windows(count: usize, dims: usize, selectivity: f64, seed: u64) -> Vec<Window> {
    let mut rng = StdRng::seed_from_u64(seed ^ selectivity.to_bits());
    let side = selectivity.powf(1.0 / dims as f64);
    (0..count)
        .map(|_| {
            let lo: Vec<f64> = (0..dims).map(|_| f64::from(rng.random_range(0.0..(1.0 - side) as f32))).collect();
            let hi = lo.iter().map(|l| f64::from((l + side) as f32)).collect();
            Window { lo, hi }
        })
        .collect()
}

/// The size of blob `id` (8,000–12,000 bytes), without generating it.
pub fn blob_len(id: u64, seed: u64) -> usize {
    StdRng::seed_from_u64(seed ^ id.wrapping_mul(0x9e37_79b9_7f4a_7c15)).random_range(8000..=12000)
}

/// Blob `id`: incompressible random bytes of `blob_len(id, seed)` bytes, into `out`.
pub fn blob(id: u64, seed: u64, out: &mut Vec<u8>) {
    let mut rng = StdRng::seed_from_u64(seed ^ id.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let len = rng.random_range(8000..=12000);
    out.resize(len, 0);
    rng.fill_bytes(out);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generators_are_deterministic() {
        // Proves equal seeds give equal data, which every cross-check relies on.
        assert_eq!(string_pairs(50, 7), string_pairs(50, 7));
        assert_eq!(meteo(100, 7).unwrap(), meteo(100, 7).unwrap());
        assert_ne!(meteo(100, 7).unwrap(), meteo(100, 8).unwrap());
        assert_eq!(points(10, 5, 7), points(10, 5, 7));
        let (mut a, mut b) = (Vec::new(), Vec::new());
        blob(3, 7, &mut a);
        blob(3, 7, &mut b);
        assert_eq!(a, b);
        assert_eq!(a.len(), blob_len(3, 7));
    }

    #[test]
    fn meteo_keys_are_sorted_and_unique() {
        // Proves the generator emits records in strictly increasing key order.
        let m = meteo(80_000, 1).unwrap();
        assert_eq!(m.len(), 80_000);
        assert!(m.windows(2).all(|w| w[0].key() < w[1].key()));
        // 80,000 rows make three stations (one per 35,064 rows), ids from 1.
        assert_eq!((m[0].station, m[79_999].station), (1, 3));
        assert!(m.iter().all(|r| r.measures.iter().all(|v| v.is_finite())));
    }

    #[test]
    fn coordinates_are_exact_f32() {
        // Proves points and windows survive a float32 round trip (SQLite R*Tree).
        let p = points(100, 5, 3);
        assert!(p.iter().all(|&c| f64::from(c as f32) == c));
        for w in windows(20, 5, 1e-3, 3) {
            assert!(w.lo.iter().chain(&w.hi).all(|&c| f64::from(c as f32) == c));
            assert!(w.lo.iter().zip(&w.hi).all(|(l, h)| l < h));
        }
    }
}

/// Real points of T4: the five measures (TEMP, PRES, DEWP, RAIN, WSPM) of the Beijing
/// multi-site observations, read with the `beijing` preset of `quiredb_datasets::meteo`.
#[derive(Debug, Clone, Default)]
pub struct RealPoints {
    /// Flat coordinates (5 per point), each rounded to f32 (SQLite's R*Tree stores f32).
    pub coords: Vec<f64>,
    /// Rows skipped because a measure is missing (or the row is malformed).
    pub skipped: usize,
}

/// The first `limit` complete rows of the Beijing file (`.csv` or `.csv.zst`) as points.
pub fn beijing_points(path: &std::path::Path, limit: usize) -> crate::error::Result<RealPoints> {
    use crate::error::BenchError;
    use quiredb_datasets::meteo::{Observation, ObservationReader, ReadOutcome, Schema};
    let file = std::fs::File::open(path).map_err(|e| BenchError::io(path, e))?;
    let input: Box<dyn std::io::Read> = if path.extension().is_some_and(|e| e == "zst") {
        let mut decoder = zstd::Decoder::new(file).map_err(|e| BenchError::io(path, e))?;
        decoder.window_log_max(31).map_err(|e| BenchError::io(path, e))?;
        Box::new(decoder)
    } else {
        Box::new(file)
    };
    let parse = |reason: String| BenchError::Parse { path: path.into(), line: 0, reason };
    let schema = Schema::preset("beijing").map_err(|e| parse(e.to_string()))?;
    let mut reader = ObservationReader::new(input, &schema).map_err(|e| parse(e.to_string()))?;
    let (mut out, mut row) = (RealPoints::default(), Observation::default());
    while out.coords.len() < limit * 5 {
        match reader.read(&mut row).map_err(|e| parse(e.to_string()))? {
            ReadOutcome::End => break,
            ReadOutcome::Bad(_) => out.skipped += 1,
            ReadOutcome::Row => match row.point::<5>() {
                Some(p) => out.coords.extend(p.iter().map(|v| f64::from(*v as f32))),
                None => out.skipped += 1,
            },
        }
    }
    Ok(out)
}

/// `count` windows for real points: boxes whose sides are `selectivity^(1/dims)` of
/// the data's extent in each dimension (the volume fraction of the uniform sets),
/// centred on randomly chosen data points; corners are f32 values.
pub fn windows_around(coords: &[f64], dims: usize, count: usize, selectivity: f64, seed: u64) -> Vec<Window> {
    let mut rng = StdRng::seed_from_u64(seed ^ selectivity.to_bits() ^ 0x5245_414c);
    let n = coords.len() / dims;
    if n == 0 {
        return Vec::new();
    }
    let (mut lo, mut hi) = (vec![f64::INFINITY; dims], vec![f64::NEG_INFINITY; dims]);
    for p in coords.chunks_exact(dims) {
        for d in 0..dims {
            lo[d] = lo[d].min(p[d]);
            hi[d] = hi[d].max(p[d]);
        }
    }
    let frac = selectivity.powf(1.0 / dims as f64);
    (0..count)
        .map(|_| {
            let c = &coords[rng.random_range(0..n) * dims..][..dims];
            let half: Vec<f64> = (0..dims).map(|d| (hi[d] - lo[d]) * frac / 2.0).collect();
            Window {
                lo: (0..dims).map(|d| f64::from((c[d] - half[d]) as f32)).collect(),
                hi: (0..dims).map(|d| f64::from((c[d] + half[d]) as f32)).collect(),
            }
        })
        .collect()
}
