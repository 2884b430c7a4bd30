//! select: KDSim's window comparison choosing between two readahead settings while a workload runs.
//!
//! The KDSim paper (González-Férez, Piernas and Cortes, Computer Journal 59(10), 2016, §3 and
//! §7) presents its virtual disk as a framework to evaluate, on line, an alternative the system
//! is not running and to adopt it when it would do better. `sched::select` applies it to the I/O
//! scheduler; this module applies the same controller ([`crate::kdsim::controller`]) to the
//! page cache's readahead (any two `--prefetch` settings: `linux:max=128KiB` and `linux:max=0`,
//! `pm:32` and `none`, ...).
//!
//! - *The road not taken has its own requests.* Readahead acts in the page cache, above the block
//!   layer: for the same application reads two settings read different pages in different
//!   requests, and hit on different pages. The scheduler selector's virtual disk plays copies of
//!   the real requests; here that would be the running setting's stream. So the other setting
//!   runs in a *shadow page cache* ([`shadow`]): the real cache's policy and size, a prefetcher
//!   of the other setting, fed every demand read of every page the real cache sees, in the same
//!   order and at the same time; the requests it makes go to KDSim's virtual disk (its own
//!   instance of the real scheduler, timed by the table model), whose completions make its pages
//!   present.
//! - *The measure is the application's read time, not time per block.* The scheduler selector
//!   and ADA sum each request's time per block; but readahead changes the blocks fetched: a
//!   128 KiB readahead costs more per request and less per block than a 4 KiB read, and the pages
//!   it brings may never be used, so time per block rewards reading more whether or not it helps.
//!   What both settings share are the application's reads, so each side's value for one
//!   application read (a `read()` of one or more pages) is the time it waited for its pages:
//!   from its issue to the presence of its last page not already present (0 for a read that hit
//!   entirely). The window sums are then over the same application reads on both sides. In the
//!   shadow a process cannot issue a read before its previous one completed *there*, so a read's
//!   time there runs from its issue or from that completion, whichever is later: the shadow is
//!   fed the reads when the real system issues them (open loop), and a setting slower than the
//!   running one would otherwise be charged the backlog of all its earlier reads again in every
//!   later one.
//! - *The comparison* is the controller's: after every N application reads the real system
//!   completed (`tumbling`, or after each once N have, `sliding`), the setting not running is
//!   adopted when its window sum is strictly smaller (less the `margin`), once the shadow has
//!   completed a window of reads since it started playing its setting; a switch is verified on
//!   the real system (`verify=on`), reverted with a doubling hold when the new setting's first
//!   real window is worse than the sum it was decided on.
//! - *A switch* happens when the application read that completed the window is over: the real
//!   page cache gets a fresh instance of the other setting (its per-file state learnt again from
//!   the next reads, as a file opened after `read_ahead_kb` changed: Linux copies the device's
//!   readahead size into the file's state at open), and the shadow a fresh instance of the
//!   setting just left. The shadow keeps its pages, markers and reads in flight: it does not
//!   copy the real cache (which the page cache's interface does not enumerate), and its pages
//!   differ from the real ones only in what the two settings read ahead and what that pushed
//!   out (both hold the pages the application demanded); the controller decides on the shadow
//!   only after it has played a window of reads under its new setting, by which time the pages
//!   it read ahead are its own.
//! - The virtual disk's table is the one given (`table=PATH`, trained off line with `iostack
//!   kdsim train`): the page cache sees when reads complete, not when the device started them,
//!   so it cannot be updated on line from the real device as the scheduler selector's is.
//!
//! The controller is itself a [`Prefetcher`], so the engine's path is the same with or without
//! it; it sees every access (it never answers [`Prefetcher::on_plain_hit`]).

pub mod shadow;

use std::collections::BTreeMap;

use crate::cache::{block_key, KeyMap, Policy};
use crate::device::table::TableModel;
use crate::error::ConfigError;
use crate::kdsim::controller::{Controller, ControllerConfig};
use crate::kdsim::virtual_disk::VirtualDisk;
use crate::kdsim::window::Check;
use crate::prefetch::{BlockPresence, Completion, DemandAccess, Fetch, Prefetcher};
use crate::sched::SchedLimits;
use shadow::Shadow;

const OPTION: &str = "--prefetch-select";

/// Parses `A,B[,window=1000][,cadence=tumbling|sliding][,table=PATH][,margin=PCT][,verify=on|off]`,
/// A and B prefetcher specs as `--prefetch` takes them (`linux:max=128KiB`, `pm:degree=32`).
pub fn parse(text: &str) -> Result<ControllerConfig, ConfigError> {
    ControllerConfig::parse(OPTION, "readahead settings", "pm:32,none", text)
}

/// The stack the shadow copies: the real page cache's policy and size, the real scheduler.
#[derive(Debug, Clone)]
pub struct ShadowStack {
    pub policy: String,
    /// Pages.
    pub capacity: u64,
    pub sched: String,
    pub limits: SchedLimits,
    pub page_bytes: u64,
    pub max_request_blocks: u32,
}

