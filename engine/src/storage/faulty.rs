//! [`FaultyStorage`]: an in-memory file that misbehaves on purpose, for tests.
//!
//! It keeps two images: what a reader of the live file sees, and what is *durable*
//! (survives a crash). Writes land in the live image and in a list of unsynced writes;
//! `sync` folds that list into the durable image. A [`Fault`] picks one operation by
//! its index (reads, writes and syncs counted together, from 0) and makes it
//! - fail with EIO or ENOSPC (later operations work again: the engine must poison
//!   itself), or
//! - tear: only the first half of its 512-byte sectors reach the file, then the
//!   "machine" stops and every later operation fails, or
//! - cut the power: the operation and every later one fail.
//!
//! After a crash, [`FaultyStorage::crash_image`] gives the bytes a restarted process
//! would find: the durable image plus, depending on [`CrashMode`], none, all, a seeded
//! random sector-granular subset of the unsynced writes, or a seeded subset in which
//! each unsynced write survives whole, is lost, or is torn ([`CrashMode::Subset`]: the
//! power-cut model of the simulator, after SQLite's crash VFS). An image can be taken
//! at any moment without stopping the storage, so one run yields many power cuts; a
//! new fault can be armed at any time ([`FaultyStorage::arm`]).

use super::Storage;
use super::mem::{read_slice, write_slice};
use parking_lot::Mutex;
use std::io;

/// Granularity at which a torn write is cut.
pub const SECTOR_BYTES: usize = 512;

/// What goes wrong at the chosen operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultKind {
    /// The operation fails with EIO.
    Eio,
    /// The operation fails with ENOSPC (no space left on device).
    Enospc,
    /// A write reaches the file only partly, then the machine stops.
    TornWrite,
    /// The machine stops before the operation.
    PowerCut,
}

/// One injected fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fault {
    /// Index of the operation (reads, writes, syncs counted together, from 0).
    pub at_op: u64,
    /// What happens there.
    pub kind: FaultKind,
}

/// Which unsynced writes survive in [`FaultyStorage::crash_image`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CrashMode {
    /// A process crash: the OS kept every write.
    KeepUnsynced,
    /// A power cut that lost every unsynced write.
    DropUnsynced,
    /// A power cut where each unsynced sector survives or not, chosen by the seed.
    RandomSectors(u64),
    /// A power cut where each unsynced write, in issue order, survives whole, is lost,
    /// or is torn (each of its 512-byte sectors kept or not), chosen by the seed; the
    /// file keeps its synced length, or its length at the cut, also by the seed.
    Subset(u64),
}

#[derive(Debug, Default)]
struct State {
    live: Vec<u8>,
    durable: Vec<u8>,
    unsynced: Vec<(u64, Vec<u8>)>,
    ops: u64,
    fault: Option<Fault>,
    /// Syncs still allowed before the power is cut at one (see `cut_power_at_sync`).
    syncs_before_cut: Option<u64>,
    stopped: bool,
    fired: bool,
}

/// An in-memory file with one injected fault.
#[derive(Debug, Default)]
pub struct FaultyStorage {
    state: Mutex<State>,
}

fn eio(what: &str) -> io::Error {
    io::Error::other(format!("injected EIO: {what}"))
}

impl FaultyStorage {
    /// A file holding `bytes` (all durable) that will suffer `fault`.
    pub fn new(bytes: Vec<u8>, fault: Option<Fault>) -> Self {
        let state = State { live: bytes.clone(), durable: bytes, fault, ..State::default() };
        FaultyStorage { state: Mutex::new(state) }
    }

    /// Number of operations performed (or attempted) so far.
    pub fn ops(&self) -> u64 {
        self.state.lock().ops
    }

    /// True once the injected fault has happened.
    pub fn fault_fired(&self) -> bool {
        self.state.lock().fired
    }

    /// Replaces the injected fault (`None` disarms); `fault_fired` starts over.
    /// A stopped machine stays stopped.
    pub fn arm(&self, fault: Option<Fault>) {
        let mut state = self.state.lock();
        state.fault = fault;
        state.fired = false;
    }

