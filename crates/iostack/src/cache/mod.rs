//! Page-cache replacement policies.
//!
//! Every policy implements [`Policy`], the same small set of operations libCacheSim gives its
//! algorithms: `find` (look up, update on hit), `insert`, `evict`, `remove`, and `get`, which
//! combines them into one cache reference. Adding a policy is copying the shape of `lru.rs`:
//! a struct, a constructor taking the capacity and [`Params`], the trait, and one line in
//! [`POLICIES`].
//!
//! Sizes and capacity are in the caller's unit: objects or blocks (size 1 each) in unit-size and
//! block mode, bytes in sized object mode. The policy never interprets keys except as opaque
//! identities, unless it is a spatial policy (DULO, SplitLRU), which reads the block number from
//! the key (see [`block_key`]).

use crate::error::ConfigError;
use crate::trace::Op;

mod huge_pages;
pub mod list;
mod params;
pub mod slots;
pub mod resident;

pub mod arc;
pub mod belady;
pub mod clock;
pub mod fifo;
pub mod lfu;
pub mod linux;
pub mod lirs;
pub mod lru;
pub mod lrusp;
pub mod dulo;
pub mod streamlru;
pub mod splitlru;
pub mod s3fifo;
pub mod slru;
pub mod twoq;

pub use params::{Params, PolicySpec};
pub(crate) use params::one_of;

/// Identity of a cached object or block.
pub type Key = u64;

/// The hash map policies use to find entries by key (FxHash: keys are already well spread).
pub type KeyMap<V> = hashbrown::HashMap<Key, V, rustc_hash::FxBuildHasher>;

/// Bits of a block key that hold the block number; the device id sits above them.
pub const BLOCK_BITS: u32 = 48;

/// Key of block `block` of `device`: device in the top 16 bits, block number below, so that the
/// keys of one device sort in disk order.
#[inline]
pub fn block_key(device: u32, block: u64) -> Key {
    ((device as u64) << BLOCK_BITS) | (block & ((1u64 << BLOCK_BITS) - 1))
}

/// Block number and device of a block key.
#[inline]
pub fn split_block_key(key: Key) -> (u32, u64) {
    ((key >> BLOCK_BITS) as u32, key & ((1u64 << BLOCK_BITS) - 1))
}

/// Why a block is being inserted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Origin {
    /// A demand reference missed.
    #[default]
    Demand,
    /// A prefetcher brought it in: `set` identifies the prefetch set (one prefetch request),
    /// `index` the block's position in it (0-based) and `len` the set's length.
    Prefetch { set: u32, index: u32, len: u32 },
}

/// One reference to the cache, with what a policy may want to know about it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Access {
    pub key: Key,
    /// Size in the cache's unit (1 in unit-size and block mode, bytes in sized object mode).
    pub size: u64,
    pub op: Option<Op>,
    pub pid: u32,
    /// The clock (ns). Policies must not assume it is virtual: it may be wall-clock time.
    pub time_ns: u64,
    /// Position of this reference in the reference stream (0-based).
    pub vtime: u64,
    /// Position of the next reference to `key`, or `u64::MAX` if there is none. Filled in only
    /// for policies whose [`Policy::needs_future`] is true.
    pub next_access: u64,
    pub origin: Origin,
}

impl Access {
    /// A demand reference of size 1 to `key` at position `vtime`.
    pub fn unit(key: Key, vtime: u64) -> Access {
        Access { key, size: 1, vtime, next_access: u64::MAX, ..Default::default() }
    }
}

/// The file a block belongs to, and the block's index in that file (in blocks of the cache's
/// page size in block mode; in object mode, the object's index counted in objects of its own
/// size).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize)]
pub struct FileBlock {
    pub file: u64,
    pub block: u64,
}

/// Replacement policy of one priority level of an application-managed cache (ACFS §4.1: the
/// application interface offers LRU and MRU only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LevelPolicy {
    Lru,
    Mru,
}

