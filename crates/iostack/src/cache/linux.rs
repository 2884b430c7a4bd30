//! Linux: the kernel's two-list page cache replacement (active/inactive LRU with shadow entries).
//!
//! This models the classic (non-MGLRU) file LRU of Linux 6.x, as implemented in `mm/swap.c`
//! (`folio_mark_accessed`, `folio_activate`), `mm/vmscan.c` (`inactive_is_low`,
//! `shrink_active_list`, `folio_check_references`, `shrink_folio_list`) and `mm/workingset.c`
//! (`workingset_eviction`, `workingset_test_recent`, `workingset_refault`, `count_shadow_nodes`).
//! Section names below are those functions.
//!
//! Lists. Page cache pages are on one of two lists: inactive (pages seen once, or demoted) and
//! active (pages with proven reuse). New pages enter the inactive list's head. Reclaim takes its
//! victims from the inactive list's tail only.
//!
//! References (`folio_mark_accessed`, the "two-step"): every demand read of a page (`filemap_read`
//! marks a folio accessed once per read call) does
//! - inactive and not PG_referenced: set PG_referenced;
//! - inactive and PG_referenced: activate (move to the active list's head), clear PG_referenced,
//!   and count it as an activation for the nonresident age (`workingset_activation`);
//! - active and not PG_referenced: set PG_referenced;
//! - active and PG_referenced: nothing.
//!
//! A hit never reorders a list. `filemap_read` skips the marking when a read starts in the folio
//! where the previous read of the file ended (`ra->prev_pos`), so that repeated reads within one
//! folio count once: iostack applies this to consecutive demand references to the same page (one
//! global stream, not one per open file). Since the page that a demand miss brings in is read
//! right away, it starts PG_referenced, so its next reference activates it: activation on the
//! second reference while inactive. A page brought in by a prefetcher ([`Origin::Prefetch`]) is not
//! marked until a demand reference touches it, so it needs two.
//!
//! Reclaim (`shrink_folio_list` / `folio_check_references`): the inactive tail is reclaimed. For
//! page-cache pages that no process maps, `folio_referenced` finds no referencing PTEs, so a set
//! PG_referenced earns no second chance there (the result is FOLIOREF_RECLAIM_CLEAN for a clean
//! file folio): the tail page is evicted whatever its flag. (Mapped pages, whose PTE young bits
//! would earn activation or a rotation, are not modelled: traces carry read/write requests.)
//!
//! Balance (`inactive_is_low`, `shrink_active_list`): before reclaiming, while the inactive list
//! is "low", i.e. `inactive · ratio < active`, the active list's tail is demoted to the inactive
//! list's head with PG_active cleared and PG_workingset set; PG_referenced is left as it is (an
//! unmapped page is demoted regardless of it, and keeps it: its next reference re-activates it).
//! The kernel's `inactive_ratio` is `int_sqrt(10 · gb)` where `gb` is the size of both lists in
//! GiB, and 1 below 1 GiB (so active ≤ inactive for caches under 1 GiB); `ratio=0` (default) uses
//! that formula with `page` bytes per cache unit (4096 by default), `ratio=N` fixes it. Lists are
//! only balanced under reclaim, as in the kernel: while the cache fills, nothing is demoted.
//!
//! Shadow entries (`workingset_eviction`): an evicted page leaves a shadow entry recording the
//! nonresident age (`lruvec->nonresident_age`) at its eviction and whether it was in the
//! workingset (PG_workingset). The age advances by the page's size on every eviction (after the
//! shadow is taken) and on every activation (`workingset_activation`, and refault activation).
//!
//! Refaults (`workingset_test_recent`, `workingset_refault`): a miss on a key with a shadow entry
//! computes the refault distance `age_now − age_at_eviction`, the number of evictions and
//! activations since. If it is at most the size of the active file list (`workingset_size` is
//! NR_ACTIVE_FILE for a file page when no anonymous memory is in play), the page would have stayed
//! resident had the inactive list been that much bigger: it enters the active list directly
//! (PG_active, and PG_workingset if the shadow had it), and the age advances as for any
//! activation. Otherwise it enters the inactive list like a new page.
//!
//! Shadow bound (`count_shadow_nodes`): the kernel limits the radix-tree nodes holding shadow
//! entries, reasoning that a shadow whose refault distance exceeds the largest possible active
//! list can never cause an activation, so keeping it is useless. iostack keeps shadow entries
//! in a FIFO in eviction order and drops the oldest once its refault distance exceeds the
//! capacity (such an entry can never qualify again, since the active list is never larger than
//! the cache), and in any case keeps at most `shadows` × capacity of them (default 1): the bound
//! loses no refault the kernel could still detect, and shadow memory is counted in
//! [`Policy::metadata_bytes`].
//!
//! Simplifications: reclaim is one page at a time, on demand, instead of SWAP_CLUSTER_MAX batches
//! driven by watermarks and scan priority; the extra deactivation that the kernel performs after
//! refault activations (`prepare_scan_count` sets `may_deactivate` when WORKINGSET_ACTIVATE
//! changed) is not modelled, the ratio alone drives demotion; there is one LRU (no memory
//! cgroups, NUMA nodes or anonymous pages); dirty pages are reclaimed like clean ones; MGLRU is
//! not this policy.
//!
//! Structure: the lists, flags, ages and shadows are a [`TwoListCore`], whose methods are the
//! kernel's steps (mark accessed, admit with the refault test, balance, evict an inactive page).
//! [`Linux`] is the plain policy on top of it; a policy that chooses inactive victims differently
//! (DULO applied to the inactive list) can reuse the core, follow the inactive list through an
//! [`InactiveObserver`], and call [`TwoListCore::evict_slot`] on the victim it picks.

