//! Reads of corrupt structure pages give `Error::Corrupted` naming the page, never a
//! panic, a loop or a huge allocation. Each test builds a file through the public API,
//! edits one page's payload in the file image, reseals its checksum (so only the
//! structure's own checks stand between the bytes and the reader) and reopens it.
//! One test per bug class the `db` fuzz target found (issue 18), and a seeded sweep of
//! random damage over every structure's pages.

use std::ops::Bound;
use std::sync::Arc;

use quiredb_engine::page::{HEADER_SIZE, reseal};
use quiredb_engine::storage::MemStorage;
use quiredb_engine::{Database, Durability, Options, PageId, PageKind, PageRead};
use quiredb_structures::Error;
use quiredb_structures::btree::BTree;
use quiredb_structures::queue::Queue;
use quiredb_structures::rtree::{RTree, Rect, WindowMode};
use quiredb_test_support::Rng;

const PAGE_SIZE: usize = 4096;

fn options() -> Options {
    Database::builder().page_size(PAGE_SIZE as u32).cache_bytes(64 * PAGE_SIZE).into_options()
}

/// A file holding the B+tree "t" with `n` entries of `value_len`-byte values,
/// committed `Full` (so opening does not re-verify the pages the tests edit); returns
/// the image and the tree's head page.
fn tree_image(n: u32, value_len: usize) -> (Vec<u8>, u64) {
    tree_image_with(n, |_| value_len)
}

/// [`tree_image`] with the value length of entry `i` given by `value_len(i)`.
fn tree_image_with(n: u32, value_len: impl Fn(u32) -> usize) -> (Vec<u8>, u64) {
    let storage = Arc::new(MemStorage::new());
    let db = Database::with_storage(storage.clone(), options(), "corrupt").expect("a new database");
    let txn = db.begin_write().expect("a writer");
    let mut tree = BTree::create(&txn, "t").expect("create");
    for i in 0..n {
        tree.insert(format!("key{i:05}").as_bytes(), &vec![i as u8; value_len(i)]).expect("insert");
    }
    let head = tree.head_page().0;
    drop(tree);
    txn.commit(Durability::Full).expect("commit");
    drop(db);
    (storage.snapshot(), head)
}

/// The newest copy of logical page `logical` in `image`: its offset. (The engine's
/// own pages — meta, map, commit record, catalog — keep other numbers in the header's
/// logical-id field, so only structure pages are looked at.)
fn locate(image: &[u8], logical: u64) -> usize {
    let mut best: Option<(u64, usize)> = None;
    for at in (0..image.len()).step_by(PAGE_SIZE) {
        let page = &image[at..at + PAGE_SIZE];
        let header = quiredb_engine::page::header(page);
        let mut copy = page.to_vec();
        reseal(&mut copy);
        let sealed = copy[..4] == page[..4];
        let structure = !header.kind.is_engine_internal();
        if sealed && structure && header.logical == logical && best.is_none_or(|(txn, _)| header.txn.0 > txn) {
            best = Some((header.txn.0, at));
        }
    }
    best.unwrap_or_else(|| panic!("logical page {logical} is in the image")).1
}

/// The payload of logical page `logical`.
fn payload(image: &[u8], logical: u64) -> &[u8] {
    let at = locate(image, logical);
    &image[at + HEADER_SIZE..at + PAGE_SIZE]
}

/// Edits the payload of logical page `logical` and reseals the page.
fn edit(image: &mut [u8], logical: u64, change: impl FnOnce(&mut [u8])) {
    let at = locate(image, logical);
    change(&mut image[at + HEADER_SIZE..at + PAGE_SIZE]);
    reseal(&mut image[at..at + PAGE_SIZE]);
}

fn open(image: Vec<u8>) -> Database {
    Database::open_storage(Arc::new(MemStorage::from_bytes(image)), options(), "corrupt").expect("the file opens")
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
}

