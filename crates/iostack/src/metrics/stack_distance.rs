//! Stack distance: the depth of a referenced key in an LRU stack.
//!
//! Definition (Fox, Lojpur and Wang, "Quantifying temporal and spatial localities in storage
//! workloads", Section 2.2, Figure 2.2): start from an empty stack. A key referenced for the first
//! time is pushed on top; its distance is infinite or a pre-defined Max, or the reference is left
//! out (the paper discusses both variants; [`FirstReference`] chooses). A key referenced again has
//! as its distance its depth in the stack (0 = on top), and is moved to the top. In the paper's
//! example the stream A, B, C, B gives B the distance 1. Mattson et al. (1970) showed that a
//! reference hits in an LRU cache of `c` entries exactly when its stack distance is below `c`,
//! so one histogram of distances gives the miss ratio of every cache size (see [`super::mrc`]).
//!
//! Walking a list to find the depth costs O(distance) per reference, which is millions of steps
//! on real traces. Instead each reference gets a slot on a time axis (slot = position in the
//! stream), and every key holds a mark at the slot of its last use. The depth of a key is then
//! the number of marks after its own slot: every key used since then is above it in the stack,
//! each counted once because only its latest use carries a mark. Marks live in a bitset, and a
//! Fenwick (binary indexed) tree over the bitset's 64-bit words counts the marks before a word,
//! so a reference costs one hash lookup, one prefix count (O(log n)) and two point updates.
//!
//! The time axis would grow with the stream; when it is full it is compacted: live marks are
//! renumbered 0..live in order (which keeps every depth: a key's new slot is the rank of its old
//! one among the marks), and the axis is resized to four times the number of live keys. Memory
//! stays proportional to the number of distinct keys (one hash entry per key holding its slot,
//! plus one bit per slot and a 32-bit count per 64 slots), and a compaction, one pass over the
//! keys, comes only after three times as many references: amortised O(1) per reference.
//!
//! Marks are only ever set in the newest word of the axis (slots are handed out in order), so the
//! tree leaves that word out while it fills and takes its count in one step when the axis moves
//! to the next word: a reference then updates the tree once (clearing its old mark) instead of
//! twice. Counts of marks before a word never involve the newest one, so every depth is the same.

use crate::cache::Key;
use crate::cache::slots::{hash32, Cell, OpenTable};

/// The distance that stands for infinity (`FirstReference::Infinite`): its affinity is 0.
pub const INFINITE_DISTANCE: u64 = u64::MAX;

/// What the distance of a first reference is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "value")]
pub enum FirstReference {
    /// Max is the number of distinct keys of the whole stream (the smallest value that satisfies
    /// the paper's "Max >= maximum number of unique files", Section 2.2), applied when the
    /// report is made.
    #[default]
    Distinct,
    /// A fixed Max.
    Max(u64),
    /// First references at an infinite distance: affinity 0 (a stream of compulsory misses
    /// scores 0.00, as Fox et al.'s back ends of cold workloads do, Figure 5.1). Distances carry
    /// it as [`INFINITE_DISTANCE`], so mean distances are dominated by it.
    Infinite,
    /// First references are left out of distances and affinities (counted apart).
    Exclude,
}

impl std::str::FromStr for FirstReference {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "distinct" => Ok(FirstReference::Distinct),
            "exclude" => Ok(FirstReference::Exclude),
            "infinite" | "inf" => Ok(FirstReference::Infinite),
            _ => s
                .parse::<u64>()
                .map(FirstReference::Max)
                .map_err(|_| format!("`{s}` is not `distinct`, `exclude`, `infinite` or a number (a fixed Max)")),
        }
    }
}

impl FirstReference {
    /// The distance a first reference counts as, given the number of distinct keys of the stream;
    /// `None` when first references are left out.
    pub fn max_value(self, distinct: u64) -> Option<u64> {
        match self {
            FirstReference::Distinct => Some(distinct),
            FirstReference::Max(m) => Some(m),
            FirstReference::Infinite => Some(INFINITE_DISTANCE),
            FirstReference::Exclude => None,
        }
    }
}