impl LevelPolicy {
    pub fn parse(s: &str) -> Option<LevelPolicy> {
        match s.to_ascii_lowercase().as_str() {
            "lru" => Some(LevelPolicy::Lru),
            "mru" => Some(LevelPolicy::Mru),
            _ => None,
        }
    }
}

/// An application's instruction about its own cached blocks (ACFS's five caching calls, §4.1,
/// l.502-565), delivered through [`Policy::control`]. Priorities are signed: lower is replaced
/// first, the default is 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "call", rename_all = "snake_case")]
pub enum CacheControl {
    /// `set_priority(file, prio)`: the long-term priority of `file`'s blocks (cached now or later).
    SetPriority { pid: u32, file: u64, prio: i32 },
    /// `set_policy(prio, policy)`: the replacement policy of priority level `prio`. The first
    /// call for a process makes it a managing process; the others are oblivious.
    SetPolicy { pid: u32, prio: i32, policy: LevelPolicy },
    /// `set_temppri(file, first, last, prio)`: a temporary priority for the blocks of `file` in
    /// `first..=last` cached now, lasting until each is next referenced or replaced.
    SetTempPri { pid: u32, file: u64, first: u64, last: u64, prio: i32 },
}

impl CacheControl {
    pub fn pid(&self) -> u32 {
        match *self {
            CacheControl::SetPriority { pid, .. } | CacheControl::SetPolicy { pid, .. } | CacheControl::SetTempPri { pid, .. } => pid,
        }
    }
}

/// An entry a policy gave up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Evicted {
    pub key: Key,
    pub size: u64,
}

/// A cache replacement policy.
///
/// The caller guarantees:
/// - `insert` is called only for a key that is not cached (`contains` is false), with
///   `occupied() + size <= capacity()`; the caller evicts first to make room.
/// - `evict` is called only when the policy holds at least one entry.
/// - `remove` may be called for any key, cached or not.
/// - references come in stream order with non-decreasing `vtime`.
///
/// An implementation MUST:
/// - never hold more than `capacity()` (the sum of the sizes of its entries, `occupied()`);
/// - keep `find` free of side effects on other entries' residency: it may update metadata (move
///   an entry, set a bit, record a ghost hit to use at the next `insert`), but must not evict,
///   except where the policy's definition makes a hit give up an entry (SLRU, whose demotions
///   cascade out of the probationary segment when it is over its share); such a policy says so
///   in its module documentation and keeps `occupied()` exact;
/// - return from `evict` an entry it held, and forget it;
/// - hand over through [`Policy::drain_side_evictions`] every entry it stops holding other than
///   the one a call to `evict` returns and the one `remove` forgets: side evictions, such as an
///   SLRU hit whose demotions cascade out of the cache, a 2Q `insert` that makes room in its
///   main LRU, or a LIRS `evict` that drops more than one block. Only resident entries count:
///   ghost (history-only) entries are not reported when they are forgotten. An entry dropped
///   and re-admitted within one call was never out of the cache and is not reported;
/// - make `get` equivalent to `find`, then on a miss (when the object fits at all) `evict` until
///   it fits, then `insert`, when it overrides `get` for speed;
/// - be deterministic: the same calls give the same answers (seeded randomness only).
pub trait Policy: std::any::Any + Send {
    /// Short name, as accepted by [`build`].
    fn name(&self) -> &str;
    /// Capacity in the cache's unit.
    fn capacity(&self) -> u64;
    /// Sum of the sizes of cached entries.
    fn occupied(&self) -> u64;
    /// Number of cached entries.
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Whether `key` is cached. No metadata changes.
    fn contains(&self, key: Key) -> bool;
    /// Looks `a.key` up; on a hit updates the policy's metadata and returns true.
    fn find(&mut self, a: &Access) -> bool;
    /// Caches `a.key` (see the caller's guarantees above).
    fn insert(&mut self, a: &Access);
    /// Chooses a victim, forgets it and returns it. `a` is the reference that needs the room.
    fn evict(&mut self, a: &Access) -> Option<Evicted>;
    /// Forgets `key` if cached; returns whether it was.
    fn remove(&mut self, key: Key) -> bool;

