//! The collection's dictionary tree (`xml:C:dict`): names, the path summary, the
//! document list and per-name counts.
//!
//! | key | value |
//! |-----|-------|
//! | `n` + name (UTF-8) | name id (u32 LE); ids start at 1 |
//! | `i` + name id (u32 BE) | name (UTF-8) |
//! | `p` + path id (u32 BE) | varint parent path, kind (u8), varint name id, varint count |
//! | `d` + document number (u64 BE) | varint pre of the document node, then its file (UTF-8) |
//! | `c` + kind (u8) + name id (u32 BE) | varint count of nodes of that kind and name |
//! | `v` + kind (u8) + name id (u32 BE) | varint count of those nodes in the value index |
//!
//! Path 0 is the document node's path `/`; every other path is its parent path plus
//! one step (kind and name), so the summary is a tree whose depth is the level.
//!
//! Read next: `shred.rs`, which grows these while loading.

use super::format::{Kind, Reader, put_varint};
use super::{XmlStore, corrupted};
use crate::error::Result;
use quiredb_engine::{PageRead, WriteTxn};
use quiredb_structures::btree::BTree;
use rustc_hash::FxHashMap;
use std::collections::HashMap;
use std::ops::Bound;

/// One path of the summary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathInfo {
    /// The parent path (path 0 is its own parent).
    pub parent: u32,
    pub kind: Kind,
    pub name: u32,
    /// Nodes with this path.
    pub count: u64,
}

/// One document of the collection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Document {
    /// Its number in the collection (load order).
    pub number: u64,
    /// Pre of its document node.
    pub pre: u64,
    /// The file it was loaded from.
    pub file: String,
}

/// The names and paths of a collection, in memory while loading or querying.
#[derive(Debug, Default)]
pub struct Dictionary {
    pub ids: FxHashMap<String, u32>,
    /// Names by id (index 0 is the empty name of unnamed kinds).
    pub names: Vec<String>,
    pub paths: Vec<PathInfo>,
    /// Depth of every path (its nodes' level).
    pub depths: Vec<u32>,
    pub path_ids: FxHashMap<(u32, Kind, u32), u32>,
    /// Counts by kind and name.
    pub counts: HashMap<(Kind, u32), u64>,
    /// Value-index entries by kind and name.
    pub indexed: HashMap<(Kind, u32), u64>,
}

impl Dictionary {
    /// Reads the dictionary of a collection whose dict tree is `tree`.
    pub fn read<T: PageRead>(tree: &BTree<'_, T>, collection: &str) -> Result<Dictionary> {
        let mut dict = Dictionary { names: vec![String::new()], ..Dictionary::default() };
        let bad = |reason: String| corrupted(collection, 0, format!("dictionary: {reason}"));
        for entry in tree.range(Bound::Included(b"i".as_slice()), Bound::Excluded(b"j".as_slice())) {
            let (key, value) = entry?;
            let name = String::from_utf8(value).map_err(|_| bad("a name is not UTF-8".into()))?;
            if key.len() != 5 || u32::from_be_bytes(key[1..5].try_into().expect("4 bytes")) as usize != dict.names.len()
            {
                return Err(bad(format!("name ids are not dense at {}", dict.names.len())));
            }
            dict.ids.insert(name.clone(), dict.names.len() as u32);
            dict.names.push(name);
        }
        for entry in tree.range(Bound::Included(b"p".as_slice()), Bound::Excluded(b"q".as_slice())) {
            let (_, value) = entry?;
            let mut r = Reader::new(&value);
            let parent = r.u32().map_err(bad)?;
            let kind = Kind::from_code(r.bytes(1).map_err(bad)?[0]).ok_or_else(|| bad("unknown path kind".into()))?;
            let info = PathInfo { parent, kind, name: r.u32().map_err(bad)?, count: r.varint().map_err(bad)? };
            let depth = if dict.paths.is_empty() {
                0
            } else {
                dict.depths.get(info.parent as usize).ok_or_else(|| bad("a path's parent comes after it".into()))? + 1
            };
            dict.path_ids.insert((info.parent, info.kind, info.name), dict.paths.len() as u32);
            dict.paths.push(info);
            dict.depths.push(depth);
        }
        dict.counts = read_counts(tree, b'c', collection)?;
        dict.indexed = read_counts(tree, b'v', collection)?;
        Ok(dict)
    }