/// The root of the tree whose head page is `head`.
fn root(image: &[u8], head: u64) -> u64 {
    u64_at(payload(image, head), 8)
}

/// Asserts `result` is `Corrupted` naming `page`.
fn assert_names<T: std::fmt::Debug>(result: Result<T, Error>, page: u64) {
    match result {
        Err(Error::Corrupted { page: named, .. }) => assert_eq!(named, page, "the error names the edited page"),
        other => panic!("expected Corrupted naming page {page}, got {other:?}"),
    }
}

/// Slot `i` of a leaf (count `n`) is at `32 + 8n + 2i` in the payload.
fn set_slot(leaf: &mut [u8], i: usize, value: u16) {
    let n = usize::from(u16::from_le_bytes([leaf[0], leaf[1]]));
    let at = 32 + 8 * n + 2 * i;
    leaf[at..at + 2].copy_from_slice(&value.to_le_bytes());
}

#[test]
fn a_slot_past_the_page_is_an_error_naming_the_leaf() {
    // Proves: cell offsets read from a slot are checked before slicing, on every read
    // path (get, scans both ways, cursors' first/last) and on the write path.
    let (mut image, head) = tree_image(20, 10);
    let leaf = root(&image, head);
    edit(&mut image, leaf, |page| set_slot(page, 3, 4090));
    let db = open(image);
    let txn = db.begin_read().expect("a reader");
    let tree = BTree::open(&txn, "t").expect("the head is intact");
    assert_names(tree.get_vec(b"key00003"), leaf);
    assert_names(tree.range(Bound::Unbounded, Bound::Unbounded).collect::<Result<Vec<_>, _>>(), leaf);
    assert_names(tree.range(Bound::Unbounded, Bound::Unbounded).rev().collect::<Result<Vec<_>, _>>(), leaf);
    let problems = quiredb_structures::btree::check(&tree).expect("check reports, not fails");
    assert!(problems.iter().any(|p| p.contains(&format!("node {leaf}"))), "check names the leaf: {problems:?}");
    drop(tree);
    drop(txn);
    let txn = db.begin_write().expect("a writer");
    let mut tree = BTree::open(&txn, "t").expect("open");
    assert_names(tree.insert(b"key00003", b"longer value than before"), leaf);
}

#[test]
fn a_key_length_past_the_page_is_an_error_naming_the_leaf() {
    // Proves: a key length read from a cell is checked against the page end (search,
    // cursor landing, removal, the insert that compacts the node).
    let (mut image, head) = tree_image(20, 10);
    let leaf = root(&image, head);
    edit(&mut image, leaf, |page| {
        let n = usize::from(u16::from_le_bytes([page[0], page[1]]));
        let cell = usize::from(u16::from_le_bytes([page[32 + 8 * n], page[32 + 8 * n + 1]]));
        page[cell..cell + 2].copy_from_slice(&u16::MAX.to_le_bytes());
    });
    let db = open(image);
    let txn = db.begin_read().expect("a reader");
    let tree = BTree::open(&txn, "t").expect("the head is intact");
    assert_names(tree.first(), leaf);
    assert_names(tree.range(Bound::Unbounded, Bound::Unbounded).collect::<Result<Vec<_>, _>>(), leaf);
    drop(tree);
    drop(txn);
    let txn = db.begin_write().expect("a writer");
    let mut tree = BTree::open(&txn, "t").expect("open");
    assert_names(tree.remove(b"key00000"), leaf);
}

