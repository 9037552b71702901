//! Randomised tests of the in-node search against a sorted vector: keys that share long
//! prefixes (so the node's skip is large and shrinks, grows and stays stale through
//! in-place inserts and removals), keys that are prefixes of each other or end in zero
//! bytes, leaves and branches. `QUIRE_SEED` replays a printed seed.

use super::node::{self, NODE_HEADER};
use super::node_write;
use super::write::{branch_cell, leaf_cell};
use quiredb_test_support::Rng;

fn seed() -> u64 {
    quiredb_test_support::seed(0x005E_A2C4)
}

/// One of a few long shared bases, then a short tail over a tiny alphabet (zero
/// included), so keys collide on long prefixes and are often prefixes of each other.
fn random_key(rng: &mut Rng, bases: &[Vec<u8>]) -> Vec<u8> {
    let base = &bases[rng.below(bases.len() as u64) as usize];
    let mut key = base[..rng.below(base.len() as u64 + 1) as usize].to_vec();
    if rng.below(4) > 0 {
        key.truncate(base.len());
        key.extend_from_slice(&base[key.len()..]);
    }
    for _ in 0..rng.below(7) {
        key.push(rng.below(3) as u8);
    }
    key
}

fn cell(key: &[u8], leaf: bool) -> Vec<u8> {
    if leaf { leaf_cell(key, 1, &[9]) } else { branch_cell(key) }
}

/// The node agrees with `model`: skip and prefixes valid, every probe found where the
/// sorted vector puts it.
fn assert_agrees(page: &[u8], model: &[Vec<u8>], probes: &[Vec<u8>], what: &str) {
    assert_eq!(node::count(page), model.len(), "{what}: count");
    let skip = node::skip(page);
    for (i, key) in model.iter().enumerate() {
        assert_eq!(node::key(page, i), Ok(key.as_slice()), "{what}: key {i}");
        assert!(key.len() >= skip && key[..skip] == model[0][..skip], "{what}: skip {skip} too long");
        assert_eq!(node::prefix(page, i), node::key_prefix(&key[skip..]), "{what}: prefix {i}");
    }
    for probe in probes.iter().chain(model) {
        let expected = model.binary_search(probe);
        assert_eq!(node::search(page, probe), Ok(expected), "{what}: search {probe:?} (skip {skip})");
    }
}

fn run(seed: u64, leaf: bool) {
    let mut rng = Rng::new(seed | 1);
    for round in 0..40 {
        let bases: Vec<Vec<u8>> =
            (0..1 + rng.below(3)).map(|_| (0..rng.below(40)).map(|_| rng.below(3) as u8).collect()).collect();
        let mut model: Vec<Vec<u8>> = (0..rng.below(30)).map(|_| random_key(&mut rng, &bases)).collect();
        model.sort();
        model.dedup();
        let mut page = vec![0u8; 4064];
        let cells: Vec<Vec<u8>> = model.iter().map(|k| cell(k, leaf)).collect();
        let refs: Vec<&[u8]> = cells.iter().map(Vec::as_slice).collect();
        let children: Vec<u64> = (1..=model.len() as u64 + 1).collect();
        node_write::build(&mut page, u8::from(!leaf), (0, 0), &refs, if leaf { &[] } else { &children });
        for step in 0..120 {
            let key = random_key(&mut rng, &bases);
            match model.binary_search(&key) {
                Err(i) if rng.below(3) > 0 && node_write::insert(&mut page, i, &cell(&key, leaf), 7) == Ok(true) => {
                    model.insert(i, key);
                }
                Ok(i) | Err(i) if i < model.len() => {
                    node_write::remove(&mut page, i).expect("a node built by the test");
                    model.remove(i);
                }
                _ => {}
            }
            let probes: Vec<Vec<u8>> = (0..8).map(|_| random_key(&mut rng, &bases)).collect();
            assert_agrees(&page, &model, &probes, &format!("seed {seed} leaf {leaf} round {round} step {step}"));
        }
        assert!(page.len() > NODE_HEADER);
    }
}

/// In-node search agrees with binary search over a sorted vector through random
/// builds, inserts and removals, in leaves and branches.
#[test]
fn search_matches_sorted_vector() {
    let seed = seed();
    run(seed, true);
    run(seed, false);
}

/// The interpolating lower bound over the prefix array agrees with `partition_point`
/// for even, clustered and skewed prefix distributions and every size up to 300.
#[test]
fn prefix_lower_matches_partition_point() {
    let seed = seed();
    let mut rng = Rng::new(seed | 1);
    let mut page = vec![0u8; NODE_HEADER + 8 * 300];
    for round in 0..600 {
        let n = rng.below(301) as usize;
        let mut prefixes: Vec<u64> = (0..n)
            .map(|_| match round % 4 {
                0 => rng.next(),
                1 => rng.below(5) * 1000,
                2 => 1u64 << rng.below(64),
                _ => u64::MAX - rng.below(3),
            })
            .collect();
        prefixes.sort_unstable();
        for (i, p) in prefixes.iter().enumerate() {
            page[NODE_HEADER + 8 * i..NODE_HEADER + 8 * i + 8].copy_from_slice(&p.to_be_bytes());
        }
        let mut targets: Vec<u64> = vec![0, 1, u64::MAX, u64::MAX - 1, rng.next()];
        for p in prefixes.iter().step_by(n.div_ceil(40).max(1)) {
            targets.extend([*p, p.wrapping_add(1), p.wrapping_sub(1)]);
        }
        for target in targets {
            let expected = prefixes.partition_point(|&p| p < target);
            assert_eq!(node::prefix_lower(&page, n, target), expected, "seed {seed} round {round} n {n} {target}");
        }
    }
}
