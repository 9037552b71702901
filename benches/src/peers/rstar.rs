//! rstar 0.14 peer (in memory): `rstar` with the default parameters (max 6 children)
//! and `rstar-6-16` (min 6, max 16, 5 reinsertions), both R*-insertion. Spatial
//! family (T4), 2 or 5 dimensions; `[f64; N]` points carrying u64 ids.

use crate::error::{BenchError, Result};
use crate::family::{SpatialEngine, WindowAnswer};
use rstar::primitives::GeomWithData;
use rstar::{AABB, DefaultParams, Point, RStarInsertionStrategy, RTree, RTreeParams};
use std::path::Path;

/// Node parameters min 6 / max 16.
pub struct Params6x16;

impl RTreeParams for Params6x16 {
    const MIN_SIZE: usize = 6;
    const MAX_SIZE: usize = 16;
    const REINSERTION_COUNT: usize = 5;
    type DefaultInsertionStrategy = RStarInsertionStrategy;
}

type Item<const N: usize> = GeomWithData<[f64; N], u64>;

/// An rstar tree of N-dimensional points.
pub struct Rstar<const N: usize, P: RTreeParams> {
    tree: RTree<Item<N>, P>,
}

fn point<const N: usize>(p: &[f64]) -> [f64; N] {
    p.try_into().expect("the workload passes points of the engine's dimension")
}

impl<const N: usize, P: RTreeParams> SpatialEngine for Rstar<N, P>
where
    [f64; N]: Point<Scalar = f64>,
{
    fn insert(&mut self, id: u64, p: &[f64]) -> Result<()> {
        self.tree.insert(GeomWithData::new(point::<N>(p), id));
        Ok(())
    }

    fn commit(&mut self) -> Result<()> {
        Ok(())
    }

    fn bulk_load(&mut self, ids: &[u64], coords: &[f64]) -> Result<()> {
        let items =
            ids.iter().zip(coords.chunks_exact(N)).map(|(&id, c)| GeomWithData::new(point::<N>(c), id)).collect();
        self.tree = RTree::bulk_load_with_params(items);
        Ok(())
    }

    fn window(&mut self, lo: &[f64], hi: &[f64]) -> Result<WindowAnswer> {
        let envelope = AABB::from_corners(point::<N>(lo), point::<N>(hi));
        let mut answer = WindowAnswer::default();
        for item in self.tree.locate_in_envelope(envelope) {
            answer.add(item.data);
        }
        Ok(answer)
    }

    fn knn(&mut self, p: &[f64], k: usize, out: &mut Vec<u64>) -> Result<()> {
        out.clear();
        out.extend(self.tree.nearest_neighbor_iter(point::<N>(p)).take(k).map(|i| i.data));
        Ok(())
    }
}

fn make<P: RTreeParams + 'static>(dims: usize, id: &str) -> Result<Box<dyn SpatialEngine>> {
    match dims {
        2 => Ok(Box::new(Rstar::<2, P> { tree: RTree::new_with_params() })),
        5 => Ok(Box::new(Rstar::<5, P> { tree: RTree::new_with_params() })),
        _ => Err(BenchError::engine(id, format!("{dims} dimensions not built"))),
    }
}

/// Opener for `rstar` (default parameters).
pub fn open_default(_dir: &Path, dims: usize) -> Result<Box<dyn SpatialEngine>> {
    make::<DefaultParams>(dims, "rstar")
}

/// Opener for `rstar-6-16`.
pub fn open_6_16(_dir: &Path, dims: usize) -> Result<Box<dyn SpatialEngine>> {
    make::<Params6x16>(dims, "rstar-6-16")
}