    /// Cuts the power at the `n`-th sync from now (1 = the next one): that sync and
    /// everything after it fail, and the writes since the previous sync stay unsynced.
    pub fn cut_power_at_sync(&self, n: u64) {
        self.state.lock().syncs_before_cut = Some(n.max(1) - 1);
    }

    /// Writes issued since the last completed sync.
    pub fn unsynced_writes(&self) -> usize {
        self.state.lock().unsynced.len()
    }

    /// The bytes a restarted process would find after a crash now.
    pub fn crash_image(&self, mode: CrashMode) -> Vec<u8> {
        let state = self.state.lock();
        if mode == CrashMode::KeepUnsynced {
            return state.live.clone(); // a process crash: the OS keeps writes and length
        }
        let mut image = state.durable.clone();
        let mut rng = mode_seed(mode);
        for (offset, data) in &state.unsynced {
            match mode {
                CrashMode::KeepUnsynced => unreachable!("answered from the live image above"),
                CrashMode::DropUnsynced => {}
                CrashMode::RandomSectors(_) => keep_sectors(&mut image, *offset, data, &mut rng),
                CrashMode::Subset(_) => match next_u64(&mut rng) % 3 {
                    0 => write_slice(&mut image, *offset, data),
                    1 => {}
                    _ => keep_sectors(&mut image, *offset, data, &mut rng),
                },
            }
        }
        if let CrashMode::Subset(_) = mode
            && next_bool(&mut rng)
            && image.len() < state.live.len()
        {
            image.resize(state.live.len(), 0); // the growth reached the disk
        }
        image
    }

    /// The image after a power cut that keeps exactly the chunks `keep` accepts: each
    /// unsynced write, in issue order, is cut into `chunk`-byte pieces and `keep` is
    /// asked about each (its offset in the file and its bytes). For tests that lose one
    /// chosen page write.
    pub fn crash_image_filtered(&self, chunk: usize, mut keep: impl FnMut(u64, &[u8]) -> bool) -> Vec<u8> {
        let state = self.state.lock();
        let mut image = state.durable.clone();
        for (offset, data) in &state.unsynced {
            for (i, piece) in data.chunks(chunk).enumerate() {
                let at = offset + (i * chunk) as u64;
                if keep(at, piece) {
                    write_slice(&mut image, at, piece);
                }
            }
        }
        image
    }

    /// The storage a new process finds after this one was killed: the same durable
    /// image and the same unsynced writes (the OS still holds them), no fault.
    pub fn after_process_crash(&self) -> FaultyStorage {
        let state = self.state.lock();
        let next = State {
            live: state.live.clone(),
            durable: state.durable.clone(),
            unsynced: state.unsynced.clone(),
            ..State::default()
        };
        FaultyStorage { state: Mutex::new(next) }
    }

    /// Counts an operation and decides whether the fault strikes it.
    fn begin(&self, state: &mut State, what: &str) -> io::Result<Option<FaultKind>> {
        if state.stopped {
            return Err(eio("the machine has stopped"));
        }
        let index = state.ops;
        state.ops += 1;
        let Some(fault) = state.fault.filter(|fault| fault.at_op == index) else {
            return Ok(None);
        };
        state.fired = true;
        match fault.kind {
            FaultKind::Eio => Err(eio(what)),
            FaultKind::Enospc => Err(io::Error::from_raw_os_error(libc::ENOSPC)),
            FaultKind::PowerCut => {
                state.stopped = true;
                Err(eio("power cut"))
            }
            FaultKind::TornWrite => Ok(Some(FaultKind::TornWrite)),
        }
    }
}

fn mode_seed(mode: CrashMode) -> u64 {
    match mode {
        // splitmix64 of the seed: neighbouring seeds give unrelated streams.
        CrashMode::RandomSectors(seed) | CrashMode::Subset(seed) => {
            let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            (z ^ (z >> 31)) | 1
        }
        _ => 1,
    }
}

