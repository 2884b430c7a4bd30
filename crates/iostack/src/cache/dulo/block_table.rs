//! DULO's block table (Jiang et al., ACM TOS 2007, Section 3.2 and Figure 2).
//!
//! A radix tree over logical block numbers, one per device, shaped like a multi-level page table:
//! every node is an array of 512 entries (one 4 KiB page of 8-byte entries, as in the paper's
//! figure). A leaf entry (a BTE) holds the two most recent fetch timestamps of its block; a
//! directory entry holds the index of its child node and the newest timestamp recorded anywhere
//! below it, so that a whole subtree whose newest timestamp is older than a threshold can be
//! freed without visiting its leaves (the paper's reclamation under memory pressure).
//!
//! Geometry: as in the paper's Figure 2, two directory levels above the leaves, 9 bits each, so
//! one tree covers 2^27 blocks (512 GiB of 4 KiB blocks). Block numbers have up to 48 bits
//! ([`crate::cache::BLOCK_BITS`]); the roots of the trees of a device are found by hashing the
//! device and the bits above 27 (a page table would add directory levels instead; a hash lookup
//! costs one probe where three more levels would cost three dependent loads). Nodes are
//! allocated on first use and recycled through free lists, so steady-state recording never
//! allocates.
//!
//! Timestamps are values of the disk access clock truncated to 32 bits; the clock is compared by
//! wrapping difference, which is exact as long as the compared timestamps are less than 2^31
//! fetches apart. Zero means "no timestamp"; the clock skips zero when it wraps.

use rustc_hash::FxHashMap;

/// Entries per node: 2^9, one 4 KiB page of 8-byte entries.
const FANOUT_BITS: u32 = 9;
const FANOUT: usize = 1 << FANOUT_BITS;
/// Directory levels above the leaves of one tree (27 bits = 3 x 9 per tree).
const DIR_LEVELS: u32 = 2;
/// Block-number bits one tree covers.
const TREE_BITS: u32 = FANOUT_BITS * (DIR_LEVELS + 1);

#[inline]
fn root_key(device: u32, lbn: u64) -> u64 {
    ((device as u64) << 32) | (lbn >> TREE_BITS)
}
const NONE: u32 = u32::MAX;

/// A block's two most recent fetch timestamps (0 = none).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stamps {
    /// The most recent fetch.
    pub recent: u32,
    /// The fetch before it.
    pub previous: u32,
}

impl Stamps {
    /// Number of timestamps recorded (0, 1 or 2).
    pub fn count(&self) -> u8 {
        (self.recent != 0) as u8 + (self.previous != 0) as u8
    }
}

#[derive(Clone)]
struct DirNode {
    child: [u32; FANOUT],
    newest: [u32; FANOUT],
}

#[derive(Clone)]
struct LeafNode {
    bte: [Stamps; FANOUT],
}

/// The block tables of all devices.
pub struct BlockTable {
    roots: FxHashMap<u64, u32>,
    dirs: Vec<Box<DirNode>>,
    free_dirs: Vec<u32>,
    leaves: Vec<Box<LeafNode>>,
    free_leaves: Vec<u32>,
    /// Paths to recently recorded leaves, direct-mapped on the leaf's span. Fetches are mostly
    /// clustered (a prefetch set, a sequential scan, the extents of a fragmented file visited in
    /// turn), so a record usually lands in a leaf recorded shortly before: the hash probe for the
    /// root and the walk down the directories are skipped. The directory entries on a cached path
    /// are brought up to date (to the newest of their own stamp and the path's) only when the
    /// path leaves the cache or before a reclamation, which gives them the same newest stamps as
    /// writing them on every record.
    paths: [Option<LastPath>; PATH_CACHE],
}

/// Entries of the path cache (a power of two).
const PATH_CACHE: usize = 8;

#[inline]
fn path_slot(device: u32, span: u64) -> usize {
    ((span ^ ((device as u64) << 7)) as usize) & (PATH_CACHE - 1)
}

#[derive(Clone, Copy)]
struct LastPath {
    device: u32,
    /// LBN >> FANOUT_BITS: the leaf's span.
    span: u64,
    leaf: u32,
    /// (directory node, entry) from the root down.
    path: [(u32, u16); DIR_LEVELS as usize],
    /// Newest stamp recorded through this path and not yet written to its directories.
    newest: u32,
}

/// `a` is older than `b` on the wrapping clock.
#[inline]
fn older(a: u32, b: u32) -> bool {
    (b.wrapping_sub(a) as i32) > 0
}

#[inline]
fn index_at(lbn: u64, level: u32) -> usize {
    // level 0 is the root; level DIR_LEVELS is the leaf.
    let shift = FANOUT_BITS * (DIR_LEVELS - level);
    ((lbn >> shift) as usize) & (FANOUT - 1)
}