/// One application read (a request of one process, one or more pages).
#[derive(Debug, Clone, Copy)]
struct AppRead {
    pid: u32,
    start_ns: u64,
    /// All its pages looked up.
    closed: bool,
    /// The setting on the real system and the one the shadow played when it was issued.
    real_setting: usize,
    shadow_setting: usize,
    real_pending: u32,
    real_end: u64,
    real_recorded: bool,
    shadow_pending: u32,
    shadow_end: u64,
    shadow_recorded: bool,
}

/// The controller: the running setting in the real page cache, the other in the shadow.
pub struct PrefetchSelect {
    cfg: ControllerConfig,
    page_bytes: u64,
    real: Box<dyn Prefetcher>,
    running: usize,
    shadow: Shadow,
    ctl: Controller,
    names: [String; 2],
    /// Reads not yet recorded on both sides, by number.
    reads: BTreeMap<u64, AppRead>,
    /// The read each process is looking up.
    open: BTreeMap<u32, u64>,
    /// Reads waiting for each page on the real side.
    real_waiters: KeyMap<Vec<u64>>,
    /// Each process's last read completion in the shadow.
    shadow_last: BTreeMap<u32, u64>,
    next_read: u64,
    /// Reads the shadow completed since it started playing its setting.
    shadow_reads: u64,
    now: u64,
    /// A switch decided, taken when the read being looked up is over.
    switch_due: bool,
    /// Whether either setting fetches a file's next block where it lies, and the map they get.
    wants_map: bool,
    file_map: Option<std::sync::Arc<super::file_map::FileMap>>,
}

impl PrefetchSelect {
    /// The controller over `cfg`'s two settings, its shadow built from `stack`, its virtual disk
    /// timed by `table`.
    pub fn new(cfg: ControllerConfig, stack: &ShadowStack, table: TableModel) -> Result<PrefetchSelect, ConfigError> {
        let mut names = [String::new(), String::new()];
        let mut wants_map = false;
        for (i, spec) in cfg.specs.iter().enumerate() {
            let p = build(spec, stack.page_bytes)?;
            wants_map |= p.wants_file_map();
            if p.wants_lists() || p.acts_on_cache() {
                return Err(ConfigError::new(OPTION, format!("prefetcher `{spec}` works from the applications' access lists and acts on the cache; the controller chooses between readahead settings")));
            }
            names[i] = p.name();
        }
        if names[0] == names[1] {
            return Err(ConfigError::new(OPTION, format!("`{}` and `{}` are the same setting (`{}`): nothing to choose", cfg.specs[0], cfg.specs[1], names[0])));
        }
        let policy: Box<dyn Policy> = crate::cache::build(&stack.policy, stack.capacity)?;
        if policy.application_controlled() {
            return Err(ConfigError::new(OPTION, format!("policy `{}` is steered by the applications' hints, which the shadow page cache does not receive", stack.policy)));
        }
        let sched = crate::sched::build(&stack.sched, stack.limits)?;
        let vd = VirtualDisk::new(sched, table, stack.page_bytes);
        let shadow = Shadow::new(policy, build(&cfg.specs[1], stack.page_bytes)?, vd, stack.max_request_blocks);
        Ok(PrefetchSelect {
            page_bytes: stack.page_bytes,
            real: build(&cfg.specs[0], stack.page_bytes)?,
            running: 0,
            shadow,
            ctl: Controller::new(cfg.clone())?,
            names,
            reads: BTreeMap::new(),
            open: BTreeMap::new(),
            real_waiters: KeyMap::default(),
            shadow_last: BTreeMap::new(),
            next_read: 0,
            shadow_reads: 0,
            now: 0,
            switch_due: false,
            wants_map,
            file_map: None,
            cfg,
        })
    }

    /// The spec of the setting in the real page cache now.
    pub fn running(&self) -> &str {
        &self.cfg.specs[self.running]
    }

    pub fn switches(&self) -> &[crate::kdsim::controller::Switch] {
        self.ctl.switches()
    }

    /// Runs the shadow's virtual disk to `now` and settles the reads its completions finish.
    fn catch_up(&mut self, now: u64) {
        self.now = self.now.max(now);
        self.shadow.advance(now);
        while let Some((id, t)) = self.shadow.take_done() {
            if let Some(r) = self.reads.get_mut(&id) {
                r.shadow_pending -= 1;
                r.shadow_end = r.shadow_end.max(t);
                self.settle(id);
            }
        }
    }

