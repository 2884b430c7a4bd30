//! LRU-SP: the kernel allocation policy of ACFS, two-level cache management where the kernel
//! decides which process gives up a block and the process decides which of its blocks (Cao,
//! Felten, Karlin and Li, "Implementation and performance of integrated application-controlled
//! file caching, prefetching, and disk scheduling", ACM TOCS, §3 and §4.1-4.2;
//! `papers/002_a9d62adcdacf8768.txt`; readings from `specs/acfs.md` §1.4-1.6, J1, J2).
//!
//! The kernel keeps one global list of every cached block ordered by last reference, LRU end
//! first (l.405-412). When a frame is needed (a miss, or a prefetch):
//!
//! - The candidate is the block at the LRU end, unless the missing block has a placeholder (see
//!   below), in which case it is the block the placeholder points to (§4.2.1, l.663-669; J1:
//!   the placeholder is consumed).
//! - If the candidate's owner manages its own cache, the owner chooses which of its blocks to
//!   give up (l.413-416, `replace_block`). Otherwise the candidate is replaced. Blocks of dead
//!   processes and blocks referenced by more than one running process have no owner and are
//!   replaced when they are the candidate (l.417-420).
//! - **Swapping** (l.421-426): if the owner chooses B instead of the candidate A, A takes B's
//!   place in the global list (B leaves from A's place), so that the owner is not asked again
//!   and again about the same block, and
//! - **a placeholder** for B is built pointing to A (l.426-431): if a process later misses on B,
//!   B was given up wrongly, and A, the block its owner kept instead, is the candidate, so that
//!   an erring process pays for its own mistakes. A replacement forced by a placeholder goes to
//!   the pointed block's owner like any other (J1); if the owner again keeps that block and
//!   gives up another, the same swap and placeholder follow (without that placeholder an
//!   erring process's next miss would fall on whoever holds the LRU end, and an oblivious
//!   process could suffer more misses than under global LRU: the property tests find such
//!   cases); if it gives up the pointed block itself, no placeholder is built.
//! - Bookkeeping (l.432-435): a hit on A deletes every placeholder pointing to A; when C is
//!   replaced by a swap with A, placeholders pointing to C point to A. A placeholder whose block
//!   leaves the cache otherwise is deleted (J2).
//!
//! Without placeholders a foolish process hurts others; without swapping a smart one loses its
//! advantage (l.449-460): `lrusp:swap=off` and `lrusp:placeholders=off` turn each mechanism off
//! so that this can be measured. `lrusp:calls=off` ignores the applications' level policies and
//! file priorities: every process then has the kernel's default LRU for its own blocks, the
//! caching of ACFS's configurations 2 and 3 (LRU-SP allocation, LRU replacement in every
//! application, l.898-901); temporary priorities still apply, since the controlled-aggressive
//! prefetcher steers its victims with them.
//!
//! A managing process (one that made a caching call, [`CacheControl::SetPolicy`]) has a manager
//! (ACM, §4.1-4.2, l.502-565, l.627-641): its blocks fall into pools by priority, the file's
//! long-term priority (`set_priority`, default 0) or a block's temporary priority
//! (`set_temppri`, until the block is next referenced or replaced). Each pool is kept in the
//! process's own recency order; the victim comes from the lowest-priority non-empty pool, from
//! its LRU end if that level's policy is LRU and from its MRU end if MRU (default: LRU). A block
//! moving into a pool through a call goes to the end that delays its replacement: the MRU end
//! under LRU, the LRU end under MRU (l.636-641).
//!
//! Ownership: a block belongs to the process that brought it in. A reference by a second live
//! process makes it shared and unowned for as long as it stays cached; [`Policy::process_exit`]
//! makes a process's blocks unowned. Prefetched blocks enter at the MRU end of the global list
//! (l.464), like demand-fetched ones.
//!
//! `lrusp:pin_current=on` pins each process's block in use (reading J8 of `specs/acfs.md`): in
//! the theoretical model a reference takes a time unit during which its block cannot be
//! discarded (Figure 1: C replaces A "because B is in use", l.129), whereas the timed engine
//! completes a hit at once and the think time follows. With the option, the block of a process's
//! latest demand reference is passed over as candidate and as its owner's choice until that
//! process makes its next reference (or exits); if every cached block is pinned the pins are
//! ignored. Off by default: trace replay has no such unit, and the paper's prototype pins
//! nothing.
//!
//! The file identity of blocks (for priorities and temporary priorities) comes through
//! [`Policy::next_file`]; blocks without one belong to no file and have priority 0 unless given
//! a temporary priority.

