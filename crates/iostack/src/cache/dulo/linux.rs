//! `dulo-linux`: the paper's Linux 2.6.11 prototype (Jiang et al. 2007, Section 4.1).
//!
//! Linux keeps file pages on two LRU lists (Section 4.1.1). A page enters at the head of the
//! *inactive* list; the victim is always taken at the inactive tail. An inactive page referenced
//! a second time (`mark_page_accessed`: the first reference sets PG_referenced, the second
//! activates) moves to the head of the *active* list; `refill_inactive_zone` moves pages from the
//! active tail back to the inactive head, giving referenced ones another round on the active list
//! first.
//!
//! The prototype (Section 4.1.2) does not replace this: it partitions the inactive list into
//! DULO's staging section (top) and eviction section (bottom), since the inactive list is where
//! blocks enter and leave, and because that list has no lower bound it changes
//! `refill_inactive_zone` to keep the inactive list at least twice as long as the eviction
//! section. Otherwise random blocks would have no sequential blocks below them to protect them,
//! and prefetched blocks would pass through a staging section too short to buffer them.
//!
//! Here the inactive list is a [`DuloStack`] whose hits are left to the two-list logic
//! (`HitMode::Passive`: its referenced bit is PG_referenced); the staging section is whatever the
//! inactive list holds above the eviction section and the bank. The active list is refilled into
//! the inactive list when the inactive list is shorter than twice the eviction section or the
//! active list exceeds its share of the cache (`active`, default 0.5, a stand-in for the
//! kernel's scan balance). Blocks moving between the lists keep their fetch stamps; only fetches
//! tick the disk access clock.
//!
//! Parameters: those of `dulo` except `corr` and `hits` (`bank`, `evict`, `distance`, `seq_max`,
//! `table_kib`), plus `active`.

use super::{DuloParams, DuloStack, HitMode, Stamps};
use crate::cache::list::{List, Slab, Slot};
use crate::cache::{Access, Evicted, Key, KeyMap, Params, Policy, PolicyInfo};
use crate::error::ConfigError;

pub const INFO: PolicyInfo = PolicyInfo {
    name: "dulo-linux",
    aliases: &["dulolinux"],
    summary: "DULO on the inactive list of Linux's active/inactive lists (Jiang et al. 2007, 4.1)",
    build: |capacity, params: &mut Params| -> Result<Box<dyn Policy>, ConfigError> {
        let mut p = DuloParams::from_params(capacity, params, true)?;
        p.hits = HitMode::Passive;
        let active = params.f64("active", 0.5)?;
        if !(0.0..1.0).contains(&active) {
            return Err(ConfigError::new("dulo-linux.active", format!("the active list's share must be in [0, 1), not {active}")));
        }
        Ok(Box::new(DuloLinux::new(capacity, p, active)))
    },
};

#[derive(Debug, Clone, Copy)]
struct ActiveEntry {
    key: Key,
    size: u64,
    stamps: Stamps,
    referenced: bool,
}

pub struct DuloLinux {
    capacity: u64,
    params: DuloParams,
    active_max: u64,
    map: KeyMap<Slot>,
    slab: Slab<ActiveEntry>,
    active: List,
    active_bytes: u64,
    inactive: DuloStack,
    /// Pages moved from the inactive to the active list, and back.
    pub activations: u64,
    pub deactivations: u64,
}

impl DuloLinux {
    pub fn new(capacity: u64, params: DuloParams, active_share: f64) -> DuloLinux {
        let mut cfg = params.stack_config();
        cfg.hits = HitMode::Passive;
        DuloLinux {
            capacity,
            params,
            active_max: (capacity as f64 * active_share).floor() as u64,
            map: KeyMap::default(),
            slab: Slab::default(),
            active: List::new(),
            active_bytes: 0,
            inactive: DuloStack::new(cfg),
            activations: 0,
            deactivations: 0,
        }
    }

    pub fn inactive(&self) -> &DuloStack {
        &self.inactive
    }
    pub fn active_len(&self) -> usize {
        self.active.len()
    }
    pub fn params(&self) -> &DuloParams {
        &self.params
    }