use super::list::{List, Slab, Slot};
use super::{Access, Evicted, Key, KeyMap, Origin, Params, Policy, PolicyInfo};
use crate::error::ConfigError;

pub const INFO: PolicyInfo = PolicyInfo {
    name: "linux",
    aliases: &["twolist", "2list"],
    summary: "Linux active/inactive lists with refault detection by shadow entries (mm/vmscan.c, mm/workingset.c)",
    build: |capacity, params: &mut Params| -> Result<Box<dyn Policy>, ConfigError> {
        let config = TwoListConfig::from_params(params)?;
        Ok(Box::new(Linux::new(capacity, config)))
    },
};

/// Tunables of [`TwoListCore`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TwoListConfig {
    /// Fixed inactive ratio, or 0 for the kernel's `int_sqrt(10 · gb)` formula.
    pub ratio: u64,
    /// Bytes per cache unit, for the formula's GiB (4096: one unit is one page).
    pub page_bytes: u64,
    /// Maximum shadow entries, as a fraction of the capacity (in units).
    pub shadows: f64,
}

impl Default for TwoListConfig {
    fn default() -> Self {
        TwoListConfig { ratio: 0, page_bytes: 4096, shadows: 1.0 }
    }
}

impl TwoListConfig {
    /// Reads `ratio`, `page` and `shadows`.
    pub fn from_params(params: &mut Params) -> Result<TwoListConfig, ConfigError> {
        let d = TwoListConfig::default();
        let ratio = params.u64_in("ratio", d.ratio, 0, 1000)?;
        let page_bytes = params.u64_in("page", d.page_bytes, 1, 1 << 30)?;
        let shadows = params.f64_in("shadows", d.shadows, 0.0, 64.0)?;
        if page_bytes == 0 {
            return Err(ConfigError::new("linux.page", "the page size must be at least 1 byte"));
        }
        if !(0.0..=64.0).contains(&shadows) {
            return Err(ConfigError::new("linux.shadows", format!("the shadow bound must be in [0, 64] times the capacity, got {shadows}")));
        }
        Ok(TwoListConfig { ratio, page_bytes, shadows })
    }
}

/// Where an entry of the core is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lru {
    Inactive,
    Active,
    /// Evicted; only the shadow entry remains.
    Shadow,
}

#[derive(Debug, Clone, Copy)]
struct Page {
    key: Key,
    size: u64,
    lru: Lru,
    /// PG_referenced.
    referenced: bool,
    /// PG_workingset (set on demotion and on workingset restore; kept in the shadow entry).
    workingset: bool,
    /// For a shadow entry: the nonresident age at eviction.
    eviction: u64,
}

