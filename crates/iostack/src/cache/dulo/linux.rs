//! `dulo-linux`: the paper's Linux prototype (Jiang et al. 2007, Section 4.1).
//!
//! Linux keeps file pages on two LRU lists (Section 4.1.1): a page enters the *inactive* list,
//! the victim is taken from the inactive list, a page referenced again while inactive is promoted
//! to the *active* list, and active pages are demoted back when the inactive list runs low.
//! iostack's model of that policy is [`crate::cache::linux`] (`linux`): its [`TwoListCore`] keeps
//! the lists, the PG_referenced two-step, the kernel's balance and the shadow entries.
//!
//! The prototype (Section 4.1.2) does not replace the Linux policy: it partitions the inactive
//! list into DULO's staging section and eviction section, since the inactive list is where blocks
//! enter and leave, and because that list has no lower bound it changes `refill_inactive_zone`
//! to keep the inactive list at least twice as long as the eviction section (otherwise random
//! blocks would have no sequential blocks below them to protect them, and prefetched blocks would
//! pass through a staging section too short to buffer them).
//!
//! Here: a [`TwoListCore`] whose inactive list is indexed by a [`DuloStack`] (told of every page
//! entering or leaving the inactive list through [`InactiveObserver`]). Everything the lists do
//! is Linux's; only the choice of the inactive victim is DULO's: before reclaiming, the core's own
//! balance runs, then active pages are demoted while the inactive list is shorter than twice the
//! eviction section; the victim is the next block of DULO's bottom sequence. Hits are Linux's
//! (the DULO stack does not react to them: PG_referenced and activation are the core's). Every
//! insertion is a fetch and ticks DULO's disk access clock, even one the refault test sends
//! straight to the active list; a page demoted from the active list enters the top of DULO's
//! stack with the stamps the block table holds for it.
//!
//! Parameters: those of `linux` (`ratio`, `page`, `shadows`) and of `dulo` except `corr` and
//! `hits` (`bank`, `evict`, `distance`, `seq_max`, `table_kib`): the staging section is whatever
//! the inactive list holds above the eviction section and the bank.

use super::{DuloParams, DuloStack, HitMode, Stamps};
use crate::cache::linux::{InactiveObserver, TwoListConfig, TwoListCore};
use crate::cache::list::Slot;
use crate::cache::{Access, Evicted, Key, Origin, Params, Policy, PolicyInfo};
use crate::error::ConfigError;

pub const INFO: PolicyInfo = PolicyInfo {
    name: "dulo-linux",
    aliases: &["dulolinux"],
    summary: "DULO on the inactive list of Linux's two-list policy (Jiang et al. 2007, 4.1)",
    build: |capacity, params: &mut Params| -> Result<Box<dyn Policy>, ConfigError> {
        let mut p = DuloParams::from_params(capacity, params, true)?;
        p.hits = HitMode::Passive;
        let lists = TwoListConfig::from_params(params)?;
        Ok(Box::new(DuloLinux::new(capacity, p, lists)))
    },
};

/// DULO's index of the inactive list.
pub struct InactiveDulo {
    stack: DuloStack,
    /// Stamps of the page being inserted (recorded at its fetch).
    pending: Option<(Key, Stamps)>,
}

impl InactiveObserver for InactiveDulo {
    fn entered(&mut self, _slot: Slot, key: Key) {
        let stamps = match self.pending.take() {
            Some((k, s)) if k == key => s,
            _ => self.stack.table_stamps(key),
        };
        self.stack.insert_returning(key, 1, stamps);
    }
    fn left(&mut self, _slot: Slot, key: Key) {
        // Absent when DULO itself chose the page as the victim.
        self.stack.take(key);
    }
}

pub struct DuloLinux {
    params: DuloParams,
    core: TwoListCore<InactiveDulo>,
}

impl DuloLinux {
    pub fn new(capacity: u64, params: DuloParams, lists: TwoListConfig) -> DuloLinux {
        let mut cfg = params.stack_config();
        cfg.hits = HitMode::Passive;
        let index = InactiveDulo { stack: DuloStack::new(cfg), pending: None };
        DuloLinux { params, core: TwoListCore::with_observer(capacity, lists, index) }
    }
    pub fn params(&self) -> &DuloParams {
        &self.params
    }
    /// DULO's stack over the inactive list.
    pub fn inactive(&self) -> &DuloStack {
        &self.core.observer().stack
    }
    pub fn core(&self) -> &TwoListCore<InactiveDulo> {
        &self.core
    }
}