/// Fenwick tree of counts over the words of the time-axis bitset.
#[derive(Clone)]
struct Fenwick {
    tree: Vec<u32>,
}

impl Fenwick {
    fn zeroed(n: usize) -> Fenwick {
        Fenwick { tree: vec![0; n + 1] }
    }

    /// Builds the tree from per-word counts in O(n).
    fn from_counts(counts: impl Iterator<Item = u32>, n: usize) -> Fenwick {
        let mut tree = vec![0u32; n + 1];
        for (i, c) in counts.enumerate() {
            tree[i + 1] = c;
        }
        for i in 1..=n {
            let j = i + (i & i.wrapping_neg());
            if j <= n {
                tree[j] += tree[i];
            }
        }
        Fenwick { tree }
    }

    #[inline]
    fn add(&mut self, word: usize, delta: i32) {
        let mut i = word + 1;
        let n = self.tree.len();
        while i < n {
            // SAFETY of the arithmetic: counts never go below zero (a mark is cleared only once).
            self.tree[i] = self.tree[i].wrapping_add(delta as u32);
            i += i & i.wrapping_neg();
        }
    }

    /// Sum of the counts of words `0..word`.
    #[inline]
    fn prefix(&self, word: usize) -> u32 {
        let mut i = word;
        let mut s = 0u32;
        while i > 0 {
            s = s.wrapping_add(self.tree[i]);
            i &= i - 1;
        }
        s
    }
}

/// Per-key state: the key, the slot of its last use in each of the `N` streams, and the
/// caller's payload for each, in one table entry so that a reference costs one lookup.
#[derive(Clone, Copy)]
struct Entry<P, const N: usize> {
    key: Key,
    /// `EMPTY` where the key is not on that stream's stack; all `EMPTY` for a free table cell.
    slot: [u32; N],
    payload: [P; N],
}

const EMPTY: u32 = u32::MAX;

impl<P: Copy + Default, const N: usize> Cell for Entry<P, N> {
    #[inline(always)]
    fn empty() -> Self {
        Entry { key: 0, slot: [EMPTY; N], payload: [P::default(); N] }
    }
    #[inline(always)]
    fn is_empty(&self) -> bool {
        self.slot.iter().all(|&s| s == EMPTY)
    }
    #[inline(always)]
    fn hash(&self) -> u32 {
        hash32(self.key)
    }
}

/// Keys of the stacks, in the open-addressing table the cache policies' index uses
/// ([`crate::cache::slots::OpenTable`]). Keys are never removed while some stream holds them;
/// owning the table (rather than a general hash map) lets callers prefetch the cell of a key
/// they will reference soon, which hides the one cache miss a reference to a cold key costs.
#[derive(Clone)]
struct KeyTable<P, const N: usize> {
    table: OpenTable<Entry<P, N>>,
}

impl<P: Copy + Default, const N: usize> KeyTable<P, N> {
    fn new() -> Self {
        KeyTable { table: OpenTable::with_bits(10) }
    }

    /// Hints the CPU to fetch the cell of `key` (both ends: a cell of two streams may span
    /// two cache lines).
    #[inline]
    fn prefetch(&self, key: Key) {
        let h = hash32(key);
        self.table.prefetch(h);
        if std::mem::size_of::<Entry<P, N>>() > 32 {
            self.table.prefetch_end(h);
        }
    }

    /// The index of `key`'s cell, inserting it with `slot` on stream `s` when absent from the
    /// table (then `true`).
    #[inline(always)]
    fn find_or_insert(&mut self, key: Key, s: usize, slot: u32) -> (usize, bool) {
        let h = hash32(key);
        if let Some(i) = self.table.find(h, |c| c.key == key) {
            return (i, false);
        }
        let i = self.table.vacant(h);
        let mut e = Entry::empty();
        e.key = key;
        e.slot[s] = slot;
        self.table.fill(i, e);
        (i, true)
    }

