//! Engine micro-benchmarks (criterion). What the engine-core issue asks to measure:
//!
//! - `commit/*`: a durable one-page commit (`Full`, `Checksummed`) against a raw 8 KiB
//!   `pwrite` + `fdatasync` on the same file system, in the same run;
//! - `page_access/*`: a cached page through the pool (lookup + pin + unpin), through a
//!   snapshot's page map, and from two threads at once;
//! - `eviction_policy/*`: a hit under CLOCK (our pool) against a hit in the `lru` crate
//!   behind a mutex, the alternative the issue names;
//! - `miss_path/*`: a pool miss served by `pread` against one copied from the memory map;
//! - bookkeeping bytes per frame and per page-map entry, printed at start.
//!
//! `cargo bench -p quiredb-engine` runs them; `cargo test --benches` runs each once.

use criterion::{Criterion, criterion_group, criterion_main};
use quiredb_engine::testing::{FRAME_OVERHEAD_BYTES, MAP_ENTRY_BYTES, Pool};
use quiredb_engine::{Database, Durability, Options, PageId, PageKind, PageRead, PhysId};
use std::fs::OpenOptions;
use std::hint::black_box;
use std::os::unix::fs::FileExt;
use std::time::{Duration, Instant};

fn scratch_dir() -> tempfile::TempDir {
    // Same file system as the build (not a tmpfs), so syncs are real.
    tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).expect("scratch directory")
}

fn commit_latency(c: &mut Criterion) {
    let dir = scratch_dir();
    let mut group = c.benchmark_group("commit");
    group.sample_size(30).measurement_time(Duration::from_secs(3));
    let raw_path = dir.path().join("raw");
    let raw = OpenOptions::new().create(true).truncate(false).read(true).write(true).open(&raw_path).unwrap();
    raw.set_len(1 << 20).unwrap();
    raw.sync_all().unwrap();
    let page = vec![7u8; 8192];
    group.bench_function("raw_pwrite_fdatasync_8k", |b| {
        b.iter(|| {
            raw.write_all_at(&page, 8192).unwrap();
            raw.sync_data().unwrap();
        })
    });
    for (name, durability) in [("checksummed_1_page", Durability::Checksummed), ("full_1_page", Durability::Full)] {
        let db = Database::create(dir.path().join(name), Options::default()).unwrap();
        let txn = db.begin_write().unwrap();
        let id = txn.alloc_page(PageKind::structure(16)).unwrap().id();
        txn.commit(Durability::Full).unwrap();
        let mut value = 0u64;
        group.bench_function(name, |b| {
            b.iter(|| {
                value += 1;
                let txn = db.begin_write().unwrap();
                txn.page_mut(id).unwrap()[..8].copy_from_slice(&value.to_le_bytes());
                txn.commit(durability).unwrap();
            })
        });
    }
    group.finish();
}

