//! Page identities and the header every page carries.
//!
//! Structures address *logical* pages ([`PageId`]); the page map translates them to
//! *physical* pages ([`PhysId`], the page's position in the file). Every page starts
//! with a 32-byte header that lets a reader catch torn, misdirected and stale writes:
//!
//! | offset | size | field      | meaning                                                  |
//! |-------:|-----:|------------|----------------------------------------------------------|
//! | 0      | 4    | checksum   | CRC-32C of bytes `4..page_size`, little-endian            |
//! | 4      | 1    | kind       | [`PageKind`] code: below 16 the engine's, 16+ structures'  |
//! | 5      | 1    | flags      | bit 0: the page indexes others ([`PageKind::indexing`]); other bits zero |
//! | 6      | 2    | reserved   | zero                                                      |
//! | 8      | 8    | logical id | logical page id (data pages), level (map pages), slot (meta) |
//! | 16     | 8    | txn id     | transaction that wrote this version of the page           |
//! | 24     | 8    | reserved   | zero (room for a version word)                            |
//!
//! The checksum is computed right before a page is written and verified right after
//! it is read ([`seal`], [`verify`]). Read `engine/FORMAT.md` for the whole file.

use crate::error::{Error, Result};
use std::fmt;

/// Size of the header at the start of every page.
pub const HEADER_SIZE: usize = 32;

/// A logical page id: what structures store in their links. Stable across rewrites.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PageId(pub u64);

/// A physical page number: the page's offset in the file divided by the page size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PhysId(pub u64);

/// A transaction id. Commits are numbered 1, 2, 3, … ; 0 is the empty database.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct TxnId(pub u64);

impl fmt::Display for PageId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "L{}", self.0)
    }
}

impl fmt::Display for PhysId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl fmt::Display for TxnId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// What a page holds: a kind *code* (header byte 4) and the kind's *flags* (byte 5).
///
/// Codes below [`PageKind::FIRST_STRUCTURE_CODE`] (16) are the engine's own: [`Self::META`],
/// [`Self::MAP`], [`Self::RECORD`], [`Self::CATALOG`]. Each structure defines its kinds at
/// 16 and above in its own module with [`PageKind::structure`] (the B+tree's in
/// `quiredb_structures::btree`, the XML store's in `quiredb_xml::store`) and lists them
/// with their names ([`KindName`]) so that `quire check` names every page.
///
/// The engine knows nothing of a structure's kinds but their flags. One flag exists,
/// [`PageKind::indexing`]: pages of the kind index other pages (B+tree branches, heads),
/// so the buffer pool keeps them resident longer than the pages they lead to.
///
/// Two kinds are equal when their codes are: the flags describe the pages of a kind,
/// and a page written before a flag existed (byte 5 zero) is still of its kind.
#[derive(Clone, Copy)]
pub struct PageKind {
    /// Header bytes 4 and 5 as one little-endian word: the code in the low byte, the
    /// flags in the high one (a page's kind is one 16-bit load, compared in one step).
    bits: u16,
}

/// Flag bit of [`PageKind::indexing`] in header byte 5.
const FLAG_INDEXES: u8 = 1;

impl PageKind {
    /// One of the two meta pages at the head of the file.
    pub const META: PageKind = PageKind::engine(1);
    /// A page of the page map (radix tree from logical to physical ids).
    pub const MAP: PageKind = PageKind::engine(2).indexing();
    /// A page of a commit record (free list and unsynced-page list).
    pub const RECORD: PageKind = PageKind::engine(3);
    /// A page of the catalog of named structures.
    pub const CATALOG: PageKind = PageKind::engine(4).indexing();
    /// The lowest code a structure may use; the codes below are the engine's.
    pub const FIRST_STRUCTURE_CODE: u8 = 16;

    const fn engine(code: u8) -> PageKind {
        PageKind { bits: code as u16 }
    }

    /// The kind as header bytes 4 and 5 hold it.
    #[inline]
    const fn from_header(code: u8, flags: u8) -> PageKind {
        PageKind { bits: u16::from_le_bytes([code, flags]) }
    }