    /// The path summary as block decoders take it.
    pub fn paths(&self) -> super::record::Paths<'_> {
        super::record::Paths { info: &self.paths, depths: &self.depths }
    }

    /// Adds path 0, `/` (the document node's), to an empty summary.
    pub fn ensure_root_path(&mut self) {
        if self.paths.is_empty() {
            self.paths.push(PathInfo { parent: 0, kind: Kind::Document, name: 0, count: 0 });
            self.depths.push(0);
        }
    }

    /// The id of `name`, adding it when new.
    pub fn intern(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = self.names.len() as u32;
        self.ids.insert(name.to_owned(), id);
        self.names.push(name.to_owned());
        id
    }

    /// The id of the path `parent/step`, adding it when new.
    pub fn path(&mut self, parent: u32, kind: Kind, name: u32) -> u32 {
        if let Some(&id) = self.path_ids.get(&(parent, kind, name)) {
            return id;
        }
        let id = self.paths.len() as u32;
        self.path_ids.insert((parent, kind, name), id);
        self.paths.push(PathInfo { parent, kind, name, count: 0 });
        self.depths.push(self.depths[parent as usize] + 1);
        id
    }

    /// Sets the per-name counts from the path counts (each path has one kind and name).
    pub fn recount(&mut self) {
        self.counts.clear();
        for path in &self.paths {
            *self.counts.entry((path.kind, path.name)).or_insert(0) += path.count;
        }
    }

    /// Writes names from `first_name` on, and every path count and per-name count
    /// (they change with every load).
    pub fn store(&self, tree: &mut BTree<'_, WriteTxn<'_>>, first_name: usize) -> Result<()> {
        let mut key = Vec::new();
        for (id, name) in self.names.iter().enumerate().skip(first_name.max(1)) {
            key.clear();
            key.push(b'n');
            key.extend_from_slice(name.as_bytes());
            tree.insert(&key, &(id as u32).to_le_bytes())?;
            key.clear();
            key.push(b'i');
            key.extend_from_slice(&(id as u32).to_be_bytes());
            tree.insert(&key, name.as_bytes())?;
        }
        let mut value = Vec::new();
        for (id, path) in self.paths.iter().enumerate() {
            value.clear();
            put_varint(&mut value, u64::from(path.parent));
            value.push(path.kind as u8);
            put_varint(&mut value, u64::from(path.name));
            put_varint(&mut value, path.count);
            key.clear();
            key.push(b'p');
            key.extend_from_slice(&(id as u32).to_be_bytes());
            tree.insert(&key, &value)?;
        }
        for (tag, counts) in [(b'c', &self.counts), (b'v', &self.indexed)] {
            for (&(kind, name), &count) in counts {
                key.clear();
                key.extend_from_slice(&[tag, kind as u8]);
                key.extend_from_slice(&name.to_be_bytes());
                value.clear();
                put_varint(&mut value, count);
                tree.insert(&key, &value)?;
            }
        }
        Ok(())
    }
}

/// Reads the counts stored under `tag` (`c` or `v`).
fn read_counts<T: PageRead>(tree: &BTree<'_, T>, tag: u8, collection: &str) -> Result<HashMap<(Kind, u32), u64>> {
    let bad = |reason: String| corrupted(collection, 0, format!("dictionary counts: {reason}"));
    let mut counts = HashMap::new();
    for entry in tree.range(Bound::Included([tag].as_slice()), Bound::Excluded([tag + 1].as_slice())) {
        let (key, value) = entry?;
        let kind = key.get(1).and_then(|&k| Kind::from_code(k)).ok_or_else(|| bad("bad count key".into()))?;
        let name = key.get(2..6).filter(|_| key.len() == 6).ok_or_else(|| bad("bad count key".into()))?;
        let count = Reader::new(&value).varint().map_err(bad)?;
        counts.insert((kind, u32::from_be_bytes(name.try_into().expect("4 bytes"))), count);
    }
    Ok(counts)
}

/// Adds document `number` (node `pre`, loaded from `file`) to the dict tree.
pub fn store_document(tree: &mut BTree<'_, WriteTxn<'_>>, number: u64, pre: u64, file: &str) -> Result<()> {
    let mut key = vec![b'd'];
    key.extend_from_slice(&number.to_be_bytes());
    let mut value = Vec::new();
    put_varint(&mut value, pre);
    value.extend_from_slice(file.as_bytes());
    tree.insert(&key, &value)?;
    Ok(())
}

impl<T: PageRead> XmlStore<'_, T> {
    /// The names, path summary and counts (read when the store was opened).
    pub fn dictionary(&self) -> &Dictionary {
        &self.dictionary
    }

    /// The documents of the collection in order.
    pub fn documents(&self) -> Result<Vec<Document>> {
        let mut documents = Vec::new();
        for entry in self.dict.range(Bound::Included(b"d".as_slice()), Bound::Excluded(b"e".as_slice())) {
            let (key, value) = entry?;
            let bad = |reason: String| corrupted(&self.name, 0, format!("document list: {reason}"));
            let number = key.get(1..9).ok_or_else(|| bad("short key".into()))?;
            let mut r = Reader::new(&value);
            let pre = r.varint().map_err(bad)?;
            let file = String::from_utf8_lossy(&value[r.position()..]).into_owned();
            documents.push(Document { number: u64::from_be_bytes(number.try_into().expect("8 bytes")), pre, file });
        }
        Ok(documents)
    }

    /// The id of `name`, if the collection has it.
    pub fn name_id(&self, name: &str) -> Result<Option<u32>> {
        let mut key = vec![b'n'];
        key.extend_from_slice(name.as_bytes());
        let Some(value) = self.dict.get_vec(&key)? else { return Ok(None) };
        let bytes: [u8; 4] = value.try_into().map_err(|_| corrupted(&self.name, 0, "name id is not 4 bytes"))?;
        Ok(Some(u32::from_le_bytes(bytes)))
    }
}