#[test]
fn an_insert_into_a_leaf_with_overlapping_cells_is_an_error() {
    // Proves: a write that must compact or split a node checks all its cells first (a
    // node whose slots all name its one large cell overflowed the rebuilt page).
    let (mut image, head) = tree_image_with(40, |i| if i == 0 { 900 } else { 40 });
    let leaf = root(&image, head);
    let image_leaf = payload(&image, leaf).to_vec();
    let n = usize::from(u16::from_le_bytes([image_leaf[0], image_leaf[1]]));
    let first = u16::from_le_bytes([image_leaf[32 + 8 * n], image_leaf[32 + 8 * n + 1]]);
    edit(&mut image, leaf, |page| (0..n).for_each(|i| set_slot(page, i, first)));
    let db = open(image);
    let txn = db.begin_write().expect("a writer");
    let mut tree = BTree::open(&txn, "t").expect("open");
    let result = (0..200u32).try_for_each(|i| tree.insert(format!("key{:05}x", i % 40).as_bytes(), &[7; 40]).map(drop));
    assert_names(result, leaf);
}

#[test]
fn a_cycle_in_the_leaf_chain_ends_a_scan_with_an_error() {
    // Proves: a scan checks each step to another leaf (not empty, keys beyond the
    // ones left), so a `next` link back to an earlier leaf ends it with an error
    // instead of an endless iteration.
    let (mut image, head) = tree_image(400, 40);
    let branch = root(&image, head);
    let page = payload(&image, branch).to_vec();
    let n = usize::from(u16::from_le_bytes([page[0], page[1]]));
    assert!(n >= 2 && page[2] == 1, "the tree has height two");
    let (first, last) = (u64_at(&page, 32 + 8 * n), u64_at(&page, 32 + 8 * n + 8 * n));
    edit(&mut image, last, |leaf| leaf[16..24].copy_from_slice(&first.to_le_bytes()));
    let db = open(image);
    let txn = db.begin_read().expect("a reader");
    let tree = BTree::open(&txn, "t").expect("open");
    let mut seen = 0;
    let mut outcome = Ok(());
    for entry in tree.range(Bound::Unbounded, Bound::Unbounded) {
        seen += 1;
        assert!(seen <= 401, "the scan ends at the step back to the first leaf");
        if let Err(error) = entry {
            outcome = Err(error);
            break;
        }
    }
    assert_names(outcome, first);
}

#[test]
fn an_empty_leaf_in_the_chain_is_an_error_not_a_loop() {
    // Proves: a leaf with no entries reached by a link is refused (an empty leaf
    // linking to itself was followed forever).
    let (mut image, head) = tree_image(400, 40);
    let branch = root(&image, head);
    let page = payload(&image, branch).to_vec();
    let n = usize::from(u16::from_le_bytes([page[0], page[1]]));
    let (first, second) = (u64_at(&page, 32 + 8 * n), u64_at(&page, 32 + 8 * n + 8));
    edit(&mut image, second, |leaf| {
        leaf[0..2].fill(0);
        leaf[16..24].copy_from_slice(&second.to_le_bytes());
    });
    let db = open(image);
    let txn = db.begin_read().expect("a reader");
    let tree = BTree::open(&txn, "t").expect("open");
    assert!(first != second);
    assert_names(tree.range(Bound::Unbounded, Bound::Unbounded).collect::<Result<Vec<_>, _>>(), second);
}

#[test]
fn a_blob_value_claiming_more_than_its_tree_holds_is_an_error_not_an_allocation() {
    // Proves: a blob's length is checked against what its root's children can hold
    // before anything is allocated for it (a length of 2^40 asked for 1 TiB).
    let (mut image, head) = tree_image(3, 5000);
    let leaf = root(&image, head);
    let page = payload(&image, leaf).to_vec();
    let n = usize::from(u16::from_le_bytes([page[0], page[1]]));
    let cell = usize::from(u16::from_le_bytes([page[32 + 8 * n], page[32 + 8 * n + 1]]));
    let key_len = usize::from(u16::from_le_bytes([page[cell], page[cell + 1]]));
    let reference = cell + 6 + key_len;
    let blob_root = u64_at(&page, reference);
    let huge = 1u64 << 40;
    edit(&mut image, leaf, |leaf| leaf[reference + 8..reference + 16].copy_from_slice(&huge.to_le_bytes()));
    edit(&mut image, blob_root, |root| root[0..8].copy_from_slice(&huge.to_le_bytes()));
    let db = open(image);
    let txn = db.begin_read().expect("a reader");
    let tree = BTree::open(&txn, "t").expect("open");
    assert_names(tree.get_vec(b"key00000"), blob_root);
    assert!(txn.page(PageId(blob_root)).is_ok(), "the blob root itself is readable");
}