/// Event counters of a [`TwoListCore`] (the kernel's `/proc/vmstat` equivalents in brackets).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TwoListStats {
    /// Inactive pages promoted on their second reference [pgactivate].
    pub activations: u64,
    /// Active pages demoted to the inactive list [pgdeactivate].
    pub deactivations: u64,
    /// Pages evicted from the inactive tail [pgsteal].
    pub evictions: u64,
    /// Misses on keys that still had a shadow entry [workingset_refault_file].
    pub refaults: u64,
    /// Refaults close enough to enter the active list [workingset_activate_file].
    pub refault_activations: u64,
    /// Refault activations of pages that were in the workingset [workingset_restore_file].
    pub restores: u64,
}

/// Told when a page joins or leaves the inactive list, so that a policy built on
/// [`TwoListCore`] can keep its own index of inactive pages (DULO's sequencing bank, for one)
/// without rescanning the list. `()` observes nothing and costs nothing.
pub trait InactiveObserver {
    /// Page `slot` (key `key`) is now on the inactive list: admitted, or demoted.
    fn entered(&mut self, _slot: Slot, _key: Key) {}
    /// Page `slot` left the inactive list: activated, evicted or removed.
    fn left(&mut self, _slot: Slot, _key: Key) {}
}

impl InactiveObserver for () {}

/// The active and inactive lists, the PG_referenced two-step, shadow entries and the refault test.
pub struct TwoListCore<O: InactiveObserver = ()> {
    observer: O,
    capacity: u64,
    config: TwoListConfig,
    map: KeyMap<Slot>,
    slab: Slab<Page>,
    inactive: List,
    active: List,
    shadow: List,
    inactive_size: u64,
    active_size: u64,
    /// `lruvec->nonresident_age`.
    age: u64,
    max_shadows: usize,
    /// The page the previous demand read ended in (`ra->prev_pos`), or `None`.
    last_read: Option<Key>,
    pub stats: TwoListStats,
}

impl TwoListCore {
    pub fn new(capacity: u64, config: TwoListConfig) -> Self {
        TwoListCore::with_observer(capacity, config, ())
    }
}

impl<O: InactiveObserver> TwoListCore<O> {
    /// A core that reports inactive-list changes to `observer`.
    pub fn with_observer(capacity: u64, config: TwoListConfig, observer: O) -> Self {
        let max_shadows = (config.shadows * capacity as f64).min(u32::MAX as f64 / 2.0) as usize;
        TwoListCore {
            observer,
            capacity,
            config,
            map: KeyMap::default(),
            slab: Slab::default(),
            inactive: List::new(),
            active: List::new(),
            shadow: List::new(),
            inactive_size: 0,
            active_size: 0,
            age: 0,
            max_shadows,
            last_read: None,
            stats: TwoListStats::default(),
        }
    }

    pub fn observer(&self) -> &O {
        &self.observer
    }
    pub fn observer_mut(&mut self) -> &mut O {
        &mut self.observer
    }
    pub fn capacity(&self) -> u64 {
        self.capacity
    }
    /// Sum of the sizes of resident pages.
    pub fn occupied(&self) -> u64 {
        self.inactive_size + self.active_size
    }
    /// Number of resident pages.
    pub fn len(&self) -> usize {
        self.inactive.len() + self.active.len()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn inactive_size(&self) -> u64 {
        self.inactive_size
    }
    pub fn active_size(&self) -> u64 {
        self.active_size
    }
    pub fn shadow_count(&self) -> usize {
        self.shadow.len()
    }
    /// The nonresident age clock.
    pub fn age(&self) -> u64 {
        self.age
    }

    /// The slot of a resident page.
    #[inline]
    pub fn lookup(&self, key: Key) -> Option<Slot> {
        let &s = self.map.get(&key)?;
        (self.slab.get(s).lru != Lru::Shadow).then_some(s)
    }
    /// Which list a slot is on.
    pub fn lru_of(&self, s: Slot) -> Lru {
        self.slab.get(s).lru
    }
    pub fn key_of(&self, s: Slot) -> Key {
        self.slab.get(s).key
    }
    pub fn is_referenced(&self, s: Slot) -> bool {
        self.slab.get(s).referenced
    }
    /// Oldest inactive page (the kernel's reclaim candidate).
    pub fn inactive_tail(&self) -> Option<Slot> {
        self.inactive.tail()
    }
    /// Inactive pages from the tail (oldest) towards the head, for policies that pick their own
    /// victim among them.
    pub fn inactive_from_tail(&self) -> impl Iterator<Item = Slot> + '_ {
        std::iter::successors(self.inactive.tail(), move |&s| self.slab.prev(s))
    }
    /// Keys of the inactive and active lists, head (newest) first.
    pub fn lists(&self) -> (Vec<Key>, Vec<Key>) {
        let keys = |l: &List| self.slab.iter(l).map(|(_, p)| p.key).collect();
        (keys(&self.inactive), keys(&self.active))
    }