    /// The flags byte (header byte 5).
    #[inline]
    const fn flags(self) -> u8 {
        (self.bits >> 8) as u8
    }

    /// A structure's page kind of `code`, without flags. Codes below
    /// [`Self::FIRST_STRUCTURE_CODE`] are the engine's: in a `const` they fail the build.
    pub const fn structure(code: u8) -> PageKind {
        assert!(code >= Self::FIRST_STRUCTURE_CODE, "page kind codes below 16 belong to the engine");
        PageKind { bits: code as u16 }
    }

    /// The same kind, flagged as indexing other pages: its pages are written with the
    /// flag (header byte 5, bit 0) and the buffer pool gives them more chances to stay.
    pub const fn indexing(self) -> PageKind {
        PageKind { bits: self.bits | (FLAG_INDEXES as u16) << 8 }
    }

    /// The kind code, header byte 4.
    #[inline]
    pub const fn code(self) -> u8 {
        self.bits as u8
    }

    /// Whether pages of this kind index others: the flag, or for the engine's own kinds
    /// their code, so that map pages of files written before the flag existed count too.
    #[inline]
    pub const fn indexes_others(self) -> bool {
        self.flags() & FLAG_INDEXES != 0 || self.code() == Self::MAP.code() || self.code() == Self::CATALOG.code()
    }

    /// True for kinds that only the engine may allocate.
    pub fn is_engine_internal(self) -> bool {
        self.code() < Self::FIRST_STRUCTURE_CODE
    }
}

impl PartialEq for PageKind {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.code() == other.code()
    }
}

impl Eq for PageKind {}

impl std::hash::Hash for PageKind {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.code().hash(state);
    }
}

impl fmt::Display for PageKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.code())
    }
}

impl fmt::Debug for PageKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PageKind").field("code", &self.code()).field("flags", &self.flags()).finish()
    }
}

/// A page kind and what to call it in a report (`quire check`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KindName {
    /// The kind.
    pub kind: PageKind,
    /// Its name, in lower case: "B+tree leaf".
    pub name: &'static str,
}

/// The engine's own kinds and their names.
pub const ENGINE_KINDS: &[KindName] = &[
    KindName { kind: PageKind::META, name: "meta" },
    KindName { kind: PageKind::MAP, name: "page map" },
    KindName { kind: PageKind::RECORD, name: "commit record" },
    KindName { kind: PageKind::CATALOG, name: "catalog" },
];

/// The decoded header of a page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// What the page holds.
    pub kind: PageKind,
    /// Logical id (or level / slot, see the module table).
    pub logical: u64,
    /// Transaction that wrote the page.
    pub txn: TxnId,
}

/// CRC-32C (Castagnoli, the iSCSI CRC) of `bytes`: every checksum of the format.
/// `crc-fast` folds with carry-less multiplies where the CPU has them: 146 ns for an
/// 8 KiB page here, against 382 ns with the `crc32` instruction alone (the `crc32c`
/// crate), and a one-key commit seals five or six pages.
#[inline]
pub fn crc32c(bytes: &[u8]) -> u32 {
    crc_fast::crc32_iscsi(bytes)
}

/// The CRC-32C register (before the final inversion) after `bytes`, from `register`.
pub fn crc32c_register(register: u32, bytes: &[u8]) -> u32 {
    let mut digest = crc_fast::Digest::new_with_init_state(crc_fast::CrcAlgorithm::Crc32Iscsi, u64::from(register));
    digest.update(bytes);
    !(digest.finalize() as u32)
}

/// Checksum over everything but the checksum field.
fn checksum(page: &[u8]) -> u32 {
    crc32c(&page[4..])
}

/// Writes the header fields and the checksum into `page`.
pub fn seal(page: &mut [u8], kind: PageKind, logical: u64, txn: TxnId) {
    set_header(page, kind, logical, txn);
    reseal(page);
}

