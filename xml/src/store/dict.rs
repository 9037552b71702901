//! The collection's dictionary tree (`xml:C:dict`): names, the path summary, the
//! document list and per-name counts.
//!
//! | key | value |
//! |-----|-------|
//! | `n` + name key | name id (u32 LE); ids start at 1 |
//! | `i` + name id (u32 BE) | name key |
//! | `p` + first path id of a block (u32 BE) | up to [`PATHS_PER_BLOCK`] paths in id order, each varint parent path, kind (u8), varint name id, varint count |
//! | `d` + document number (u64 BE) | varint pre of the document node, then its file (UTF-8) |
//! | `c` + kind (u8) + name id (u32 BE) | varint count of nodes of that kind and name |
//! | `v` + kind (u8) + name id (u32 BE) | varint count of those nodes in the value index |
//! | `x` + element pre (u64 BE) + prefix (UTF-8, empty for the default namespace) | the namespace URI the element declares for that prefix |
//! | `t` + element name id (u32 BE) + attribute name id (u32 BE) | empty: such attributes of such elements are IDs (`xml:id`, or declared `ID`), for XPath's `id()` |
//!
//! A name key is the qualified name as written (UTF-8), followed by a zero byte and
//! the namespace URI when the name has one: `dc:title` in two namespaces is two names.
//! Collections of format 1 kept no URIs ([`Dictionary::uris_known`] false): every key
//! is the qualified name alone.
//!
//! Path 0 is the document node's path `/`; every other path is its parent path plus
//! one step (kind and name), so the summary is a tree whose depth is the level. Paths
//! are stored in blocks: recursive documents have millions of distinct paths (1.6 M in
//! a TreeBank-like 118 MB document), one entry each took 42 MB.
//!
//! Read next: `shred.rs`, which grows these while loading.

use super::format::{Kind, Reader, put_varint};
use super::{XmlStore, corrupted};
use crate::error::Result;
use crate::xpath::names::NameTest;
use quiredb_engine::{PageRead, WriteTxn};
use quiredb_structures::btree::BTree;
use rustc_hash::FxHashMap;
use std::collections::HashMap;
use std::ops::Bound;

/// Children a path keeps in a list only; more go into a hash map as well.
const WIDE: usize = 16;

/// Paths per dictionary entry (a block stays in a leaf cell: at most 20 bytes each).
pub const PATHS_PER_BLOCK: usize = 64;

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
    /// Ids by name key (see the module's table).
    pub ids: FxHashMap<String, u32>,
    /// Qualified names by id (index 0 is the empty name of unnamed kinds).
    pub names: Vec<String>,
    /// Namespace URIs by id (empty: none).
    pub uris: Vec<String>,
    /// False for a collection of format 1, loaded before URIs were kept: its names
    /// all have an empty URI, whatever their namespace.
    pub uris_known: bool,
    /// The buffer [`Dictionary::intern`] builds a name key in.
    key: String,
    pub paths: Vec<PathInfo>,
    /// Depth of every path (its nodes' level).
    pub depths: Vec<u32>,
    /// Children of each path as a linked list (`u32::MAX` ends it) with their number;
    /// the children of paths with more than [`WIDE`] children are also in `wide`.
    first_child: Vec<u32>,
    next_sibling: Vec<u32>,
    child_count: Vec<u32>,
    wide: FxHashMap<(u32, Kind, u32), u32>,
    /// Counts by kind and name.
    pub counts: HashMap<(Kind, u32), u64>,
    /// Value-index entries by kind and name.
    pub indexed: HashMap<(Kind, u32), u64>,
    /// (element name, attribute name) pairs whose attributes were IDs in some document.
    pub id_attributes: std::collections::BTreeSet<(u32, u32)>,
}

impl Dictionary {
    /// An empty dictionary (a new collection's: it keeps URIs).
    pub fn new() -> Dictionary {
        Dictionary { names: vec![String::new()], uris: vec![String::new()], uris_known: true, ..Dictionary::default() }
    }