    /// `Policy::find` of every policy built on this core: whether the page is resident, and a
    /// demand reference reads it ([`TwoListCore::read`]); a prefetch's lookup touches nothing.
    #[inline]
    pub fn find(&mut self, a: &Access) -> bool {
        match self.lookup(a.key) {
            Some(s) => {
                if a.origin == Origin::Demand {
                    self.read(s);
                }
                true
            }
            None => false,
        }
    }

    /// A demand read of resident page `s`, as `filemap_read` does it: marks the page accessed
    /// unless the previous demand read was of the same page.
    #[inline]
    pub fn read(&mut self, s: Slot) {
        let key = self.slab.get(s).key;
        if self.last_read != Some(key) {
            self.mark_accessed(s);
        }
        self.last_read = Some(key);
    }

    /// `folio_mark_accessed`: the PG_referenced two-step on a resident page.
    #[inline]
    pub fn mark_accessed(&mut self, s: Slot) {
        let p = self.slab.get_mut(s);
        if !p.referenced {
            p.referenced = true;
        } else if p.lru == Lru::Inactive {
            p.referenced = false;
            p.lru = Lru::Active;
            let (key, size) = (p.key, p.size);
            self.slab.unlink(&mut self.inactive, s);
            self.observer.left(s, key);
            self.slab.push_head(&mut self.active, s);
            self.inactive_size -= size;
            self.active_size += size;
            self.age += size; // workingset_activation
            self.stats.activations += 1;
        }
    }

    /// Adds a page that is not resident: the refault test against its shadow entry, if any,
    /// decides the list (`workingset_refault`); a demand reference then reads it
    /// ([`TwoListCore::read`]).
    /// The caller has made room (see [`TwoListCore::reclaim`]).
    pub fn admit(&mut self, key: Key, size: u64, demand: bool) -> Slot {
        let mut lru = Lru::Inactive;
        let mut workingset = false;
        let s = match self.map.get(&key) {
            Some(&s) => {
                // A shadow entry (resident pages are never admitted twice).
                let p = *self.slab.get(s);
                debug_assert_eq!(p.lru, Lru::Shadow);
                self.slab.unlink(&mut self.shadow, s);
                self.stats.refaults += 1;
                let distance = self.age - p.eviction;
                if distance <= self.active_size {
                    lru = Lru::Active;
                    workingset = p.workingset;
                    self.age += size;
                    self.stats.refault_activations += 1;
                    self.stats.restores += workingset as u64;
                }
                *self.slab.get_mut(s) = Page { key, size, lru, referenced: false, workingset, eviction: 0 };
                s
            }
            None => {
                let s = self.slab.alloc(Page { key, size, lru, referenced: false, workingset, eviction: 0 });
                self.map.insert(key, s);
                s
            }
        };
        match lru {
            Lru::Active => {
                self.slab.push_head(&mut self.active, s);
                self.active_size += size;
            }
            _ => {
                self.slab.push_head(&mut self.inactive, s);
                self.inactive_size += size;
                self.observer.entered(s, key);
            }
        }
        if demand {
            self.read(s);
        }
        s
    }