impl Policy for DuloLinux {
    fn name(&self) -> &str {
        "dulo-linux"
    }
    fn capacity(&self) -> u64 {
        self.core.capacity()
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
        let stamps = self.core.observer_mut().stack.record_fetch(a.key);
        self.core.observer_mut().pending = Some((a.key, stamps));
        self.core.admit(a.key, a.size, a.origin == Origin::Demand);
        self.core.observer_mut().pending = None;
    }

    fn evict(&mut self, _a: &Access) -> Option<Evicted> {
        self.core.balance();
        // The prototype's floor: the inactive list at least twice the eviction section.
        let floor = 2 * self.params.evict;
        while self.core.inactive_size() < floor.max(1) && self.core.deactivate_one() {}
        if self.core.inactive_size() == 0 && !self.core.deactivate_one() {
            return None;
        }
        let (key, _) = self.core.observer_mut().stack.evict()?;
        let s = self.core.lookup(key).expect("DULO indexes resident inactive pages");
        Some(self.core.evict_slot(s))
    }

    fn remove(&mut self, key: Key) -> bool {
        let was = self.core.remove(key);
        self.core.observer_mut().stack.forget_history(key);
        was
    }

    fn metadata_bytes(&self) -> usize {
        self.core.metadata_bytes() + self.core.observer().stack.metadata_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::{block_key, build, testutil};

    #[test]
    fn linux_lists_with_dulo_choosing_the_inactive_victim() {
        let mut p = DuloLinux::new(16, DuloParams { bank: 4, evict: 4, corr: 8, ..DuloParams::scaled(16) }, TwoListConfig::default());
        // Four random blocks, then a 12-block sequential run: the cache is full, all inactive.
        let mut t = 0;
        for b in [100u64, 900, 1700, 2500] {
            p.get(&Access::unit(block_key(0, b), t));
            t += 1;
        }
        for b in 5000..5012u64 {
            p.get(&Access::unit(block_key(0, b), t));
            t += 1;
        }
        assert_eq!(p.inactive().len(), 16);
        // A new block evicts from the sequential run, not the oldest (random) page as Linux would.
        p.get(&Access::unit(block_key(0, 9000), t));
        for b in [100u64, 900, 1700, 2500] {
            assert!(p.contains(block_key(0, b)), "random block {b} kept");
        }
        // Two demand references activate a page: it leaves DULO's index.
        let k = block_key(0, 5011);
        let was = p.contains(k);
        p.get(&Access::unit(k, t + 1));
        p.get(&Access::unit(k, t + 2));
        if was {
            assert!(p.inactive().stamps(k).is_none(), "active pages are not in the inactive index");
        }
        assert_eq!(p.inactive().len() as u64 + p.core().active_size(), p.occupied());
    }

    #[test]
    fn inactive_list_kept_at_twice_the_eviction_section() {
        let params = DuloParams { bank: 2, evict: 6, corr: 24, ..DuloParams::scaled(32) };
        let mut p = DuloLinux::new(32, params, TwoListConfig::default());
        let keys: Vec<Key> = (0..32).map(|b| block_key(0, b * 100)).collect();
        let mut t = 0;
        for _ in 0..3 {
            for &k in &keys {
                p.get(&Access::unit(k, t));
                t += 1;
            }
        }
        // Everything was referenced three times: Linux's own balance (inactive ratio 1 below
        // 1 GiB) keeps about half the pages active; the prototype's floor is 12.
        assert!(p.core().active_size() > 0);
        for i in 0..40u64 {
            p.get(&Access::unit(block_key(0, 90_000 + i * 100), t + i));
            assert!(p.core().inactive_size() >= 12, "inactive {}", p.core().inactive_size());
            assert_eq!(p.occupied(), 32);
        }
    }

    #[test]
    fn common_contract() {
        testutil::check_contract(|c| build("dulo-linux", c).unwrap());
        testutil::check_contract(|c| build(&format!("dulo-linux:bank=1,evict={}", c / 4), c).unwrap());
    }
}