    /// Reads the dictionary of a collection whose dict tree is `tree`; `uris_known`
    /// says its format keeps namespace URIs.
    pub fn read<T: PageRead>(tree: &BTree<'_, T>, collection: &str, uris_known: bool) -> Result<Dictionary> {
        let mut dict = Dictionary { uris_known, ..Dictionary::new() };
        let bad = |reason: String| corrupted(collection, 0, format!("dictionary: {reason}"));
        for entry in tree.range(Bound::Included(b"i".as_slice()), Bound::Excluded(b"j".as_slice())) {
            let (key, value) = entry?;
            let name = String::from_utf8(value).map_err(|_| bad("a name is not UTF-8".into()))?;
            if key.len() != 5 || u32::from_be_bytes(key[1..5].try_into().expect("4 bytes")) as usize != dict.names.len()
            {
                return Err(bad(format!("name ids are not dense at {}", dict.names.len())));
            }
            let (qname, uri) = name.split_once('\0').unwrap_or((&name, ""));
            if !uris_known && !uri.is_empty() {
                return Err(bad(format!("name {qname} has a namespace URI in a format-1 collection")));
            }
            dict.names.push(qname.to_owned());
            dict.uris.push(uri.to_owned());
            dict.ids.insert(name, dict.names.len() as u32 - 1);
        }
        for entry in tree.range(Bound::Included(b"p".as_slice()), Bound::Excluded(b"q".as_slice())) {
            let (key, value) = entry?;
            let first = key.get(1..5).and_then(|k| <[u8; 4]>::try_from(k).ok()).map(u32::from_be_bytes);
            if first != Some(dict.paths.len() as u32) {
                return Err(bad(format!("path ids are not dense at {}", dict.paths.len())));
            }
            let mut r = Reader::new(&value);
            while !r.is_empty() {
                let parent = r.u32().map_err(bad)?;
                let kind =
                    Kind::from_code(r.bytes(1).map_err(bad)?[0]).ok_or_else(|| bad("unknown path kind".into()))?;
                let info = PathInfo { parent, kind, name: r.u32().map_err(bad)?, count: r.varint().map_err(bad)? };
                let depth = if dict.paths.is_empty() {
                    0
                } else {
                    let parent_depth = dict.depths.get(info.parent as usize);
                    parent_depth.ok_or_else(|| bad("a path's parent comes after it".into()))? + 1
                };
                dict.push_path(info, depth);
            }
        }
        for entry in tree.range(Bound::Included(b"t".as_slice()), Bound::Excluded(b"u".as_slice())) {
            let (key, _) = entry?;
            let pair = <[u8; 9]>::try_from(key.as_slice()).map_err(|_| bad("an ID pair key is not 9 bytes".into()))?;
            let element = u32::from_be_bytes(pair[1..5].try_into().expect("4 bytes"));
            dict.id_attributes.insert((element, u32::from_be_bytes(pair[5..9].try_into().expect("4 bytes"))));
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
            self.push_path(PathInfo { parent: 0, kind: Kind::Document, name: 0, count: 0 }, 0);
        }
    }

    /// Appends a path and links it under its parent (path 0 has none).
    fn push_path(&mut self, info: PathInfo, depth: u32) -> u32 {
        let id = self.paths.len() as u32;
        self.paths.push(info);
        self.depths.push(depth);
        self.first_child.push(u32::MAX);
        self.next_sibling.push(u32::MAX);
        self.child_count.push(0);
        if id > 0 {
            let parent = info.parent as usize;
            self.next_sibling[id as usize] = self.first_child[parent];
            self.first_child[parent] = id;
            self.child_count[parent] += 1;
            if self.child_count[parent] as usize == WIDE + 1 {
                let mut child = self.first_child[parent];
                while child != u32::MAX {
                    let c = self.paths[child as usize];
                    self.wide.insert((info.parent, c.kind, c.name), child);
                    child = self.next_sibling[child as usize];
                }
            } else if self.child_count[parent] as usize > WIDE {
                self.wide.insert((info.parent, info.kind, info.name), id);
            }
        }
        id
    }