    #[inline]
    fn cell_mut(&mut self, i: usize) -> &mut Entry<P, N> {
        self.table.cell_mut(i)
    }

    fn entries_mut(&mut self) -> impl Iterator<Item = &mut Entry<P, N>> {
        self.table.cells_mut()
    }
}

/// One stream's LRU stack as a time axis: the marks of its keys' last uses and the tree that
/// counts them.
#[derive(Clone)]
struct Axis {
    /// One bit per slot: set when the slot is some key's last use.
    marks: Vec<u64>,
    fenwick: Fenwick,
    /// Next free slot.
    now: u32,
    /// Slots on the axis (a multiple of 64).
    capacity: u32,
    /// The newest word of the axis, the one `now` falls in: its marks are not in the tree yet
    /// (see the module comment).
    open_word: usize,
    /// Keys on the stack.
    live: u32,
    compactions: u64,
}

impl Axis {
    fn with_capacity(slots: usize) -> Axis {
        let capacity = (slots.clamp(MIN_CAPACITY as usize, 1 << 31) as u32).next_multiple_of(64);
        let words = (capacity / 64) as usize;
        Axis { marks: vec![0; words], fenwick: Fenwick::zeroed(words), now: 0, capacity, open_word: 0, live: 0, compactions: 0 }
    }

    /// Takes the next slot, moving the open word on if it is full.
    #[inline(always)]
    fn next_slot(&mut self) -> u32 {
        let now = self.now;
        self.now += 1;
        let w = (now / 64) as usize;
        if w != self.open_word {
            // The axis moves on to word `w`: the open word's marks go into the tree.
            let open = self.open_word;
            self.fenwick.add(open, self.marks[open].count_ones() as i32);
            self.open_word = w;
        }
        now
    }

    /// A key first referenced at slot `now`.
    #[inline(always)]
    fn insert(&mut self, now: u32) {
        self.live += 1;
        self.marks[(now / 64) as usize] |= 1u64 << (now % 64);
    }

    /// A key last used at slot `old` is referenced again at slot `now`: returns its depth.
    #[inline(always)]
    fn touch(&mut self, old: u32, now: u32) -> u64 {
        let ow = (old / 64) as usize;
        let bit = old % 64;
        // Marks at or before `old`: whole words before its word, then the bits of its word.
        let upto = self.fenwick.prefix(ow) + (self.marks[ow] & ((2u64 << bit).wrapping_sub(1))).count_ones();
        // `live` marks exist; those after `old` belong to the keys above it in the stack.
        let depth = self.live - upto;
        self.marks[ow] &= !(1u64 << bit);
        self.marks[(now / 64) as usize] |= 1u64 << (now % 64);
        if ow != self.open_word {
            // `ow` is before the open word, so its marks are in the tree.
            self.fenwick.add(ow, -1);
        }
        depth as u64
    }

    /// Takes the mark at `slot` off (its key leaves the stack).
    fn remove(&mut self, slot: u32) {
        let w = (slot / 64) as usize;
        self.marks[w] &= !(1u64 << (slot % 64));
        if w != self.open_word {
            self.fenwick.add(w, -1);
        }
        self.live -= 1;
    }