    /// Appends to `out` the side evictions since the last drain: the entries the policy dropped
    /// during `find`, `insert` and `evict` calls other than those `evict` returned, oldest first.
    ///
    /// A caller that tracks which entries are resident (dirty write-back on eviction, blocks in
    /// flight, used/wasted prefetch accounting) drives the policy with `find`, `evict` and
    /// `insert`, and MUST call this after each of them (it is cheap when there is nothing to
    /// hand over): the resident set is then exactly what was inserted, minus what `evict`
    /// returned, `remove` forgot, and this method handed over. Callers that do not track
    /// residency need not call it.
    ///
    /// `get` hands over nothing: a caller of `get` never sees what `get` evicts (through `evict`
    /// or otherwise), so residency cannot be tracked through it, and `get` leaves nothing of its
    /// own to drain, so that callers using only `get` (miss-ratio simulation) keep no buffer.
    ///
    /// Implementations that never drop entries outside `evict` keep the default, which hands
    /// over nothing. The others keep the side evictions in a small buffer that this method
    /// empties; the buffer grows only when a side eviction happens and keeps its allocation, so
    /// there is no allocation in steady state.
    fn drain_side_evictions(&mut self, out: &mut Vec<Evicted>) {
        let _ = out;
    }

    /// Whether this policy ever drops entries outside `evict` (and so hands any over through
    /// [`Policy::drain_side_evictions`]). A caller may skip the drains of a policy answering
    /// `false`, which MUST then hand over nothing, ever. Constant for the policy's life.
    fn has_side_evictions(&self) -> bool {
        false
    }

    /// One cache reference with libCacheSim's semantics: a hit updates metadata; a miss inserts
    /// the object after evicting as needed, unless it is larger than the whole cache (or, for a
    /// policy that overrides `get`, than the part of the cache it would go into).
    /// Returns whether it hit.
    fn get(&mut self, a: &Access) -> bool {
        reference(self, a, |p, a| p.insert(a))
    }

    /// A hint that `key` will be referenced soon: a policy may start loading the memory a lookup
    /// of `key` will touch, so that the cache misses of several references overlap. It must not
    /// change any state or answer. The miss-ratio engine calls it a few references ahead.
    #[inline]
    fn prefetch(&self, _key: Key) {}

    /// The first stage of a two-stage hint, issued further ahead than [`Policy::prefetch`]: start
    /// loading the index cell where a lookup of `key` begins, without reading anything that may
    /// not be in the CPU cache yet (so it never stalls). Then `prefetch`, a few references later,
    /// finds the index cell at hand and starts loading the entry itself. Same rules as `prefetch`.
    #[inline]
    fn prefetch_index(&self, _key: Key) {}

    /// The third stage, issued after `prefetch` and shortly before the reference: start loading
    /// the entries a hit on `key` will write (its neighbours in its list), now that the index
    /// cell and the entry are at hand. Same rules as `prefetch`.
    #[inline]
    fn prefetch_neighbours(&self, _key: Key) {}