    fn deactivate(&mut self, s: Slot) {
        let e = *self.slab.get(s);
        self.slab.release(s);
        self.map.remove(&e.key);
        self.active_bytes -= e.size;
        self.deactivations += 1;
        self.inactive.insert_returning(e.key, e.size, e.stamps);
    }

    /// `refill_inactive_zone` with the prototype's floor on the inactive list.
    fn refill_inactive(&mut self) {
        let floor = 2 * self.params.evict as usize;
        let mut budget = 2 * self.active.len();
        while budget > 0 && (self.inactive.len() < floor.max(1) || self.active_bytes > self.active_max) {
            budget -= 1;
            let Some(s) = self.slab.pop_tail(&mut self.active) else { break };
            if self.slab.get(s).referenced {
                self.slab.get_mut(s).referenced = false;
                self.slab.push_head(&mut self.active, s);
            } else {
                self.deactivate(s);
            }
        }
    }
}

impl Policy for DuloLinux {
    fn name(&self) -> &str {
        "dulo-linux"
    }
    fn capacity(&self) -> u64 {
        self.capacity
    }
    fn occupied(&self) -> u64 {
        self.active_bytes + self.inactive.occupied()
    }
    fn len(&self) -> usize {
        self.map.len() + self.inactive.len()
    }
    fn contains(&self, key: Key) -> bool {
        self.map.contains_key(&key) || self.inactive.contains(key)
    }

    fn find(&mut self, a: &Access) -> bool {
        if let Some(&s) = self.map.get(&a.key) {
            self.slab.get_mut(s).referenced = true;
            return true;
        }
        let Some(r) = self.inactive.referenced_mut(a.key) else { return false };
        if !*r {
            *r = true;
            return true;
        }
        // Second reference on the inactive list: activate.
        let (size, stamps) = self.inactive.take(a.key).expect("cached");
        let s = self.slab.alloc(ActiveEntry { key: a.key, size, stamps, referenced: false });
        self.slab.push_head(&mut self.active, s);
        self.map.insert(a.key, s);
        self.active_bytes += size;
        self.activations += 1;
        true
    }

    fn insert(&mut self, a: &Access) {
        self.inactive.insert_fetched(a.key, a.size);
    }

    fn evict(&mut self, _a: &Access) -> Option<Evicted> {
        self.refill_inactive();
        if self.inactive.len() == 0 {
            // Everything is active: the oldest active page goes to the inactive list first.
            let s = self.slab.pop_tail(&mut self.active)?;
            self.deactivate(s);
        }
        self.inactive.evict().map(|(key, size)| Evicted { key, size })
    }

    fn remove(&mut self, key: Key) -> bool {
        if let Some(s) = self.map.remove(&key) {
            self.slab.unlink(&mut self.active, s);
            self.active_bytes -= self.slab.get(s).size;
            self.slab.release(s);
            return true;
        }
        self.inactive.remove(key)
    }

    fn metadata_bytes(&self) -> usize {
        self.map.allocation_size() + self.slab.allocated_bytes() + self.inactive.metadata_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::{block_key, build, testutil};

    #[test]
    fn second_reference_activates_and_inactive_keeps_its_floor() {
        let mut p = build("dulo-linux:bank=2,evict=4", 32).unwrap();
        let keys: Vec<Key> = (0..32).map(|b| block_key(0, b * 100)).collect();
        for (i, &k) in keys.iter().enumerate() {
            p.get(&Access::unit(k, i as u64));
        }
        // Two more references to the first 20: the second one activates them.
        for round in 0..2 {
            for (i, &k) in keys[..20].iter().enumerate() {
                assert!(p.get(&Access::unit(k, (100 + round * 20 + i) as u64)));
            }
        }
        // New blocks force evictions; the inactive list is refilled to at least 2 x evict.
        for i in 0..8u64 {
            p.get(&Access::unit(block_key(0, 90_000 + i * 100), 200 + i));
        }
        assert_eq!(p.occupied(), 32);
    }

    #[test]
    fn common_contract() {
        testutil::check_contract(|c| build("dulo-linux", c).unwrap());
        testutil::check_contract(|c| build(&format!("dulo-linux:bank=1,evict={}", c / 4), c).unwrap());
    }
}