use std::collections::BTreeMap;

use super::{Access, CacheControl, Evicted, FileBlock, Key, KeyMap, LevelPolicy, Params, Policy, PolicyInfo};
use crate::error::ConfigError;

pub const INFO: PolicyInfo = PolicyInfo {
    name: "lrusp",
    aliases: &["lru-sp"],
    summary: "ACFS's LRU-SP allocation: global LRU, owner-chosen victims, swapping and placeholders (swap=on|off, placeholders=on|off, calls=on|off: off ignores level policies and file priorities, pin_current=on|off: never replace a process's block in use)",
    build: |capacity, params: &mut Params| -> Result<Box<dyn Policy>, ConfigError> {
        let swap = params.bool("swap", true)?;
        let placeholders = params.bool("placeholders", true)?;
        let mut p = LruSp::new(capacity, swap, placeholders);
        p.calls = params.bool("calls", true)?;
        p.pin_current = params.bool("pin_current", false)?;
        Ok(Box::new(p))
    },
};

/// One cached block.
#[derive(Debug, Clone)]
struct Block {
    /// Position in the global list (smaller: nearer the LRU end).
    stamp: u64,
    /// The owning process; `None` for unowned (shared, or its owner exited).
    owner: Option<u32>,
    file: Option<FileBlock>,
    /// Temporary priority, until the next reference or replacement.
    temp: Option<i32>,
    /// Place in the owner's pools (priority, position) when the owner manages its cache.
    pool: Option<(i32, i64)>,
    prefetched: bool,
    /// Size in the cache's unit (1 in block and unit-size mode).
    size: u64,
}

/// The cache manager of a process that controls its caching.
#[derive(Debug, Clone, Default)]
struct Manager {
    /// Long-term priorities of files (absent: 0).
    files: KeyMap<i32>,
    /// Policies of priority levels (absent: LRU).
    levels: BTreeMap<i32, LevelPolicy>,
    /// Pools by priority; each maps a position (process recency: larger is more recent) to
    /// the block.
    pools: BTreeMap<i32, BTreeMap<i64, Key>>,
    /// Next positions at the MRU and LRU ends.
    mru: i64,
    lru: i64,
}

impl Manager {
    fn level(&self, prio: i32) -> LevelPolicy {
        self.levels.get(&prio).copied().unwrap_or(LevelPolicy::Lru)
    }

    /// The block the process gives up: from the lowest pool holding a block `pinned` lets go,
    /// by that level's policy.
    fn choose(&self, pinned: impl Fn(Key) -> bool) -> Option<Key> {
        self.pools.iter().find_map(|(&prio, pool)| match self.level(prio) {
            LevelPolicy::Lru => pool.values().copied().find(|&k| !pinned(k)),
            LevelPolicy::Mru => pool.values().rev().copied().find(|&k| !pinned(k)),
        })
    }
}

/// Where a block enters a pool.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Enter {
    /// Referenced now: the MRU end.
    Referenced,
    /// Moved by a caching call: the end that delays its replacement under the level's policy.
    Moved,
}

/// Counters of the mechanisms, for tests and reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct LruSpStats {
    /// Replacements where the owner chose a block other than the candidate.
    pub overrides: u64,
    pub swaps: u64,
    pub placeholders_built: u64,
    pub placeholders_used: u64,
}

pub struct LruSp {
    capacity: u64,
    swap: bool,
    placeholders: bool,
    /// Whether the applications' caching calls are followed (off: every process is LRU).
    calls: bool,
    /// Whether each process's block in use is pinned (`pins`).
    pin_current: bool,
    /// Each process's latest demand reference, while `pin_current`.
    pins: rustc_hash::FxHashMap<u32, Key>,
    blocks: KeyMap<Block>,
    occupied: u64,
    /// The global list: stamp to key, smallest stamp at the LRU end.
    global: BTreeMap<u64, Key>,
    next_stamp: u64,
    /// Placeholders: missing block to the cached block it points to.
    ph: KeyMap<Key>,
    /// The placeholders pointing to each cached block.
    ph_to: KeyMap<Vec<Key>>,
    managers: BTreeMap<u32, Manager>,
    /// Processes that have exited.
    exited: rustc_hash::FxHashSet<u32>,
    /// File of the next reference.
    next_file: Option<FileBlock>,
    stats: LruSpStats,
}