impl Default for BlockTable {
    fn default() -> Self {
        BlockTable {
            roots: FxHashMap::default(),
            dirs: Vec::new(),
            free_dirs: Vec::new(),
            leaves: Vec::new(),
            free_leaves: Vec::new(),
            paths: [None; PATH_CACHE],
        }
    }
}

impl BlockTable {
    pub fn new() -> Self {
        Self::default()
    }

    fn alloc_dir(&mut self) -> u32 {
        if let Some(i) = self.free_dirs.pop() {
            let d = &mut self.dirs[i as usize];
            d.child.fill(NONE);
            d.newest.fill(0);
            i
        } else {
            self.dirs.push(Box::new(DirNode { child: [NONE; FANOUT], newest: [0; FANOUT] }));
            (self.dirs.len() - 1) as u32
        }
    }

    fn alloc_leaf(&mut self) -> u32 {
        if let Some(i) = self.free_leaves.pop() {
            self.leaves[i as usize].bte.fill(Stamps::default());
            i
        } else {
            self.leaves.push(Box::new(LeafNode { bte: [Stamps::default(); FANOUT] }));
            (self.leaves.len() - 1) as u32
        }
    }

    /// Records a fetch of block `lbn` of `device` at clock `now` (non-zero): the BTE keeps `now`
    /// and the previous most recent timestamp; every directory entry passed records `now`.
    /// Returns the block's stamps after the update.
    pub fn record(&mut self, device: u32, lbn: u64, now: u32) -> Stamps {
        debug_assert!(now != 0);
        let span = lbn >> FANOUT_BITS;
        let slot = path_slot(device, span);
        if let Some(last) = self.paths[slot].as_mut() {
            if last.device == device && last.span == span {
                last.newest = now;
                let leaf = last.leaf;
                let bte = &mut self.leaves[leaf as usize].bte[index_at(lbn, DIR_LEVELS)];
                *bte = Stamps { recent: now, previous: bte.recent };
                return *bte;
            }
        }
        self.flush_path(slot);
        let mut path = [(0u32, 0u16); DIR_LEVELS as usize];
        let root = match self.roots.get(&root_key(device, lbn)) {
            Some(&r) => r,
            None => {
                let r = self.alloc_dir();
                self.roots.insert(root_key(device, lbn), r);
                r
            }
        };
        let mut node = root;
        for level in 0..DIR_LEVELS {
            let i = index_at(lbn, level);
            self.dirs[node as usize].newest[i] = now;
            path[level as usize] = (node, i as u16);
            let child = self.dirs[node as usize].child[i];
            let child = if child == NONE {
                let c = if level + 1 == DIR_LEVELS { self.alloc_leaf() } else { self.alloc_dir() };
                self.dirs[node as usize].child[i] = c;
                c
            } else {
                child
            };
            node = child;
        }
        self.paths[slot] = Some(LastPath { device, span, leaf: node, path, newest: now });
        let bte = &mut self.leaves[node as usize].bte[index_at(lbn, DIR_LEVELS)];
        *bte = Stamps { recent: now, previous: bte.recent };
        *bte
    }

    /// Writes the newest stamp of a cached path into its directory entries (keeping a newer
    /// stamp another path wrote there) and drops the path from the cache.
    fn flush_path(&mut self, slot: usize) {
        if let Some(last) = self.paths[slot].take() {
            for (node, i) in last.path {
                let e = &mut self.dirs[node as usize].newest[i as usize];
                if *e == 0 || older(*e, last.newest) {
                    *e = last.newest;
                }
            }
        }
    }

    /// The stamps of a block (zero if never recorded or reclaimed).
    pub fn lookup(&self, device: u32, lbn: u64) -> Stamps {
        self.leaf_slot(device, lbn).map(|(leaf, i)| self.leaves[leaf as usize].bte[i]).unwrap_or_default()
    }

    fn leaf_slot(&self, device: u32, lbn: u64) -> Option<(u32, usize)> {
        let mut node = *self.roots.get(&root_key(device, lbn))?;
        for level in 0..DIR_LEVELS {
            let c = self.dirs[node as usize].child[index_at(lbn, level)];
            if c == NONE {
                return None;
            }
            node = c;
        }
        Some((node, index_at(lbn, DIR_LEVELS)))
    }

    /// Forgets a block's history: its disk location was reassigned (the paper resets the BTE
    /// "to prevent new block allocated to the same disk location from inheriting the stale
    /// information").
    pub fn reset(&mut self, device: u32, lbn: u64) {
        if let Some((leaf, i)) = self.leaf_slot(device, lbn) {
            self.leaves[leaf as usize].bte[i] = Stamps::default();
        }
    }