/// Writes the header fields only; the checksum is computed when the page is written
/// ([`reseal`]), so a page being built does not pay for one.
pub fn set_header(page: &mut [u8], kind: PageKind, logical: u64, txn: TxnId) {
    page[4..6].copy_from_slice(&kind.bits.to_le_bytes());
    page[6..8].fill(0);
    page[8..16].copy_from_slice(&logical.to_le_bytes());
    page[16..24].copy_from_slice(&txn.0.to_le_bytes());
    page[24..32].fill(0);
}

/// Recomputes the checksum of a page whose header is already set.
pub fn reseal(page: &mut [u8]) {
    let sum = checksum(page);
    page[0..4].copy_from_slice(&sum.to_le_bytes());
}

/// Decodes the header without checking anything. Inlined, so that a caller that reads
/// one field (a pin's check of the logical id) loads only that one.
#[inline]
pub fn header(page: &[u8]) -> Header {
    Header { kind: PageKind::from_header(page[4], page[5]), logical: read_u64(page, 8), txn: TxnId(read_u64(page, 16)) }
}

/// The logical id field of the header alone (bytes 8..16).
#[inline]
pub fn logical_of(page: &[u8]) -> u64 {
    read_u64(page, 8)
}

/// The kind field of the header alone (bytes 4 and 5).
#[inline]
pub fn kind_of(page: &[u8]) -> PageKind {
    let bytes: [u8; 2] = page[4..6].try_into().expect("2 bytes");
    PageKind::from_header(bytes[0], bytes[1])
}

/// Verifies the checksum of a page just read from `phys` and returns its header.
pub fn verify(page: &[u8], phys: PhysId) -> Result<Header> {
    let stored = read_u32(page, 0);
    if stored != checksum(page) {
        return Err(Error::corrupted(phys, "checksum mismatch"));
    }
    Ok(header(page))
}

/// Verifies a page and that its header says what the caller expects.
pub fn verify_expect(page: &[u8], phys: PhysId, kind: Option<PageKind>, logical: u64, newest: TxnId) -> Result<Header> {
    let head = verify(page, phys)?;
    verify_identity(page, phys, kind, logical)?;
    if head.txn > newest {
        return Err(Error::corrupted(
            phys,
            format!("written by transaction {} after the snapshot {}", head.txn, newest),
        ));
    }
    Ok(head)
}

/// Checks that a page (verified when it was read) is the one the caller expects: its
/// kind, if given, and its logical id. Cheap enough for every pin of a cached page.
#[inline]
pub fn verify_identity(page: &[u8], phys: PhysId, kind: Option<PageKind>, logical: u64) -> Result<()> {
    // Only the fields checked are read (a pin without a kind reads the logical id alone).
    if let Some(kind) = kind
        && kind_of(page) != kind
    {
        return Err(wrong_identity(phys, format!("kind {} where {} was expected", kind_of(page), kind)));
    }
    let found = logical_of(page);
    if found != logical {
        return Err(misdirected(phys, found, logical));
    }
    Ok(())
}

/// The error of a page that is not the one expected (out of line: [`verify_identity`]
/// is inlined into every pin).
#[cold]
#[inline(never)]
fn wrong_identity(phys: PhysId, reason: String) -> Error {
    Error::corrupted(phys, reason)
}

/// The error of a page holding logical id `found` where `expected` was asked for.
#[cold]
#[inline(never)]
fn misdirected(phys: PhysId, found: u64, expected: u64) -> Error {
    wrong_identity(phys, format!("holds logical id {found} where {expected} was expected (misdirected write)"))
}

/// Reads a little-endian u64 at `at`.
#[inline]
pub fn read_u64(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("slice of 8 bytes"))
}

/// Reads a little-endian u32 at `at`.
#[inline]
pub fn read_u32(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("slice of 4 bytes"))
}

/// Reads a little-endian u16 at `at`.
#[inline]
pub fn read_u16(bytes: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(bytes[at..at + 2].try_into().expect("slice of 2 bytes"))
}