    /// Renumbers the live marks 0..live in stream order and resizes the axis; `slots` are the
    /// slots of every key on the stack. A key's new slot is the rank of its old one among the
    /// marks, so one pass over the keys renumbers them all.
    #[cold]
    fn compact<'a>(&mut self, slots: impl Iterator<Item = &'a mut u32>) {
        self.compactions += 1;
        let live = self.live as usize;
        let mut before: Vec<u32> = Vec::with_capacity(self.marks.len());
        let mut s = 0u32;
        for &word in &self.marks {
            before.push(s);
            s += word.count_ones();
        }
        debug_assert_eq!(s as usize, live);
        for slot in slots {
            let w = (*slot / 64) as usize;
            *slot = before[w] + (self.marks[w] & ((1u64 << (*slot % 64)) - 1)).count_ones();
        }
        let new_capacity = ((live * GROWTH).clamp(MIN_CAPACITY as usize, 1 << 31) as u32).next_multiple_of(64);
        let words = (new_capacity / 64) as usize;
        let mut marks = vec![0u64; words];
        for m in marks.iter_mut().take(live / 64) {
            *m = u64::MAX;
        }
        if live % 64 != 0 {
            marks[live / 64] = (1u64 << (live % 64)) - 1;
        }
        // The word the next slot falls in stays open (out of the tree).
        let open = live / 64;
        self.fenwick = Fenwick::from_counts(marks.iter().enumerate().map(|(i, w)| if i == open { 0 } else { w.count_ones() }), words);
        self.marks = marks;
        self.open_word = open;
        self.now = live as u32;
        self.capacity = new_capacity;
    }

    fn memory_bytes(&self) -> usize {
        self.marks.capacity() * 8 + self.fenwick.tree.capacity() * 4
    }
}

/// Computes LRU stack distances in O(log n) per reference, of `N` streams at once.
///
/// `P` is a per-key payload the caller may keep next to the stack entry (for instance the
/// position of the last reference, to get reuse distances), so that one hash lookup serves both.
///
/// With `N` > 1 each stream has a stack (a time axis) of its own and a payload of its own in the
/// key's entry, and the streams share the key table: streams that reference the same keys at
/// about the same moments (the same data seen at two boundaries of the I/O stack) find a key's
/// entry in the cache for all but the first of them, and grow one table instead of `N`.
#[derive(Clone)]
pub struct StackDistance<P: Copy + Default = (), const N: usize = 1> {
    map: KeyTable<P, N>,
    axes: [Axis; N],
}

const MIN_CAPACITY: u32 = 1 << 12;
/// After a compaction the axis has room for this many times the live keys, so the next
/// compaction comes after (GROWTH - 1) x live references: amortised O(1) work per reference.
const GROWTH: usize = 4;

impl<P: Copy + Default> Default for StackDistance<P> {
    fn default() -> Self {
        Self::new()
    }
}

impl<P: Copy + Default> StackDistance<P> {
    pub fn new() -> Self {
        Self::with_capacity(MIN_CAPACITY as usize)
    }

    /// An empty stack whose time axis starts with room for `slots` references.
    pub fn with_capacity(slots: usize) -> Self {
        StackDistance { map: KeyTable::new(), axes: [Axis::with_capacity(slots)] }
    }

    /// Number of distinct keys referenced so far.
    pub fn distinct(&self) -> u64 {
        self.distinct_in(0)
    }

    /// Times the time axis was compacted (for tests and diagnostics).
    pub fn compactions(&self) -> u64 {
        self.axes[0].compactions
    }

    /// References `key`: returns its stack distance (`None` on a first reference) and its payload
    /// (default-initialised on a first reference), and moves the key to the top of the stack.
    #[inline]
    pub fn access(&mut self, key: Key) -> (Option<u64>, &mut P) {
        self.access_in(0, key)
    }

    /// Takes `key` off the stack (a sampler that drops it from its sample,
    /// [`super::shards`]): the keys below it move up one place. Returns whether it was there.
    pub fn remove(&mut self, key: Key) -> bool {
        let h = hash32(key);
        let Some(i) = self.map.table.find(h, |c| c.key == key) else { return false };
        let slot = self.map.table.remove_at(i).slot[0];
        self.axes[0].remove(slot);
        true
    }
}