    /// `get` of each access of `batch` in order, `hits[i]` set to what `get(&batch[i])` returns
    /// (`hits` is as long as `batch`). Each implementation gets its own copy of this loop, with
    /// `get` and the hints called directly (no dynamic dispatch per reference), and the hints
    /// issued ahead within the batch: [`Policy::prefetch_index`] ten references ahead,
    /// [`Policy::prefetch`] five ahead and [`Policy::prefetch_neighbours`] two ahead, so that
    /// the cache misses of a dozen references overlap. Overrides must give the same answers as
    /// calling `get` in turn.
    #[inline]
    fn get_batch(&mut self, batch: &[Access], hits: &mut [bool]) {
        const INDEX_AHEAD: usize = 10;
        const ENTRY_AHEAD: usize = 5;
        const NEIGHBOURS_AHEAD: usize = 2;
        assert_eq!(batch.len(), hits.len());
        for a in batch.iter().take(INDEX_AHEAD) {
            self.prefetch_index(a.key);
        }
        for (i, (a, hit)) in batch.iter().zip(hits.iter_mut()).enumerate() {
            if let Some(n) = batch.get(i + INDEX_AHEAD) {
                self.prefetch_index(n.key);
            }
            if let Some(n) = batch.get(i + ENTRY_AHEAD) {
                self.prefetch(n.key);
            }
            if let Some(n) = batch.get(i + NEIGHBOURS_AHEAD) {
                self.prefetch_neighbours(n.key);
            }
            *hit = self.get(a);
        }
    }

    /// True for policies that need [`Access::next_access`] (Belady).
    fn needs_future(&self) -> bool {
        false
    }

    /// Bytes of memory the policy's metadata holds now (tables, lists, ghosts).
    fn metadata_bytes(&self) -> usize;

    /// Whether the policy uses the file identity of references ([`Policy::next_file`]) and
    /// application control ([`Policy::control`], [`Policy::process_exit`]). A caller may skip
    /// those calls for a policy answering `false` (the default). Constant for the policy's life.
    fn application_controlled(&self) -> bool {
        false
    }

    /// The file and file block of the next reference (`find`, then on a miss `evict` and
    /// `insert`, or one `get`), or `None` when it has none. A caller that knows files calls it
    /// before each reference of a policy that is [`Policy::application_controlled`]; the policy
    /// MUST NOT change residency here. Default: ignored.
    fn next_file(&mut self, file: Option<FileBlock>) {
        let _ = file;
    }

    /// An application's caching call, delivered between references, in the order the
    /// application made it. The implementation MUST NOT change residency (a call only reorders
    /// or re-prioritises cached entries) and MUST ignore calls about blocks it does not hold.
    /// Returns whether the policy acts on such calls; the default ignores them and returns false.
    fn control(&mut self, c: &CacheControl) -> bool {
        let _ = c;
        false
    }

    /// Process `pid` has exited: it will make no more references. The policy may forget its
    /// state and, as ACFS does, treat its cached blocks as unowned. MUST NOT change residency.
    /// Default: ignored.
    fn process_exit(&mut self, pid: u32) {
        let _ = pid;
    }

    /// Whether `key` is pinned: the block of a reference still in progress, which `evict`
    /// will not choose (ACFS's theoretical model, reading J8 of `specs/acfs.md`). A prefetcher
    /// that counts the blocks it may replace asks this. Default: nothing is pinned.
    fn pinned(&self, key: Key) -> bool {
        let _ = key;
        false
    }
}

/// The body of [`Policy::get`]: `find`; on a miss, unless the object is larger than the whole
/// cache, `evict` until it fits, then `put` it. Generic, so that a policy overriding `get` (to
/// put without the lookup `insert` would repeat) gets its own copy with every call direct.
#[inline(always)]
pub fn reference<P: Policy + ?Sized>(p: &mut P, a: &Access, put: impl FnOnce(&mut P, &Access)) -> bool {
    if p.find(a) {
        return true;
    }
    if a.size > p.capacity() {
        return false;
    }
    while p.occupied() + a.size > p.capacity() {
        if p.evict(a).is_none() {
            break;
        }
    }
    put(p, a);
    false
}