impl LruSp {
    pub fn new(capacity: u64, swap: bool, placeholders: bool) -> LruSp {
        LruSp {
            capacity,
            swap,
            placeholders,
            calls: true,
            pin_current: false,
            pins: Default::default(),
            blocks: KeyMap::default(),
            occupied: 0,
            global: BTreeMap::new(),
            next_stamp: 0,
            ph: KeyMap::default(),
            ph_to: KeyMap::default(),
            managers: BTreeMap::new(),
            exited: Default::default(),
            next_file: None,
            stats: LruSpStats::default(),
        }
    }

    pub fn stats(&self) -> LruSpStats {
        self.stats
    }

    /// Keys from the LRU end of the global list to the MRU end.
    pub fn global_order(&self) -> Vec<Key> {
        self.global.values().copied().collect()
    }

    /// The block a placeholder for `missing` points to.
    pub fn placeholder(&self, missing: Key) -> Option<Key> {
        self.ph.get(&missing).copied()
    }

    /// The owner of a cached block (`None`: unowned or not cached).
    pub fn owner(&self, key: Key) -> Option<u32> {
        self.blocks.get(&key).and_then(|b| b.owner)
    }

    /// Pins `a`'s block as its process's block in use, if pinning and `a` is a demand reference.
    fn pin(&mut self, a: &Access) {
        if self.pin_current && matches!(a.origin, super::Origin::Demand) {
            self.pins.insert(a.pid, a.key);
        }
    }

    fn is_pinned(&self, key: Key) -> bool {
        self.pins.values().any(|&k| k == key)
    }

    fn stamp(&mut self) -> u64 {
        self.next_stamp += 1;
        self.next_stamp
    }

    /// The effective priority of a block in its owner's manager.
    fn priority(m: &Manager, b: &Block) -> i32 {
        b.temp.unwrap_or_else(|| b.file.and_then(|f| m.files.get(&f.file).copied()).unwrap_or(0))
    }

    fn pool_remove(&mut self, key: Key) {
        let Some(b) = self.blocks.get_mut(&key) else { return };
        let (Some((prio, pos)), Some(owner)) = (b.pool.take(), b.owner) else { return };
        if let Some(m) = self.managers.get_mut(&owner) {
            if let Some(p) = m.pools.get_mut(&prio) {
                p.remove(&pos);
            }
        }
    }

    /// Puts a block of a managing owner into the pool of its priority.
    fn pool_enter(&mut self, key: Key, how: Enter) {
        self.pool_remove(key);
        let Some(b) = self.blocks.get(&key) else { return };
        let Some(owner) = b.owner else { return };
        let Some(m) = self.managers.get_mut(&owner) else { return };
        let prio = Self::priority(m, b);
        let at_lru = how == Enter::Moved && m.level(prio) == LevelPolicy::Mru;
        let pos = if at_lru {
            m.lru -= 1;
            m.lru
        } else {
            m.mru += 1;
            m.mru
        };
        m.pools.entry(prio).or_default().insert(pos, key);
        self.blocks.get_mut(&key).unwrap().pool = Some((prio, pos));
    }

    /// Deletes the placeholders pointing to `key`.
    fn drop_placeholders_to(&mut self, key: Key) {
        if let Some(list) = self.ph_to.remove(&key) {
            for missing in list {
                self.ph.remove(&missing);
            }
        }
    }

    /// Deletes the placeholder for `missing`, if any.
    fn drop_placeholder_for(&mut self, missing: Key) {
        if let Some(target) = self.ph.remove(&missing) {
            if let Some(list) = self.ph_to.get_mut(&target) {
                list.retain(|&k| k != missing);
                if list.is_empty() {
                    self.ph_to.remove(&target);
                }
            }
        }
    }