    /// The kernel's `inactive_ratio` for the current list sizes.
    fn inactive_ratio(&self) -> u64 {
        if self.config.ratio > 0 {
            return self.config.ratio;
        }
        let bytes = (self.inactive_size + self.active_size).saturating_mul(self.config.page_bytes);
        let gb = bytes >> 30;
        if gb == 0 {
            1
        } else {
            (10 * gb).isqrt()
        }
    }

    /// `inactive_is_low`.
    pub fn inactive_is_low(&self) -> bool {
        self.inactive_size.saturating_mul(self.inactive_ratio()) < self.active_size
    }

    /// `shrink_active_list` for an unmapped page: the active tail goes to the inactive head.
    pub fn deactivate_one(&mut self) -> bool {
        let Some(s) = self.slab.pop_tail(&mut self.active) else { return false };
        let p = self.slab.get_mut(s);
        p.lru = Lru::Inactive;
        p.workingset = true;
        let (key, size) = (p.key, p.size);
        self.slab.push_head(&mut self.inactive, s);
        self.observer.entered(s, key);
        self.active_size -= size;
        self.inactive_size += size;
        self.stats.deactivations += 1;
        true
    }

    /// Demotes active pages while the inactive list is low.
    pub fn balance(&mut self) {
        while self.inactive_is_low() {
            if !self.deactivate_one() {
                break;
            }
        }
    }

    /// Evicts the inactive page `s`, leaving a shadow entry (`workingset_eviction`).
    pub fn evict_slot(&mut self, s: Slot) -> Evicted {
        let p = self.slab.get_mut(s);
        debug_assert_eq!(p.lru, Lru::Inactive);
        p.lru = Lru::Shadow;
        p.eviction = self.age;
        p.referenced = false;
        let (key, size) = (p.key, p.size);
        self.slab.unlink(&mut self.inactive, s);
        self.observer.left(s, key);
        self.inactive_size -= size;
        self.age += size;
        self.stats.evictions += 1;
        self.slab.push_head(&mut self.shadow, s);
        self.trim_shadows();
        Evicted { key, size }
    }

    /// One reclaim step: balance the lists, then evict the inactive tail.
    pub fn reclaim(&mut self) -> Option<Evicted> {
        self.balance();
        if self.inactive.is_empty() && !self.deactivate_one() {
            return None;
        }
        let s = self.inactive.tail()?;
        Some(self.evict_slot(s))
    }

    /// Drops shadow entries that can no longer qualify or exceed the bound.
    fn trim_shadows(&mut self) {
        while let Some(t) = self.shadow.tail() {
            let p = *self.slab.get(t);
            if self.shadow.len() <= self.max_shadows && self.age - p.eviction <= self.capacity {
                break;
            }
            self.slab.unlink(&mut self.shadow, t);
            self.slab.release(t);
            self.map.remove(&p.key);
        }
    }

    /// Forgets `key` (resident or shadow); returns whether it was resident.
    pub fn remove(&mut self, key: Key) -> bool {
        let Some(s) = self.map.remove(&key) else { return false };
        let p = *self.slab.get(s);
        match p.lru {
            Lru::Inactive => {
                self.slab.unlink(&mut self.inactive, s);
                self.observer.left(s, key);
                self.inactive_size -= p.size;
            }
            Lru::Active => {
                self.slab.unlink(&mut self.active, s);
                self.active_size -= p.size;
            }
            Lru::Shadow => self.slab.unlink(&mut self.shadow, s),
        }
        self.slab.release(s);
        p.lru != Lru::Shadow
    }

    pub fn metadata_bytes(&self) -> usize {
        self.map.allocation_size() + self.slab.allocated_bytes()
    }
}

/// The Linux page cache policy: [`TwoListCore`] with the kernel's own victim choice.
pub struct Linux {
    core: TwoListCore,
}

impl Linux {
    pub fn new(capacity: u64, config: TwoListConfig) -> Self {
        Linux { core: TwoListCore::new(capacity, config) }
    }
    pub fn core(&self) -> &TwoListCore {
        &self.core
    }
}

impl Policy for Linux {
    fn name(&self) -> &str {
        "linux"
    }
    fn capacity(&self) -> u64 {
        self.core.capacity
    }
    fn occupied(&self) -> u64 {
        self.core.occupied()
    }
    fn len(&self) -> usize {
        self.core.len()
    }
    fn contains(&self, key: Key) -> bool {
        self.core.lookup(key).is_some()
    }