/// xorshift64: enough to pick writes and sectors reproducibly from a seed.
fn next_u64(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

fn next_bool(state: &mut u64) -> bool {
    next_u64(state) & 1 == 1
}

/// The parts of an unsynced write `(at, data)` outside the byte range `start..end`.
fn outside((at, data): (u64, Vec<u8>), start: u64, end: u64) -> Vec<(u64, Vec<u8>)> {
    let write_end = at + data.len() as u64;
    if write_end <= start || at >= end {
        return vec![(at, data)];
    }
    let mut parts = Vec::new();
    if at < start {
        parts.push((at, data[..(start - at) as usize].to_vec()));
    }
    if write_end > end {
        parts.push((end, data[(end - at) as usize..].to_vec()));
    }
    parts
}

/// Applies each 512-byte sector of a write at `offset` to `image`, or not, by `rng`.
fn keep_sectors(image: &mut Vec<u8>, offset: u64, data: &[u8], rng: &mut u64) {
    for (i, sector) in data.chunks(SECTOR_BYTES).enumerate() {
        if next_bool(rng) {
            write_slice(image, offset + (i * SECTOR_BYTES) as u64, sector);
        }
    }
}

impl Storage for FaultyStorage {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let mut state = self.state.lock();
        if self.begin(&mut state, "read")?.is_some() {
            // A torn *read* is not a thing; the fault strikes as a power cut.
            state.stopped = true;
            return Err(eio("power cut during read"));
        }
        read_slice(&state.live, offset, buf)
    }

    fn write_at(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        let mut state = self.state.lock();
        let torn = self.begin(&mut state, "write")?.is_some();
        let data = if torn {
            let sectors = buf.len().div_ceil(SECTOR_BYTES);
            &buf[..(sectors / 2 * SECTOR_BYTES).min(buf.len())]
        } else {
            buf
        };
        write_slice(&mut state.live, offset, data);
        state.unsynced.push((offset, data.to_vec()));
        if torn {
            state.stopped = true;
            return Err(eio("torn write, then power cut"));
        }
        Ok(())
    }

    fn write_durable(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        let mut state = self.state.lock();
        let torn = self.begin(&mut state, "durable write")?.is_some();
        if torn {
            // Like a torn write: part of it reached the live file, unsynced.
            let data = &buf[..(buf.len().div_ceil(SECTOR_BYTES) / 2 * SECTOR_BYTES).min(buf.len())];
            write_slice(&mut state.live, offset, data);
            state.unsynced.push((offset, data.to_vec()));
            state.stopped = true;
            return Err(eio("torn durable write, then power cut"));
        }
        write_slice(&mut state.live, offset, buf);
        // Unsynced writes to the same bytes are superseded: a crash image must not
        // lay an older version over the durable one.
        let end = offset + buf.len() as u64;
        let unsynced = std::mem::take(&mut state.unsynced);
        state.unsynced = unsynced.into_iter().flat_map(|write| outside(write, offset, end)).collect();
        write_slice(&mut state.durable, offset, buf);
        Ok(())
    }

    fn sync(&self) -> io::Result<()> {
        let mut state = self.state.lock();
        if self.begin(&mut state, "sync")?.is_some() {
            state.stopped = true;
            return Err(eio("power cut during sync"));
        }
        match state.syncs_before_cut {
            Some(0) => {
                state.stopped = true;
                state.fired = true;
                return Err(eio("power cut before sync"));
            }
            Some(n) => state.syncs_before_cut = Some(n - 1),
            None => {}
        }
        let unsynced = std::mem::take(&mut state.unsynced);
        for (offset, data) in unsynced {
            write_slice(&mut state.durable, offset, &data);
        }
        let live_len = state.live.len();
        state.durable.resize(live_len, 0);
        Ok(())
    }

    fn len(&self) -> io::Result<u64> {
        Ok(self.state.lock().live.len() as u64)
    }

    fn grow_to(&self, len: u64) -> io::Result<()> {
        let mut state = self.state.lock();
        if (state.live.len() as u64) < len {
            if self.begin(&mut state, "grow")?.is_some() {
                state.stopped = true;
                return Err(eio("power cut while growing the file"));
            }
            state.live.resize(len as usize, 0);
        }
        Ok(())
    }

    fn truncate(&self, len: u64) -> io::Result<()> {
        let mut state = self.state.lock();
        if self.begin(&mut state, "truncate")?.is_some() {
            state.stopped = true;
            return Err(eio("power cut while truncating the file"));
        }
        state.live.truncate(len as usize);
        state.durable.truncate(len as usize);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsynced_writes_are_lost_or_kept_by_crash_mode() {
        let storage = FaultyStorage::new(vec![0; 2048], None);
        storage.write_at(0, &[1; 1024]).unwrap();
        storage.sync().unwrap();
        storage.write_at(1024, &[2; 1024]).unwrap();
        assert_eq!(storage.crash_image(CrashMode::DropUnsynced)[1024], 0);
        assert_eq!(storage.crash_image(CrashMode::KeepUnsynced)[1024], 2);
        assert_eq!(storage.crash_image(CrashMode::DropUnsynced)[0], 1);
    }

    #[test]
    fn torn_write_keeps_half_the_sectors_and_stops_the_machine() {
        let fault = Fault { at_op: 0, kind: FaultKind::TornWrite };
        let storage = FaultyStorage::new(vec![0; 4096], Some(fault));
        assert!(storage.write_at(0, &[9; 4096]).is_err());
        let image = storage.crash_image(CrashMode::KeepUnsynced);
        assert_eq!(image[2047], 9);
        assert_eq!(image[2048], 0);
        assert!(storage.sync().is_err());
    }

    #[test]
    fn subset_images_mix_whole_lost_and_torn_writes() {
        let storage = FaultyStorage::new(vec![0; 4096], None);
        storage.sync().unwrap();
        for block in 0..8u8 {
            storage.write_at(u64::from(block) * 4096, &[block + 1; 4096]).unwrap();
        }
        let (mut whole, mut lost, mut torn) = (0, 0, 0);
        for seed in 0..200 {
            let image = storage.crash_image(CrashMode::Subset(seed));
            assert_eq!(image, storage.crash_image(CrashMode::Subset(seed)), "replayable");
            for block in 0..8usize {
                let sectors: Vec<bool> = (0..8)
                    .map(|s| image.get(block * 4096 + s * SECTOR_BYTES).is_some_and(|&b| b == block as u8 + 1))
                    .collect();
                match sectors.iter().filter(|&&kept| kept).count() {
                    8 => whole += 1,
                    0 => lost += 1,
                    _ => torn += 1,
                }
            }
        }
        assert!(whole > 100 && lost > 100 && torn > 100, "{whole} {lost} {torn}");
    }

    #[test]
    fn a_durable_write_survives_alone_and_supersedes_older_unsynced_bytes() {
        let storage = FaultyStorage::new(vec![0; 4096], None);
        storage.write_at(0, &[1; 2048]).unwrap();
        storage.write_durable(1024, &[2; 512]).unwrap();
        let image = storage.crash_image(CrashMode::DropUnsynced);
        assert_eq!(&image[..1024], &[0; 1024][..], "the earlier write was not made durable");
        assert_eq!(&image[1024..1536], &[2; 512][..]);
        let image = storage.crash_image(CrashMode::Subset(7));
        assert_eq!(&image[1024..1536], &[2; 512][..], "an older unsynced write never covers it");
        let image = storage.crash_image(CrashMode::KeepUnsynced);
        assert_eq!((image[0], image[1024], image[1536]), (1, 2, 1));
    }

    #[test]
    fn enospc_fails_only_the_chosen_operation() {
        let fault = Fault { at_op: 1, kind: FaultKind::Enospc };
        let storage = FaultyStorage::new(vec![0; 1024], Some(fault));
        storage.write_at(0, &[1; 10]).unwrap();
        let error = storage.write_at(0, &[1; 10]).unwrap_err();
        assert_eq!(error.raw_os_error(), Some(libc::ENOSPC));
        storage.write_at(0, &[1; 10]).unwrap();
    }
}