    fn add_placeholder(&mut self, missing: Key, target: Key) {
        self.drop_placeholder_for(missing);
        self.ph.insert(missing, target);
        self.ph_to.entry(target).or_default().push(missing);
        self.stats.placeholders_built += 1;
    }

    /// Makes a block unowned.
    fn disown(&mut self, key: Key) {
        self.pool_remove(key);
        if let Some(b) = self.blocks.get_mut(&key) {
            b.owner = None;
        }
    }

    /// Forgets a cached block entirely (its placeholders included).
    fn forget(&mut self, key: Key) -> bool {
        self.pool_remove(key);
        let Some(b) = self.blocks.remove(&key) else { return false };
        self.occupied -= b.size;
        self.global.remove(&b.stamp);
        self.drop_placeholders_to(key);
        true
    }

    /// The replacement for a frame that `a` needs: returns the victim, already forgotten.
    fn replace(&mut self, a: &Access) -> Option<Evicted> {
        // The candidate: the block a placeholder for the missing block points to, else the
        // LRU end.
        let mut candidate = None;
        if self.placeholders {
            if let Some(target) = self.ph.get(&a.key).copied() {
                self.drop_placeholder_for(a.key);
                if self.blocks.contains_key(&target) && !self.is_pinned(target) {
                    candidate = Some(target);
                    self.stats.placeholders_used += 1;
                }
            }
        }
        // Pins hold unless every cached block is pinned.
        let pins = !self.pins.is_empty() && self.global.values().any(|&k| !self.is_pinned(k));
        let pinned = |k: Key| pins && self.is_pinned(k);
        let candidate = match candidate {
            Some(c) => c,
            None => self.global.values().copied().find(|&k| !pinned(k))?,
        };
        let owner = self.blocks[&candidate].owner;
        let victim = owner.and_then(|o| self.managers.get(&o)).and_then(|m| m.choose(pinned)).unwrap_or(candidate);
        let size = self.blocks[&victim].size;
        if victim != candidate {
            self.stats.overrides += 1;
            if self.swap {
                // The candidate takes the victim's place; placeholders pointing to the victim
                // now point to the candidate.
                self.stats.swaps += 1;
                let cs = self.blocks[&candidate].stamp;
                let vs = self.blocks[&victim].stamp;
                self.global.insert(vs, candidate);
                self.global.insert(cs, victim);
                self.blocks.get_mut(&candidate).unwrap().stamp = vs;
                self.blocks.get_mut(&victim).unwrap().stamp = cs;
                if let Some(list) = self.ph_to.remove(&victim) {
                    for &m in &list {
                        self.ph.insert(m, candidate);
                    }
                    self.ph_to.entry(candidate).or_default().extend(list);
                }
            }
            self.forget(victim);
            if self.placeholders {
                self.add_placeholder(victim, candidate);
            }
        } else {
            // The candidate itself goes (the LRU end, or the block a placeholder forced out):
            // no placeholder, and those pointing to it go with it (J2).
            self.forget(victim);
        }
        Some(Evicted { key: victim, size })
    }

    /// The manager of `pid`, created (default level LRU) at the process's first caching call:
    /// its blocks cached so far join its pools in their global recency order.
    fn manager(&mut self, pid: u32) -> &mut Manager {
        if !self.managers.contains_key(&pid) {
            let mut m = Manager::default();
            m.levels.insert(0, LevelPolicy::Lru);
            self.managers.insert(pid, m);
            let mut keys: Vec<(u64, Key)> =
                self.blocks.iter().filter(|(_, b)| b.owner == Some(pid)).map(|(&k, b)| (b.stamp, k)).collect();
            keys.sort_unstable();
            for (_, k) in keys {
                self.pool_enter(k, Enter::Referenced);
            }
        }
        self.managers.get_mut(&pid).unwrap()
    }

    /// Moves the cached blocks of `pid` that `select` picks into the pools of their (new)
    /// priorities, in the process's recency order, setting their temporary priority to
    /// `set_temp` when given.
    fn repool(&mut self, pid: u32, select: impl Fn(&Block) -> bool, set_temp: Option<i32>) {
        let mut keys: Vec<(i64, Key)> = self
            .blocks
            .iter()
            .filter(|(_, b)| b.owner == Some(pid) && select(b))
            .map(|(&k, b)| (b.pool.map_or(0, |p| p.1), k))
            .collect();
        keys.sort_unstable();
        for (_, k) in keys {
            if let Some(t) = set_temp {
                self.blocks.get_mut(&k).unwrap().temp = Some(t);
            }
            self.pool_enter(k, Enter::Moved);
        }
    }
}