/// Writes a little-endian u64 at `at`.
pub fn write_u64(bytes: &mut [u8], at: usize, value: u64) {
    bytes[at..at + 8].copy_from_slice(&value.to_le_bytes());
}

/// Writes a little-endian u32 at `at`.
pub fn write_u32(bytes: &mut [u8], at: usize, value: u32) {
    bytes[at..at + 4].copy_from_slice(&value.to_le_bytes());
}

/// Writes a little-endian u16 at `at`.
pub fn write_u16(bytes: &mut [u8], at: usize, value: u16) {
    bytes[at..at + 2].copy_from_slice(&value.to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checksum_is_crc32c_and_the_register_continues_it() {
        // The format's CRC (iSCSI's check value), and the register form the meta's
        // zero-extension is built on: the CRC of a whole is that of its parts chained.
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
        let bytes: Vec<u8> = (0..9000u32).map(|at| (at * 31 % 253) as u8).collect();
        for split in [0, 1, 7, 4096, 8999, 9000] {
            let register = crc32c_register(!0, &bytes[..split]);
            assert_eq!(!crc32c_register(register, &bytes[split..]), crc32c(&bytes), "split at {split}");
        }
    }

    /// A structure's kind for these tests, flagged as indexing.
    const INNER: PageKind = PageKind::structure(17).indexing();

    #[test]
    fn seal_then_verify_round_trips_and_any_flip_is_caught() {
        let mut page = vec![7u8; 4096];
        seal(&mut page, PageKind::structure(16), 42, TxnId(9));
        let head = verify_expect(&page, PhysId(3), Some(PageKind::structure(16)), 42, TxnId(9)).unwrap();
        assert_eq!(head.txn, TxnId(9));
        for bit in (0..page.len() * 8).step_by(97) {
            let mut bad = page.clone();
            bad[bit / 8] ^= 1 << (bit % 8);
            assert!(matches!(verify(&bad, PhysId(3)), Err(Error::Corrupted { .. })), "bit {bit}");
        }
    }

    #[test]
    fn misdirected_and_future_pages_are_rejected() {
        let mut page = vec![0u8; 4096];
        seal(&mut page, PageKind::MAP, 5, TxnId(4));
        assert!(verify_expect(&page, PhysId(1), None, 6, TxnId(4)).is_err());
        assert!(verify_expect(&page, PhysId(1), None, 5, TxnId(3)).is_err());
        assert!(verify_expect(&page, PhysId(1), Some(PageKind::META), 5, TxnId(4)).is_err());
    }

    #[test]
    fn the_index_flag_round_trips_and_a_page_without_it_keeps_its_kind() {
        let mut page = vec![0u8; 4096];
        seal(&mut page, INNER, 7, TxnId(2));
        assert_eq!(page[5], FLAG_INDEXES, "the flag is header byte 5, bit 0");
        let head = verify_expect(&page, PhysId(9), Some(INNER), 7, TxnId(2)).unwrap();
        assert!(head.kind.indexes_others());
        // A page written before the flag existed: byte 5 zero, same code.
        page[5] = 0;
        reseal(&mut page);
        let old = verify_expect(&page, PhysId(9), Some(INNER), 7, TxnId(2)).unwrap();
        assert_eq!(old.kind, INNER, "kinds compare by code");
        assert!(!old.kind.indexes_others());
        assert!(verify_expect(&page, PhysId(9), Some(PageKind::structure(16)), 7, TxnId(2)).is_err());
    }

    #[test]
    fn the_engine_knows_its_index_kinds_by_code_and_lists_only_its_own() {
        let unflagged_map = PageKind::from_header(PageKind::MAP.code(), 0);
        assert!(unflagged_map.indexes_others() && PageKind::CATALOG.indexes_others());
        assert!(!PageKind::META.indexes_others() && !PageKind::RECORD.indexes_others());
        assert!(!PageKind::structure(16).indexes_others());
        assert!(ENGINE_KINDS.iter().all(|named| named.kind.is_engine_internal()));
        assert_eq!(ENGINE_KINDS.len(), 4);
    }
}