    /// Records a read's time on each side once it is known there; forgets it once both are.
    fn settle(&mut self, id: u64) {
        let Some(r) = self.reads.get_mut(&id) else { return };
        if !r.closed {
            return;
        }
        let mut check = None;
        if !r.real_recorded && r.real_pending == 0 {
            r.real_recorded = true;
            let (setting, time) = (r.real_setting, r.real_end.saturating_sub(r.start_ns));
            self.ctl.record(setting, time as f64, 1);
            check = self.ctl.count(setting);
        }
        let r = self.reads.get_mut(&id).expect("still there");
        if !r.shadow_recorded && r.shadow_pending == 0 {
            r.shadow_recorded = true;
            let last = self.shadow_last.entry(r.pid).or_default();
            let from = r.start_ns.max(*last);
            let end = r.shadow_end.max(r.start_ns);
            *last = (*last).max(end);
            // Each setting keeps its values across switches, whichever cache produced them.
            self.ctl.record(r.shadow_setting, end.saturating_sub(from) as f64, 1);
            if r.shadow_setting != self.running {
                self.shadow_reads += 1;
            }
        }
        let r = self.reads[&id];
        if r.real_recorded && r.shadow_recorded {
            self.reads.remove(&id);
        }
        if let Some(c) = check {
            self.decide(c);
        }
    }

    fn decide(&mut self, c: Check) {
        let young = self.shadow_reads < self.cfg.window as u64;
        let request = self.next_read;
        if self.ctl.decide(c, young, request, self.now) {
            self.switch_due = true;
        }
    }

    /// The other setting takes the real page cache; the shadow plays the one that ran.
    fn switch(&mut self) {
        self.switch_due = false;
        let other = self.ctl.running();
        if other == self.running {
            return;
        }
        self.real = build(&self.cfg.specs[other], self.page_bytes).expect("built at the start");
        let mut played = build(&self.cfg.specs[self.running], self.page_bytes).expect("built at the start");
        if let Some(m) = &self.file_map {
            self.real.set_file_map(m.clone());
            played.set_file_map(m.clone());
        }
        self.shadow.set_prefetcher(played);
        self.shadow_reads = 0;
        self.running = other;
    }
}

fn build(spec: &str, page_bytes: u64) -> Result<Box<dyn Prefetcher>, ConfigError> {
    crate::prefetch::build(spec, page_bytes).map_err(|e| ConfigError::new(OPTION, format!("prefetcher `{spec}`: {e}")))
}

impl Prefetcher for PrefetchSelect {
    fn name(&self) -> String {
        format!("select:{}|{},{}", self.cfg.specs[0], self.cfg.specs[1], self.cfg.describe())
    }

    fn on_access(&mut self, a: &DemandAccess, cache: &dyn BlockPresence, out: &mut Vec<Fetch>) {
        self.catch_up(a.time_ns);
        self.real.on_access(a, cache, out);
        let id = match self.open.get(&a.pid) {
            Some(&id) => id,
            None => {
                let id = self.next_read;
                self.next_read += 1;
                self.open.insert(a.pid, id);
                let shadow_setting = 1 - self.running;
                self.reads.insert(
                    id,
                    AppRead { pid: a.pid, start_ns: a.time_ns, closed: false, real_setting: self.running, shadow_setting, real_pending: 0, real_end: a.time_ns, real_recorded: false, shadow_pending: 0, shadow_end: a.time_ns, shadow_recorded: false },
                );
                id
            }
        };
        // The real side waits for a page missed (read now, or by a read outliving its eviction)
        // or in flight.
        let real_waits = !a.hit || a.in_flight;
        if real_waits {
            self.real_waiters.entry(block_key(a.device, a.block)).or_default().push(id);
        }
        let shadow_waits = self.shadow.access(a, id);
        let r = self.reads.get_mut(&id).expect("open read");
        r.real_pending += real_waits as u32;
        r.shadow_pending += shadow_waits as u32;
        if a.req_pages <= 1 {
            r.closed = true;
            self.open.remove(&a.pid);
            self.settle(id);
            if self.switch_due {
                self.switch();
            }
        }
    }

    fn on_complete(&mut self, done: &Completion, cache: &dyn BlockPresence, out: &mut Vec<Fetch>) {
        self.catch_up(done.time_ns);
        self.real.on_complete(done, cache, out);
        for b in done.block..done.block + done.blocks as u64 {
            let Some(ids) = self.real_waiters.remove(&block_key(done.device, b)) else { continue };
            for id in ids {
                if let Some(r) = self.reads.get_mut(&id) {
                    r.real_pending -= 1;
                    r.real_end = r.real_end.max(done.time_ns);
                    self.settle(id);
                }
            }
        }
        // Between accesses: the pages of a read are looked up together, so none is half done.
        if self.switch_due {
            self.switch();
        }
    }

    fn wants_file_map(&self) -> bool {
        self.wants_map
    }

    fn set_file_map(&mut self, map: std::sync::Arc<super::file_map::FileMap>) {
        self.real.set_file_map(map.clone());
        self.shadow.set_file_map(map.clone());
        self.file_map = Some(map);
    }

    fn report(&self) -> Option<serde_json::Value> {
        let mut m = self.ctl.report(self.now, "prefetch", "prefetchers", &self.names);
        m.insert("reads".into(), self.next_read.into());
        m.insert("shadow".into(), serde_json::to_value(self.shadow.counts()).expect("plain counts"));
        m.insert("measure".into(), "application read time (ms summed over the window)".into());
        Some(serde_json::Value::Object(m))
    }
}

#[cfg(test)]
mod tests;