    #[inline]
    fn find(&mut self, a: &Access) -> bool {
        self.core.find(a)
    }

    fn insert(&mut self, a: &Access) {
        self.core.admit(a.key, a.size, a.origin == Origin::Demand);
    }

    fn evict(&mut self, _a: &Access) -> Option<Evicted> {
        self.core.reclaim()
    }

    fn remove(&mut self, key: Key) -> bool {
        self.core.remove(key)
    }

    fn metadata_bytes(&self) -> usize {
        self.core.metadata_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::testutil;

    fn linux(c: u64) -> Linux {
        Linux::new(c, TwoListConfig::default())
    }

    #[test]
    fn second_reference_activates() {
        let mut p = linux(10);
        testutil::run_keys(&mut p, &[1, 2, 3]);
        assert_eq!(p.core.lists(), (vec![3, 2, 1], vec![]));
        // The miss marked 2 referenced; its next reference activates it.
        assert!(p.get(&Access::unit(2, 3)));
        assert_eq!(p.core.lists(), (vec![3, 1], vec![2]));
        assert_eq!(p.core.stats.activations, 1);
        // Hits on the active list do not reorder it.
        testutil::run_keys(&mut p, &[1, 1]);
        assert_eq!(p.core.lists(), (vec![3], vec![1, 2]));
        assert!(p.get(&Access::unit(2, 9)));
        assert_eq!(p.core.lists(), (vec![3], vec![1, 2]));
    }

    #[test]
    fn prefetched_page_needs_two_demand_references() {
        let mut p = linux(10);
        let pre = Access { origin: Origin::Prefetch { set: 0, index: 0, len: 1 }, ..Access::unit(7, 0) };
        assert!(!p.get(&pre));
        assert!(p.get(&Access::unit(7, 1)));
        assert_eq!(p.core.lists().1, Vec::<u64>::new());
        assert!(!p.get(&Access::unit(8, 2)));
        assert!(p.get(&Access::unit(7, 3)));
        assert_eq!(p.core.lists().1, vec![7]);
    }

    #[test]
    fn consecutive_reads_of_one_page_mark_it_once() {
        let mut p = linux(10);
        testutil::run_keys(&mut p, &[1, 1, 1, 1]);
        assert_eq!(p.core.lists(), (vec![1], vec![]));
        testutil::run_keys(&mut p, &[2, 1]);
        assert_eq!(p.core.lists(), (vec![2], vec![1]));
    }

    #[test]
    fn reclaim_balances_then_evicts_inactive_tail() {
        let mut p = linux(4);
        // 1..4 in, all activated by a second reference: active 4, inactive 0.
        testutil::run_keys(&mut p, &[1, 2, 3, 4, 1, 2, 3, 4]);
        assert_eq!(p.core.lists(), (vec![], vec![4, 3, 2, 1]));
        // A miss reclaims: demote until inactive >= active (ratio 1), then evict the inactive tail.
        assert!(!p.get(&Access::unit(5, 8)));
        let (inactive, active) = p.core.lists();
        assert_eq!(active, vec![4, 3]);
        assert_eq!(inactive, vec![5, 2]); // 1 and 2 were demoted to the head; 1 (tail) evicted
        assert!(!p.contains(1));
        assert_eq!(p.core.stats.deactivations, 2);
        // 2 was not referenced since its activation: the first reference marks it, the second
        // re-activates it.
        assert!(p.get(&Access::unit(2, 9)));
        assert!(!p.core.lists().1.contains(&2));
        assert!(p.get(&Access::unit(4, 10)));
        assert!(p.get(&Access::unit(2, 10)));
        assert!(p.core.lists().1.contains(&2));
        // An active page referenced before its demotion keeps PG_referenced: after demotion, one
        // reference re-activates it.
        assert!(p.get(&Access::unit(3, 11)));
        assert!(!p.get(&Access::unit(20, 12))); // demotes 3, evicts 5
        let (inactive, active) = p.core.lists();
        assert!(inactive.contains(&3) && !active.contains(&3), "3 demoted: {inactive:?} {active:?}");
        assert!(p.get(&Access::unit(3, 40)));
        assert!(p.core.lists().1.contains(&3));
    }

    #[test]
    fn close_refault_goes_to_active_far_one_to_inactive() {
        let mut p = linux(8);
        // Build an active list of 4 (keys 1..4), then stream cold keys to evict.
        testutil::run_keys(&mut p, &[1, 2, 3, 4, 1, 2, 3, 4]);
        let mut t = 8;
        for k in 100..104 {
            p.get(&Access::unit(k, t));
            t += 1;
        }
        // Cache full (8). Next miss evicts 100 (the oldest inactive page); age = 4 activations.
        p.get(&Access::unit(104, t));
        t += 1;
        assert!(!p.contains(100));
        let active = p.core.active_size();
        assert!(active >= 1);
        // Refault of 100 right away: distance 1 <= active size, so it goes to the active list.
        assert!(!p.get(&Access::unit(100, t)));
        t += 1;
        assert!(p.core.lists().1.contains(&100));
        assert_eq!(p.core.stats.refault_activations, 1);
        // A refault after many evictions (distance > active size) goes to the inactive list.
        let victim = 200;
        p.get(&Access::unit(victim, t));
        t += 1;
        for k in 201..230 {
            p.get(&Access::unit(k, t));
            t += 1;
        }
        assert!(!p.contains(victim));
        p.get(&Access::unit(victim, t));
        let (inactive, active) = p.core.lists();
        assert!(inactive.contains(&victim) && !active.contains(&victim));
    }

    /// An observer that mirrors the inactive list sees exactly its membership.
    #[test]
    fn observer_mirrors_the_inactive_list() {
        #[derive(Default)]
        struct Mirror(std::collections::BTreeSet<Key>);
        impl InactiveObserver for Mirror {
            fn entered(&mut self, _: Slot, key: Key) {
                assert!(self.0.insert(key), "{key} entered twice");
            }
            fn left(&mut self, _: Slot, key: Key) {
                assert!(self.0.remove(&key), "{key} left without entering");
            }
        }
        let mut core = TwoListCore::with_observer(40, TwoListConfig::default(), Mirror::default());
        for (i, k) in testutil::mixed_keys(5000, 3).into_iter().enumerate() {
            match core.lookup(k) {
                Some(s) => core.read(s),
                None => {
                    while core.occupied() + 1 > core.capacity() {
                        core.reclaim();
                    }
                    core.admit(k, 1, i % 7 != 0);
                }
            }
            if i % 500 == 499 {
                core.remove(k);
            }
            let inactive: std::collections::BTreeSet<Key> = core.lists().0.into_iter().collect();
            assert_eq!(core.observer().0, inactive);
        }
        assert!(core.stats.evictions > 0 && core.stats.activations > 0 && core.stats.deactivations > 0);
    }

    #[test]
    fn shadows_are_bounded() {
        let mut p = linux(100);
        let keys: Vec<u64> = (0..100_000).collect();
        testutil::run_keys(&mut p, &keys);
        assert!(p.core.shadow_count() <= 100);
        assert!(p.core.map.len() <= 200);
    }

    #[test]
    fn inactive_ratio_follows_the_kernel_formula() {
        let mut core = TwoListCore::new(1 << 20, TwoListConfig::default());
        assert_eq!(core.inactive_ratio(), 1);
        // 3 GiB of 4 KiB pages: int_sqrt(30) = 5.
        core.inactive_size = 3 << 18;
        assert_eq!(core.inactive_ratio(), 5);
        core.inactive_size = 0;
        assert_eq!(TwoListCore::new(10, TwoListConfig { ratio: 3, ..Default::default() }).inactive_ratio(), 3);
    }

    #[test]
    fn params_are_parsed() {
        assert!(crate::cache::build("linux:ratio=2,page=512,shadows=0.5", 100).is_ok());
        assert!(crate::cache::build("linux:page=0", 100).is_err());
    }

    #[test]
    fn common_contract() {
        testutil::check_contract(|c| Box::new(linux(c)));
    }
}