    /// The id of qualified name `name` in namespace `uri` (empty: none), adding it
    /// when new. A collection that does not keep URIs ignores `uri`.
    pub fn intern(&mut self, name: &str, uri: &str) -> u32 {
        let uri = if self.uris_known { uri } else { "" };
        let key = if uri.is_empty() {
            name
        } else {
            self.key.clear();
            self.key.extend([name, "\0", uri]);
            &self.key
        };
        if let Some(&id) = self.ids.get(key) {
            return id;
        }
        let id = self.names.len() as u32;
        self.ids.insert(key.to_owned(), id);
        self.names.push(name.to_owned());
        self.uris.push(uri.to_owned());
        id
    }

    /// Whether name `id` passes the name test `test` (a [`crate::xpath::expr::Test::Name`]'s
    /// string: a local name, or an expanded `{uri}local`).
    pub fn name_passes(&self, id: u32, test: &str) -> bool {
        let id = id as usize;
        id < self.names.len() && NameTest::of(test).matches(&self.names[id], &self.uris[id])
    }

    /// The URIs the names of the collection use with `prefix`, sorted.
    pub fn prefix_uris(&self, prefix: &str) -> Vec<String> {
        self.namespaces().into_iter().filter(|&(p, _)| p == prefix).map(|(_, uri)| uri.to_owned()).collect()
    }

    /// The (prefix, URI) pairs the names of the collection are written with, sorted;
    /// the prefix is empty for names in a default namespace.
    pub fn namespaces(&self) -> Vec<(&str, &str)> {
        let mut pairs: Vec<(&str, &str)> = (1..self.names.len())
            .filter(|&id| !self.uris[id].is_empty())
            .map(|id| (self.names[id].split_once(':').map_or("", |(p, _)| p), self.uris[id].as_str()))
            .collect();
        pairs.sort_unstable();
        pairs.dedup();
        pairs
    }

