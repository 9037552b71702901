//! The writer's side of the page map (shadow paging): translating logical ids through
//! the transaction's own copy of the map, pointing an id at a new physical page by
//! copying the map pages on its path top-down (a copy-on-write radix tree, one copy
//! per page per transaction), releasing map pages that became empty (`compact.rs` moves
//! pages out of the end of the file). Read `core.rs` for the read side and
//! `engine/FORMAT.md` for the map page layout.

use super::write::{WriteState, WriteTxn};
use crate::core::Core;
use crate::error::Result;
use crate::page::{self, HEADER_SIZE, PageKind, PhysId};

impl<'db> WriteTxn<'db> {
    /// Translates a logical id through the writer's own (possibly modified) page map.
    pub(super) fn lookup(&self, state: &mut WriteState, logical: u64) -> Result<Option<PhysId>> {
        if let Some(phys) = state.remembered(logical) {
            return Ok(Some(phys));
        }
        // An id this transaction did not remap maps as in the base snapshot, so the
        // shared table answers for it (and learns from the walk below).
        let table = &self.core.translations;
        let shared = !state.is_touched(table.slot_of(logical));
        if shared && let Some(phys) = table.get(crate::page::PageId(logical), self.base.txn) {
            state.remember(logical, phys.0);
            return Ok(Some(phys));
        }
        let meta = state.meta;
        if meta.map_depth == 0 || logical >= self.core.map_capacity(meta.map_depth) {
            return Ok(None);
        }
        let mut phys = meta.map_root;
        for level in (1..=meta.map_depth).rev() {
            let page = self.read_any(state, phys, Some(PageKind::MAP), u64::from(level))?;
            let entry = Core::map_entry(page.guard_bytes(), self.core.map_index(logical, level));
            if entry == 0 {
                return Ok(None);
            }
            crate::core::check_map_entry(phys, entry, meta.page_count)?;
            phys = PhysId(entry);
        }
        state.remember(logical, phys.0);
        if shared {
            table.fill(crate::page::PageId(logical), phys, self.base.txn);
        }
        Ok(Some(phys))
    }

    /// Points `logical` at `target` (0 = unmapped), copying map pages top-down.
    pub(super) fn map_set(&self, state: &mut WriteState, logical: u64, target: u64) -> Result<()> {
        state.remember(logical, target);
        let table = &self.core.translations;
        state.touch(table.slot_of(logical), logical, target);
        while logical >= self.core.map_capacity(state.meta.map_depth) {
            let level = state.meta.map_depth + 1;
            if self.core.fanout.checked_pow(level).is_none() {
                // Only a corrupt next-id or free-id list gets here (ids that large are
                // never handed out): the map stays within 64-bit index arithmetic.
                return Err(crate::error::Error::corrupted_logical(
                    crate::page::PageId(logical),
                    "beyond the ids the page map can address",
                ));
            }
            let old_root = state.meta.map_root.0;
            let (root, mut guard) = self.new_page(state, PageKind::MAP, u64::from(level))?;
            page::write_u64(&mut guard.bytes, HEADER_SIZE, old_root);
            state.meta.map_root = root;
            state.meta.map_depth = level;
        }
        let depth = state.meta.map_depth;
        let (root, mut guard) = self.writable(state, state.meta.map_root, Some(PageKind::MAP), u64::from(depth))?;
        state.meta.map_root = root;
        for level in (1..=depth).rev() {
            let slot = HEADER_SIZE + 8 * self.core.map_index(logical, level) as usize;
            if level == 1 {
                page::write_u64(&mut guard.bytes, slot, target);
                return Ok(());
            }
            let child = page::read_u64(&guard.bytes, slot);
            let (new_child, child_guard) = if child == 0 {
                self.new_page(state, PageKind::MAP, u64::from(level - 1))?
            } else {
                self.writable(state, PhysId(child), Some(PageKind::MAP), u64::from(level - 1))?
            };
            page::write_u64(&mut guard.bytes, slot, new_child.0);
            guard = child_guard;
        }
        unreachable!("the loop returns at level 1 of a map with depth {depth} >= 1")
    }

    /// After unmapping `logical`, releases the map pages on its path that became empty
    /// (all on the path are fresh: `map_set` just copied them). The root stays.
    pub(super) fn prune_map(&self, state: &mut WriteState, logical: u64) -> Result<()> {
        let depth = state.meta.map_depth;
        let mut path = vec![state.meta.map_root];
        for level in (2..=depth).rev() {
            let page = self.read_any(state, *path.last().expect("root"), Some(PageKind::MAP), u64::from(level))?;
            let child = Core::map_entry(page.guard_bytes(), self.core.map_index(logical, level));
            path.push(PhysId(child));
        }
        for level in 1..depth {
            let phys = path[(depth - level) as usize];
            let empty = {
                let page = self.read_any(state, phys, Some(PageKind::MAP), u64::from(level))?;
                page.guard_bytes()[HEADER_SIZE..].iter().all(|&byte| byte == 0)
            };
            if !empty {
                return Ok(());
            }
            let index = state.dirty.remove(&phys.0).expect("a just-copied map page is dirty");
            // Map pages are never lent out; one that is locked is also a data page of a
            // corrupt file.
            let guard =
                self.core.pool.dirty_mut(index, phys).ok_or_else(|| {
                    crate::error::Error::corrupted(phys, "a page-map page is also a locked data page")
                })?;
            self.core.pool.discard(guard);
            state.fresh.remove(&phys.0);
            self.core.free.lock().free.insert(phys.0);
            let parent = path[(depth - level - 1) as usize];
            let mut guard = self.fresh_frame(state, parent, u64::from(level + 1))?;
            let slot = HEADER_SIZE + 8 * self.core.map_index(logical, level + 1) as usize;
            page::write_u64(&mut guard.bytes, slot, 0);
        }
        Ok(())
    }
}