/// A database holding a B+tree "t" (some values blobs), a queue "q" (some records
/// overflowing) and a 2-D R*-tree "r", each over several pages.
fn three_structures() -> Database {
    three_structures_in(Arc::new(MemStorage::new()), Durability::None)
}

/// [`three_structures`] on `storage`, committed with `durability`.
fn three_structures_in(storage: Arc<MemStorage>, durability: Durability) -> Database {
    let db = Database::with_storage(storage, options(), "damage").expect("a new database");
    let txn = db.begin_write().expect("a writer");
    let mut tree = BTree::create(&txn, "t").expect("create");
    let mut queue = Queue::create(&txn, "q").expect("create");
    let mut rtree = RTree::<_, 2>::create(&txn, "r").expect("create");
    for i in 0..300u32 {
        let len = if i % 50 == 7 { 3000 } else { (i % 40) as usize };
        tree.insert(format!("key{i:05}").as_bytes(), &vec![i as u8; len]).expect("insert");
        queue.append(&vec![i as u8; if i % 60 == 9 { 5000 } else { 20 }]).expect("append");
        let (x, y) = (f64::from(i % 17), f64::from(i / 17));
        rtree.insert(&Rect::new([x, y], [x + 0.5, y + 0.25]), u64::from(i)).expect("insert");
    }
    drop(tree);
    txn.commit(durability).expect("commit");
    db
}

#[test]
fn a_file_written_before_the_index_flag_opens_reads_and_takes_writes() {
    // Proves the index flag (header byte 5) changed no kind code: a file whose pages
    // carry no flag, as every file written before it, opens, reads, checks clean and
    // takes a commit that rewrites its unflagged pages.
    let storage = Arc::new(MemStorage::new());
    drop(three_structures_in(storage.clone(), Durability::Full));
    let mut image = storage.snapshot();
    let mut cleared = 0;
    for page in image.chunks_mut(PAGE_SIZE) {
        let mut copy = page.to_vec();
        reseal(&mut copy);
        if copy[..4] == page[..4] && page[5] != 0 {
            page[5] = 0;
            reseal(page);
            cleared += 1;
        }
    }
    assert!(cleared >= 3, "heads and branches carried the flag: {cleared} pages");
    let db = open(image);
    assert_eq!(read_all(&db.begin_read().expect("a reader")), 0, "every read of the old file succeeds");
    let txn = db.begin_write().expect("a writer");
    let mut tree = BTree::open(&txn, "t").expect("open");
    for i in 300..600u32 {
        tree.insert(format!("key{i:05}").as_bytes(), &[1; 30]).expect("insert");
    }
    drop(tree);
    txn.commit(Durability::Full).expect("commit");
    assert!(quiredb_engine::check(&db).expect("check").is_clean());
    let txn = db.begin_read().expect("a reader");
    assert!(quiredb_structures::check::check_all(&txn).expect("check").is_empty());
    assert_eq!(read_all(&txn), 0);
}