    /// The key name `id` is stored under (see the module's table).
    fn key_of(&self, id: usize) -> std::borrow::Cow<'_, str> {
        match self.uris[id].as_str() {
            "" => self.names[id].as_str().into(),
            uri => format!("{}\0{uri}", self.names[id]).into(),
        }
    }

    /// The id of the path `parent/step`, adding it when new.
    pub fn path(&mut self, parent: u32, kind: Kind, name: u32) -> u32 {
        if self.child_count[parent as usize] as usize > WIDE {
            if let Some(&id) = self.wide.get(&(parent, kind, name)) {
                return id;
            }
        } else {
            let mut child = self.first_child[parent as usize];
            while child != u32::MAX {
                let c = &self.paths[child as usize];
                if c.kind == kind && c.name == name {
                    return child;
                }
                child = self.next_sibling[child as usize];
            }
        }
        let depth = self.depths[parent as usize] + 1;
        self.push_path(PathInfo { parent, kind, name, count: 0 }, depth)
    }

    /// The path `parent/step` if the summary has it.
    pub fn find_path(&self, parent: u32, kind: Kind, name: u32) -> Option<u32> {
        let mut child = *self.first_child.get(parent as usize)?;
        while child != u32::MAX {
            let c = &self.paths[child as usize];
            if c.kind == kind && c.name == name {
                return Some(child);
            }
            child = self.next_sibling[child as usize];
        }
        None
    }

    /// The child paths of `parent` (most recent first).
    pub fn children(&self, parent: u32) -> impl Iterator<Item = u32> + '_ {
        let first = self.first_child.get(parent as usize).copied().unwrap_or(u32::MAX);
        std::iter::successors(Some(first).filter(|&c| c != u32::MAX), |&c| {
            Some(self.next_sibling[c as usize]).filter(|&n| n != u32::MAX)
        })
    }

    /// The last step of path `id` as XPath writes it (`name`, `@name`, `text()`, …;
    /// `/` for path 0).
    pub fn step_text(&self, id: u32) -> String {
        let Some(path) = self.paths.get(id as usize) else { return format!("<path {id}>") };
        let name = self.names.get(path.name as usize).map_or("", String::as_str);
        match path.kind {
            Kind::Document => "/".to_owned(),
            Kind::Element => name.to_owned(),
            Kind::Attribute => format!("@{name}"),
            Kind::Text => "text()".to_owned(),
            Kind::Comment => "comment()".to_owned(),
            Kind::Pi => format!("processing-instruction({name})"),
        }
    }

    /// Path `id` written out from the document node (`/site/people/person/@id`).
    pub fn path_text(&self, id: u32) -> String {
        let mut steps = Vec::new();
        let mut at = id;
        while at != 0 && (at as usize) < self.paths.len() && steps.len() <= self.paths.len() {
            steps.push(self.step_text(at));
            at = self.paths[at as usize].parent;
        }
        if steps.is_empty() {
            return "/".to_owned();
        }
        steps.iter().rev().fold(String::new(), |text, step| text + "/" + step)
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
        for id in first_name.max(1)..self.names.len() {
            let name = self.key_of(id);
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
        for (block, paths) in self.paths.chunks(PATHS_PER_BLOCK).enumerate() {
            value.clear();
            for path in paths {
                put_varint(&mut value, u64::from(path.parent));
                value.push(path.kind as u8);
                put_varint(&mut value, u64::from(path.name));
                put_varint(&mut value, path.count);
            }
            key.clear();
            key.push(b'p');
            key.extend_from_slice(&((block * PATHS_PER_BLOCK) as u32).to_be_bytes());
            tree.insert(&key, &value)?;
        }
        for &(element, attribute) in &self.id_attributes {
            key.clear();
            key.push(b't');
            key.extend_from_slice(&element.to_be_bytes());
            key.extend_from_slice(&attribute.to_be_bytes());
            tree.insert(&key, &[])?;
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

/// Records that element `pre` declares `prefix` (None: the default namespace) as `uri`.
pub fn store_namespace(tree: &mut BTree<'_, WriteTxn<'_>>, pre: u64, prefix: Option<&str>, uri: &str) -> Result<()> {
    let mut key = vec![b'x'];
    key.extend_from_slice(&pre.to_be_bytes());
    key.extend_from_slice(prefix.unwrap_or("").as_bytes());
    tree.insert(&key, uri.as_bytes())?;
    Ok(())
}

/// A namespace declaration read back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Declaration {
    /// The pre of the element that declares it.
    pub element: u64,
    /// The prefix (empty: the default namespace).
    pub prefix: String,
    /// The namespace URI.
    pub uri: String,
}

impl<T: PageRead> XmlStore<'_, T> {
    /// The namespace declarations of elements with pre in `first..=last`, in pre order.
    pub fn declarations(&self, first: u64, last: u64) -> Result<Vec<Declaration>> {
        let low = [&[b'x'][..], &first.to_be_bytes()].concat();
        let high = match last.checked_add(1) {
            Some(end) => [&[b'x'][..], &end.to_be_bytes()].concat(),
            None => b"y".to_vec(),
        };
        let mut out = Vec::new();
        for entry in self.dict.range(Bound::Included(low.as_slice()), Bound::Excluded(high.as_slice())) {
            let (key, uri) = entry?;
            let pre = key.get(1..9).and_then(|k| <[u8; 8]>::try_from(k).ok()).map(u64::from_be_bytes);
            let pre = pre.ok_or_else(|| corrupted(&self.name, 0, "namespace key too short"))?;
            let prefix = String::from_utf8_lossy(&key[9..]).into_owned();
            out.push(Declaration { element: pre, prefix, uri: String::from_utf8_lossy(&uri).into_owned() });
        }
        Ok(out)
    }

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

    /// The id of name key `name` (a qualified name with no namespace, or the name, a
    /// zero byte and its URI), if the collection has it.
    pub fn name_id(&self, name: &str) -> Result<Option<u32>> {
        let mut key = vec![b'n'];
        key.extend_from_slice(name.as_bytes());
        let Some(value) = self.dict.get_vec(&key)? else { return Ok(None) };
        let bytes: [u8; 4] = value.try_into().map_err(|_| corrupted(&self.name, 0, "name id is not 4 bytes"))?;
        Ok(Some(u32::from_le_bytes(bytes)))
    }
}