impl Policy for LruSp {
    fn name(&self) -> &str {
        "lrusp"
    }
    fn capacity(&self) -> u64 {
        self.capacity
    }
    fn occupied(&self) -> u64 {
        self.occupied
    }
    fn len(&self) -> usize {
        self.blocks.len()
    }
    fn contains(&self, key: Key) -> bool {
        self.blocks.contains_key(&key)
    }

    fn find(&mut self, a: &Access) -> bool {
        self.pin(a);
        let Some(b) = self.blocks.get(&a.key) else { return false };
        let old = b.stamp;
        let owner = b.owner;
        let stamp = self.stamp();
        self.global.remove(&old);
        self.global.insert(stamp, a.key);
        let b = self.blocks.get_mut(&a.key).unwrap();
        b.stamp = stamp;
        b.temp = None;
        b.prefetched = false;
        if b.file.is_none() {
            b.file = self.next_file;
        }
        self.drop_placeholders_to(a.key);
        match owner {
            Some(o) if o != a.pid && !self.exited.contains(&a.pid) => self.disown(a.key),
            Some(_) => self.pool_enter(a.key, Enter::Referenced),
            None => {}
        }
        true
    }

    fn insert(&mut self, a: &Access) {
        self.pin(a);
        self.drop_placeholder_for(a.key);
        let stamp = self.stamp();
        self.global.insert(stamp, a.key);
        let owner = (!self.exited.contains(&a.pid)).then_some(a.pid);
        let prefetched = matches!(a.origin, super::Origin::Prefetch { .. });
        self.blocks.insert(a.key, Block { stamp, owner, file: self.next_file, temp: None, pool: None, prefetched, size: a.size });
        self.occupied += a.size;
        self.pool_enter(a.key, Enter::Referenced);
    }

    fn evict(&mut self, a: &Access) -> Option<Evicted> {
        self.replace(a)
    }

    fn remove(&mut self, key: Key) -> bool {
        self.forget(key)
    }

    fn metadata_bytes(&self) -> usize {
        self.blocks.len() * (std::mem::size_of::<Block>() + 8 + 48)
            + self.ph.len() * 32
            + self.managers.values().map(|m| m.files.len() * 16 + m.pools.values().map(|p| p.len() * 40).sum::<usize>()).sum::<usize>()
    }

    fn application_controlled(&self) -> bool {
        true
    }

    fn pinned(&self, key: Key) -> bool {
        self.is_pinned(key) && self.blocks.contains_key(&key)
    }

    fn next_file(&mut self, file: Option<FileBlock>) {
        self.next_file = file;
    }

    fn control(&mut self, c: &CacheControl) -> bool {
        match *c {
            // With calls off the process still manages its blocks (LRU at every level), so
            // that temporary priorities (the prefetcher's steering of victims) apply.
            CacheControl::SetPolicy { pid, .. } | CacheControl::SetPriority { pid, .. } if !self.calls => {
                self.manager(pid);
            }
            CacheControl::SetPolicy { pid, prio, policy } => {
                self.manager(pid).levels.insert(prio, policy);
            }
            CacheControl::SetPriority { pid, file, prio } => {
                self.manager(pid).files.insert(file, prio);
                self.repool(pid, |b| b.temp.is_none() && b.file.is_some_and(|f| f.file == file), None);
            }
            CacheControl::SetTempPri { pid, file, first, last, prio } => {
                self.manager(pid);
                self.repool(pid, |b| b.file.is_some_and(|f| f.file == file && f.block >= first && f.block <= last), Some(prio));
            }
        }
        true
    }

    fn process_exit(&mut self, pid: u32) {
        self.pins.remove(&pid);
        self.exited.insert(pid);
        let keys: Vec<Key> = self.blocks.iter().filter(|(_, b)| b.owner == Some(pid)).map(|(&k, _)| k).collect();
        for k in keys {
            self.disown(k);
        }
        self.managers.remove(&pid);
    }
}

#[cfg(test)]
mod tests;
