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
//! would find: the durable image plus, depending on [`CrashMode`], none, all, or a
//! seeded random sector-granular subset of the unsynced writes.

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
}

#[derive(Debug, Default)]
struct State {
    live: Vec<u8>,
    durable: Vec<u8>,
    unsynced: Vec<(u64, Vec<u8>)>,
    ops: u64,
    fault: Option<Fault>,
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

    /// The bytes a restarted process would find after a crash now.
    pub fn crash_image(&self, mode: CrashMode) -> Vec<u8> {
        let state = self.state.lock();
        let mut image = state.durable.clone();
        let mut rng = mode_seed(mode);
        for (offset, data) in &state.unsynced {
            match mode {
                CrashMode::KeepUnsynced => write_slice(&mut image, *offset, data),
                CrashMode::DropUnsynced => {}
                CrashMode::RandomSectors(_) => {
                    for (i, sector) in data.chunks(SECTOR_BYTES).enumerate() {
                        if next_bool(&mut rng) {
                            write_slice(&mut image, offset + (i * SECTOR_BYTES) as u64, sector);
                        }
                    }
                }
            }
        }
        image
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
        CrashMode::RandomSectors(seed) => seed | 1,
        _ => 1,
    }
}

/// xorshift64: enough to pick sectors reproducibly from a seed.
fn next_bool(state: &mut u64) -> bool {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state & 1 == 1
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

    fn sync(&self) -> io::Result<()> {
        let mut state = self.state.lock();
        if self.begin(&mut state, "sync")?.is_some() {
            state.stopped = true;
            return Err(eio("power cut during sync"));
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
    fn enospc_fails_only_the_chosen_operation() {
        let fault = Fault { at_op: 1, kind: FaultKind::Enospc };
        let storage = FaultyStorage::new(vec![0; 1024], Some(fault));
        storage.write_at(0, &[1; 10]).unwrap();
        let error = storage.write_at(0, &[1; 10]).unwrap_err();
        assert_eq!(error.raw_os_error(), Some(libc::ENOSPC));
        storage.write_at(0, &[1; 10]).unwrap();
    }
}