fn page_access(c: &mut Criterion) {
    println!(
        "bookkeeping: {FRAME_OVERHEAD_BYTES} bytes per frame ({:.2}% of 8 KiB), {MAP_ENTRY_BYTES} bytes per page-map entry",
        FRAME_OVERHEAD_BYTES as f64 * 100.0 / 8192.0
    );
    let mut group = c.benchmark_group("page_access");
    let pool = Pool::new(8192, 1024).expect("pool mapping");
    for page in 0..512u64 {
        drop(pool.get(PhysId(page), |bytes| {
            bytes.fill(page as u8);
            Ok(())
        }));
    }
    let mut next = 0u64;
    group.bench_function("pool_lookup_pin_unpin", |b| {
        b.iter(|| {
            next = (next + 97) % 512;
            let (guard, _) = pool.lookup(PhysId(next)).expect("cached");
            black_box(guard.bytes[100]);
        })
    });
    group.bench_function("pool_lookup_pin_unpin_2_threads", |b| {
        b.iter_custom(|iterations| {
            let start = Instant::now();
            std::thread::scope(|scope| {
                for thread in 0..2u64 {
                    let pool = &pool;
                    scope.spawn(move || {
                        let mut page = thread;
                        for _ in 0..iterations {
                            page = (page + 97) % 512;
                            black_box(pool.lookup(PhysId(page)).expect("cached").0.bytes[100]);
                        }
                    });
                }
            });
            start.elapsed() // per iteration of each thread: both run concurrently
        })
    });
    let dir = scratch_dir();
    let db = Database::create(dir.path().join("access"), Options::default()).unwrap();
    let txn = db.begin_write().unwrap();
    let ids: Vec<PageId> = (0..512).map(|_| txn.alloc_page(PageKind::structure(16)).unwrap().id()).collect();
    txn.commit(Durability::Full).unwrap();
    let snapshot = db.begin_read().unwrap();
    let mut index = 0usize;
    group.bench_function("snapshot_page_through_map", |b| {
        b.iter(|| {
            index = (index + 97) % ids.len();
            black_box(snapshot.page(ids[index]).unwrap()[10]);
        })
    });
    drop(snapshot);
    // What a point query in its own read transaction pays: a fresh snapshot, a
    // root-to-leaf path of pages, and the end of the snapshot.
    group.bench_function("fresh_snapshot_4_pages", |b| {
        b.iter(|| {
            let snapshot = db.begin_read().unwrap();
            for _ in 0..4 {
                index = (index + 97) % ids.len();
                black_box(snapshot.page(ids[index]).unwrap()[10]);
            }
        })
    });
    group.finish();
}

fn eviction_policy(c: &mut Criterion) {
    let mut group = c.benchmark_group("eviction_policy");
    let lru = parking_lot::Mutex::new(lru::LruCache::<u64, u32>::new(std::num::NonZeroUsize::new(1024).unwrap()));
    for page in 0..512u64 {
        lru.lock().put(page, page as u32);
    }
    let run_threads = |threads: u64, iterations: u64, lookup: &(dyn Fn(u64) + Sync)| {
        let start = Instant::now();
        std::thread::scope(|scope| {
            for thread in 0..threads {
                scope.spawn(move || {
                    let mut page = thread;
                    for _ in 0..iterations {
                        page = (page + 97) % 512;
                        lookup(page);
                    }
                });
            }
        });
        start.elapsed()
    };
    let pool = Pool::new(8192, 1024).expect("pool mapping");
    for page in 0..512u64 {
        drop(pool.get(PhysId(page), |_| Ok(())));
    }
    for threads in [1, 2] {
        group.bench_function(format!("lru_mutex_hit_{threads}_threads"), |b| {
            b.iter_custom(|n| {
                run_threads(threads, n, &|page| {
                    black_box(lru.lock().get(&page).copied());
                })
            })
        });
        group.bench_function(format!("clock_pool_hit_{threads}_threads"), |b| {
            b.iter_custom(|n| run_threads(threads, n, &|page| drop(black_box(pool.lookup(PhysId(page))))))
        });
    }
    group.finish();
}

/// Pool misses served by `pread` against misses copied from the memory map (the pages
/// are in the OS page cache either way: this measures the read path, not the disk).
fn miss_path(c: &mut Criterion) {
    let dir = scratch_dir();
    let path = dir.path().join("misses");
    let db = Database::create(&path, Options::default()).unwrap();
    let txn = db.begin_write().unwrap();
    let ids: Vec<PageId> = (0..4096).map(|_| txn.alloc_page(PageKind::structure(16)).unwrap().id()).collect();
    txn.commit(Durability::Full).unwrap();
    drop(db);
    let mut group = c.benchmark_group("miss_path");
    for (name, mmap_reads) in [("pread", false), ("mmap", true)] {
        let options = Database::builder().cache_bytes(64 * 8192).mmap_reads(mmap_reads).into_options();
        let db = Database::open(&path, options).unwrap();
        let snapshot = db.begin_read().unwrap();
        let mut index = 0usize;
        group.bench_function(name, |b| {
            b.iter(|| {
                index = (index + 997) % ids.len();
                black_box(snapshot.page(ids[index]).unwrap()[10]);
            })
        });
    }
    group.finish();
}

criterion_group!(benches, commit_latency, page_access, eviction_policy, miss_path);
criterion_main!(benches);