/// [`Policy::get_batch`] for a policy whose entry stage can hand a slot to its neighbours stage:
/// the same hints at the same distances as the default, but `entry` (which finds the slot of a
/// key and starts loading its node) is called once per reference and the slot it returns is
/// kept for `neighbours` three references later, instead of the key being looked up again.
/// A kept slot may be stale by then (its entry evicted and the slot reused): it is only a hint,
/// and at worst loads the wrong nodes. `index` is the first stage ([`Policy::prefetch_index`]).
#[inline(always)]
pub(crate) fn get_batch_keeping_slots<P: Policy>(
    policy: &mut P,
    batch: &[Access],
    hits: &mut [bool],
    index: impl Fn(&P, Key),
    entry: impl Fn(&P, Key) -> list::Slot,
    neighbours: impl Fn(&P, list::Slot),
) {
    const INDEX_AHEAD: usize = 10;
    const ENTRY_AHEAD: usize = 5;
    const NEIGHBOURS_AHEAD: usize = 2;
    const RING: usize = 8;
    assert_eq!(batch.len(), hits.len());
    let mut found = [list::NIL; RING];
    for a in batch.iter().take(INDEX_AHEAD) {
        index(policy, a.key);
    }
    for (i, (a, hit)) in batch.iter().zip(hits.iter_mut()).enumerate() {
        if let Some(n) = batch.get(i + INDEX_AHEAD) {
            index(policy, n.key);
        }
        if let Some(n) = batch.get(i + ENTRY_AHEAD) {
            found[(i + ENTRY_AHEAD) % RING] = entry(policy, n.key);
        }
        neighbours(policy, found[(i + NEIGHBOURS_AHEAD) % RING]);
        *hit = policy.get(a);
    }
}

/// A policy's entry in the registry.
pub struct PolicyInfo {
    /// Name accepted on the command line (lower case).
    pub name: &'static str,
    /// Other accepted names (e.g. `twoq` for `2q`).
    pub aliases: &'static [&'static str],
    /// One line for `iostack policies`.
    pub summary: &'static str,
    /// Builds the policy with `capacity` (in the cache's unit) and its parameters.
    pub build: fn(capacity: u64, params: &mut Params) -> Result<Box<dyn Policy>, ConfigError>,
}

/// Every policy iostack has.
pub static POLICIES: &[PolicyInfo] = &[
    lru::INFO,
    fifo::INFO,
    clock::INFO,
    arc::INFO,
    slru::INFO,
    lfu::INFO,
    belady::INFO,
    dulo::INFO,
    dulo::linux::INFO,
    streamlru::INFO,
    splitlru::INFO,
    splitlru::INFO_23,
    twoq::INFO,
    s3fifo::INFO,
    lirs::INFO,
    linux::INFO,
    lrusp::INFO,
];

/// Looks a policy up by name or alias (case-insensitive).
pub fn find_info(name: &str) -> Option<&'static PolicyInfo> {
    let lower = name.to_ascii_lowercase();
    POLICIES.iter().find(|p| p.name == lower || p.aliases.iter().any(|a| *a == lower))
}

/// Builds a policy from a spec such as `lru`, `arc` or `dulo:hits=gds,bank=4`.
/// Unknown names list the valid ones; unknown or malformed parameters name the parameter.
pub fn build(spec: &str, capacity: u64) -> Result<Box<dyn Policy>, ConfigError> {
    let spec = PolicySpec::parse(spec)?;
    build_spec(&spec, capacity)
}

/// Builds a policy from a parsed spec.
pub fn build_spec(spec: &PolicySpec, capacity: u64) -> Result<Box<dyn Policy>, ConfigError> {
    let info = find_info(&spec.name).ok_or_else(|| {
        let names: Vec<&str> = POLICIES.iter().map(|p| p.name).collect();
        ConfigError::unknown("--policy", "policy", &spec.name, &names)
    })?;
    if capacity == 0 {
        return Err(ConfigError::new("--cache", "the cache size must be at least 1"));
    }
    let mut params = spec.params(info.name);
    let policy = (info.build)(capacity, &mut params)?;
    params.finish()?;
    Ok(policy)
}

#[cfg(test)]
pub(crate) mod testutil;
#[cfg(test)]
mod properties;