/// Every read of the three structures; errors are fine (the bytes are damaged), a
/// panic is the failure the caller looks for. Returns how many reads failed.
fn read_all(txn: &impl PageRead) -> usize {
    let mut failed = 0;
    let mut note = |ok: bool| failed += usize::from(!ok);
    match BTree::open(txn, "t") {
        Ok(tree) => {
            for i in (0..300).step_by(7) {
                note(tree.get_vec(format!("key{i:05}").as_bytes()).is_ok());
            }
            note(tree.range(Bound::Unbounded, Bound::Unbounded).take(400).all(|entry| entry.is_ok()));
            note(tree.range(Bound::Unbounded, Bound::Unbounded).rev().take(400).all(|entry| entry.is_ok()));
            note(quiredb_structures::btree::check(&tree).is_ok_and(|problems| problems.is_empty()));
        }
        Err(_) => note(false),
    }
    match Queue::open(txn, "q") {
        Ok(queue) => {
            note(queue.len().is_ok());
            note(queue.for_each(None, |_, _| std::ops::ControlFlow::Continue(())).is_ok());
        }
        Err(_) => note(false),
    }
    match RTree::<_, 2>::open(txn, "r") {
        Ok(rtree) => {
            let everything = Rect::new([-1e9, -1e9], [1e9, 1e9]);
            let window = rtree.window(&everything, WindowMode::Intersects);
            note(window.is_ok_and(|mut hits| hits.all(|hit| hit.is_ok())));
            let nearest = rtree.nearest([3.0, 3.0], None);
            note(nearest.is_ok_and(|mut found| found.by_ref().take(20).all(|hit| hit.is_ok())));
            note(rtree.check().is_ok_and(|problems| problems.is_empty()));
        }
        Err(_) => note(false),
    }
    failed
}

/// One damage: a random u16 into the first 512 payload bytes (headers, prefixes,
/// slots), a random byte anywhere, or a run of 0xFF.
fn damage(page: &mut [u8], rng: &mut Rng) -> String {
    match rng.below(3) {
        0 => {
            let at = rng.below(256) as usize * 2;
            let value = rng.below(1 << 16) as u16;
            page[at..at + 2].copy_from_slice(&value.to_le_bytes());
            format!("u16 {value} at {at}")
        }
        1 => {
            let at = rng.index(page.len());
            page[at] = rng.below(256) as u8;
            format!("byte {} at {at}", page[at])
        }
        _ => {
            let at = rng.index(page.len() - 16);
            page[at..at + 16].fill(0xFF);
            format!("16 x 0xFF at {at}")
        }
    }
}

#[test]
fn random_damage_to_any_structure_page_gives_errors_never_a_panic() {
    // Proves: B+tree, queue and R*-tree reads (gets, scans both ways, cursors, window
    // and nearest queries, the checkers) treat every offset, length and count read
    // from a page as untrusted: bytes damaged through the raw page API in a write
    // transaction (then read in it, and the transaction dropped) never panic.
    let seed = quiredb_test_support::seed(0xDA3A_6ED5);
    let mut rng = Rng::new(seed | 1);
    let db = three_structures();
    let pages: Vec<(PageId, PageKind)> = {
        let txn = db.begin_read().expect("a reader");
        (1..db.meta().logical_next)
            .filter_map(|id| txn.page(PageId(id)).ok().map(|page| (PageId(id), page.kind())))
            .filter(|(_, kind)| quiredb_structures::PAGE_KINDS.iter().any(|named| named.kind == *kind))
            .collect()
    };
    assert!(pages.len() > 20, "the structures span many pages: {}", pages.len());
    let (mut panics, mut noticed) = (Vec::new(), 0);
    for round in 0..1500 {
        let txn = db.begin_write().expect("a writer");
        let (id, kind) = pages[rng.index(pages.len())];
        let what: Vec<String> = {
            let mut page = txn.page_mut(id).expect("the page is mapped");
            (0..1 + rng.below(3)).map(|_| damage(&mut page, &mut rng)).collect()
        };
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| read_all(&txn))) {
            Ok(failed) => noticed += usize::from(failed > 0),
            Err(_) => panics.push(format!("round {round}: page {} of kind {kind}: {what:?}", id.0)),
        }
    }
    assert!(panics.is_empty(), "seed {seed}: {} reads panicked:\n{}", panics.len(), panics.join("\n"));
    // The damage reaches the readers (about one round in six breaks a read or a check;
    // the rest hit value bytes or unused space).
    assert!(noticed > 100, "seed {seed}: only {noticed} of 1500 damaged rounds were noticed");
}