impl<P: Copy + Default, const N: usize> StackDistance<P, N> {
    /// `N` empty stacks sharing one key table.
    pub fn streams() -> Self {
        StackDistance { map: KeyTable::new(), axes: std::array::from_fn(|_| Axis::with_capacity(MIN_CAPACITY as usize)) }
    }

    /// Number of distinct keys stream `s` referenced so far.
    pub fn distinct_in(&self, s: usize) -> u64 {
        self.axes[s].live as u64
    }

    /// [`StackDistance::access`] on stream `s`.
    #[inline(always)]
    pub fn access_in(&mut self, s: usize, key: Key) -> (Option<u64>, &mut P) {
        if self.axes[s].now == self.axes[s].capacity {
            self.compact(s);
        }
        let axis = &mut self.axes[s];
        let now = axis.next_slot();
        let (i, inserted) = self.map.find_or_insert(key, s, now);
        let e = self.map.cell_mut(i);
        if inserted {
            axis.insert(now);
            return (None, &mut e.payload[s]);
        }
        let old = std::mem::replace(&mut e.slot[s], now);
        if old == EMPTY {
            axis.insert(now);
            return (None, &mut e.payload[s]);
        }
        (Some(axis.touch(old, now)), &mut e.payload[s])
    }

    /// Makes stream `to` a copy of stream `from` (stack and payloads); `to` must never have
    /// been referenced.
    pub fn copy_stream(&mut self, from: usize, to: usize) {
        debug_assert_eq!(self.axes[to].live, 0);
        for e in self.map.entries_mut() {
            e.slot[to] = e.slot[from];
            e.payload[to] = e.payload[from];
        }
        self.axes[to] = self.axes[from].clone();
    }

    /// Makes stream `to` (never referenced) a copy of stream `s` of `other`, whose keys join
    /// this table.
    pub fn adopt<const M: usize>(&mut self, to: usize, other: &StackDistance<P, M>, s: usize) {
        debug_assert_eq!(self.axes[to].live, 0);
        for e in other.map.table.cells() {
            if e.slot[s] == EMPTY {
                continue;
            }
            let (i, _) = self.map.find_or_insert(e.key, to, e.slot[s]);
            let cell = self.map.cell_mut(i);
            cell.slot[to] = e.slot[s];
            cell.payload[to] = e.payload[s];
        }
        self.axes[to] = other.axes[s].clone();
    }

    /// The same stacks with `M` >= `N` streams per entry; streams `N..M` are empty.
    pub fn widen<const M: usize>(&self) -> StackDistance<P, M> {
        assert!(M >= N, "streams can only be added");
        let mut map = KeyTable::<P, M>::new();
        for e in self.map.table.cells() {
            let h = hash32(e.key);
            let i = map.table.vacant(h);
            let mut w = Entry::<P, M>::empty();
            w.key = e.key;
            w.slot[..N].copy_from_slice(&e.slot);
            w.payload[..N].copy_from_slice(&e.payload);
            map.table.fill(i, w);
        }
        StackDistance { map, axes: std::array::from_fn(|s| if s < N { self.axes[s].clone() } else { Axis::with_capacity(MIN_CAPACITY as usize) }) }
    }

    /// Hints the CPU to bring in the table cell of `key`, which the caller will reference soon
    /// (a few references ahead), so that the cache miss overlaps other work.
    #[inline]
    pub fn prefetch(&self, key: Key) {
        self.map.prefetch(key);
    }

    #[cold]
    fn compact(&mut self, s: usize) {
        let slots = self.map.table.cells_mut().map(|e| &mut e.slot[s]).filter(|slot| **slot != EMPTY);
        self.axes[s].compact(slots);
    }