    /// Frees every subtree whose newest timestamp is older than `threshold` (Section 3.2:
    /// "the system will remove a directory once it finds that its timestamp is smaller than the
    /// threshold, and all the subdirectories and BTEs under it will be removed accordingly").
    /// Returns the number of nodes freed.
    pub fn reclaim(&mut self, threshold: u32) -> usize {
        for slot in 0..PATH_CACHE {
            self.flush_path(slot);
        }
        let roots: Vec<(u64, u32)> = self.roots.iter().map(|(&d, &r)| (d, r)).collect();
        let mut freed = 0;
        for (device, root) in roots {
            freed += self.reclaim_dir(root, 0, threshold);
            if self.dirs[root as usize].child.iter().all(|&c| c == NONE) {
                self.roots.remove(&device);
                self.free_dirs.push(root);
                freed += 1;
            }
        }
        freed
    }

    fn reclaim_dir(&mut self, node: u32, level: u32, threshold: u32) -> usize {
        let mut freed = 0;
        for i in 0..FANOUT {
            let c = self.dirs[node as usize].child[i];
            if c == NONE {
                continue;
            }
            if older(self.dirs[node as usize].newest[i], threshold) {
                freed += self.free_subtree(c, level + 1);
                self.dirs[node as usize].child[i] = NONE;
                self.dirs[node as usize].newest[i] = 0;
            } else if level + 1 < DIR_LEVELS {
                freed += self.reclaim_dir(c, level + 1, threshold);
            }
        }
        freed
    }

    fn free_subtree(&mut self, node: u32, level: u32) -> usize {
        if level == DIR_LEVELS {
            self.free_leaves.push(node);
            return 1;
        }
        let mut freed = 1;
        for i in 0..FANOUT {
            let c = self.dirs[node as usize].child[i];
            if c != NONE {
                freed += self.free_subtree(c, level + 1);
            }
        }
        self.free_dirs.push(node);
        freed
    }

    /// Nodes in use (directories, leaves).
    pub fn nodes(&self) -> (usize, usize) {
        (self.dirs.len() - self.free_dirs.len(), self.leaves.len() - self.free_leaves.len())
    }

    /// Bytes held by the nodes in use (each node is one 4 KiB page).
    pub fn bytes_in_use(&self) -> usize {
        let (d, l) = self.nodes();
        d * std::mem::size_of::<DirNode>() + l * std::mem::size_of::<LeafNode>()
    }

    /// Bytes allocated, including recycled nodes kept for reuse.
    pub fn allocated_bytes(&self) -> usize {
        self.dirs.len() * std::mem::size_of::<DirNode>()
            + self.leaves.len() * std::mem::size_of::<LeafNode>()
            + (self.dirs.capacity() + self.leaves.capacity()) * std::mem::size_of::<usize>()
            + (self.free_dirs.capacity() + self.free_leaves.capacity()) * 4
            + self.roots.capacity() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_two_most_recent_stamps() {
        let mut t = BlockTable::new();
        assert_eq!(t.lookup(0, 2_631_710), Stamps::default());
        t.record(0, 2_631_710, 5);
        t.record(0, 2_631_710, 9);
        let s = t.record(0, 2_631_710, 12);
        assert_eq!(s, Stamps { recent: 12, previous: 9 });
        assert_eq!(t.lookup(0, 2_631_710).count(), 2);
        assert_eq!(t.lookup(1, 2_631_710), Stamps::default(), "tables are per device");
        t.reset(0, 2_631_710);
        assert_eq!(t.lookup(0, 2_631_710), Stamps::default());
    }

    #[test]
    fn directories_carry_newest_stamp_and_reclaim_old_subtrees() {
        let mut t = BlockTable::new();
        // Two blocks in different leaves far apart, one old and one recent.
        t.record(0, 10, 1);
        t.record(0, 1 << 30, 100);
        let (d, l) = t.nodes();
        assert_eq!(l, 2);
        assert!(d >= 4, "{d}");
        let freed = t.reclaim(50);
        assert!(freed >= 1);
        assert_eq!(t.lookup(0, 10), Stamps::default(), "old subtree freed");
        assert_eq!(t.lookup(0, 1 << 30).recent, 100, "recent subtree kept");
        assert_eq!(t.nodes().1, 1);
        // Everything older than 200: the device's whole table goes.
        t.reclaim(200);
        assert_eq!(t.nodes(), (0, 0));
        assert_eq!(t.bytes_in_use(), 0);
        // Freed nodes are reused.
        let before = t.allocated_bytes();
        t.record(0, 77, 300);
        assert_eq!(t.allocated_bytes(), before);
    }

    #[test]
    fn wrapping_clock_comparison() {
        assert!(older(u32::MAX - 5, 3));
        assert!(!older(3, u32::MAX - 5));
        assert!(older(1, 2));
    }
}