    /// Bytes of memory held (map, axes, trees).
    pub fn memory_bytes(&self) -> usize {
        self.map.table.allocation_size() + self.axes.iter().map(Axis::memory_bytes).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Distances by walking an explicit LRU stack (the definition).
    fn naive(keys: &[Key]) -> Vec<Option<u64>> {
        let mut stack: Vec<Key> = Vec::new();
        keys.iter()
            .map(|&k| {
                let pos = stack.iter().rev().position(|&x| x == k);
                if let Some(p) = pos {
                    let idx = stack.len() - 1 - p;
                    stack.remove(idx);
                }
                stack.push(k);
                pos.map(|p| p as u64)
            })
            .collect()
    }

    #[test]
    fn paper_figure_2_2() {
        // Files A, B, C, then B: B is at depth 1 (Section 2.2).
        let mut sd: StackDistance = StackDistance::new();
        assert_eq!(sd.access(b'A' as u64).0, None);
        assert_eq!(sd.access(b'B' as u64).0, None);
        assert_eq!(sd.access(b'C' as u64).0, None);
        assert_eq!(sd.access(b'B' as u64).0, Some(1));
        // Stack is now B, C, A.
        assert_eq!(sd.access(b'A' as u64).0, Some(2));
        assert_eq!(sd.access(b'A' as u64).0, Some(0));
    }

    #[test]
    fn matches_the_definition_across_compactions() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
        // Few distinct keys and a long stream: the axis compacts many times.
        let keys: Vec<Key> = (0..60_000).map(|i| if i % 7 == 0 { rng.gen_range(0..5000) } else { rng.gen_range(0..300) }).collect();
        let mut sd: StackDistance = StackDistance::new();
        let got: Vec<Option<u64>> = keys.iter().map(|&k| sd.access(k).0).collect();
        assert!(sd.compactions() > 3, "the test must exercise compaction");
        assert_eq!(got, naive(&keys));
        assert_eq!(sd.distinct(), keys.iter().collect::<std::collections::HashSet<_>>().len() as u64);
    }

    proptest::proptest! {
        #[test]
        fn any_stream_matches_the_definition(keys in proptest::collection::vec(0u64..40, 0..400)) {
            let mut sd: StackDistance = StackDistance::new();
            let got: Vec<Option<u64>> = keys.iter().map(|&k| sd.access(k).0).collect();
            proptest::prop_assert_eq!(got, naive(&keys));
        }
    }

    proptest::proptest! {
        #[test]
        fn removal_matches_the_definition(ops in proptest::collection::vec((0u64..30, proptest::bool::weighted(0.2)), 0..5000)) {
            // The definition with removal: the key leaves the explicit stack.
            let mut stack: Vec<Key> = Vec::new();
            let mut sd: StackDistance = StackDistance::new();
            for (k, remove) in ops {
                let pos = stack.iter().rev().position(|&x| x == k);
                if remove {
                    proptest::prop_assert_eq!(sd.remove(k), pos.is_some());
                    if let Some(p) = pos {
                        let idx = stack.len() - 1 - p;
                        stack.remove(idx);
                    }
                } else {
                    proptest::prop_assert_eq!(sd.access(k).0, pos.map(|p| p as u64));
                    if let Some(p) = pos {
                        let idx = stack.len() - 1 - p;
                        stack.remove(idx);
                    }
                    stack.push(k);
                }
                proptest::prop_assert_eq!(sd.distinct(), stack.len() as u64);
            }
        }
    }

    #[test]
    fn payload_follows_the_key() {
        let mut sd: StackDistance<u64> = StackDistance::new();
        for i in 0..10_000u64 {
            let (_, p) = sd.access(i % 10);
            if i >= 10 {
                assert_eq!(*p, i - 10);
            }
            *p = i;
        }
    }

    #[test]
    fn memory_stays_proportional_to_distinct_keys() {
        let mut sd: StackDistance = StackDistance::new();
        for i in 0..1_000_000u64 {
            sd.access(i % 100);
        }
        assert!(sd.memory_bytes() < 1 << 20, "{} bytes for 100 keys", sd.memory_bytes());
    }
}
