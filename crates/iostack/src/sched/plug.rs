//! Queue plugging, as Linux 2.6 does it (block/ll_rw_blk.c and block/elevator.c of Linux 2.6.20:
//! `blk_plug_device`, `elv_insert`, `q->unplug_thresh = 4`, `q->unplug_delay = 3 ms`), around any
//! scheduler (`plug=on` in every scheduler's spec).
//!
//! When a request arrives at an idle queue (nothing queued in the scheduler and nothing in the
//! device), the queue is plugged: the device gets nothing for a short while, so that the
//! requests that usually follow (the rest of a readahead window, a burst of write-back) can be
//! merged and sorted before the first one is dispatched. The queue is unplugged when
//! `unplug_delay` (3 ms) has passed since it was plugged, or when `unplug_thresh` (4) requests
//! are queued (after merging), or at once when the request is synchronous: a process that waits
//! for its request runs the queue itself (in 2.6 it unplugs when it sleeps on the page), so
//! only asynchronous requests (readahead, write-back) plug, as the KDSim paper describes. A
//! completion also unplugs (the driver runs the queue when a request ends). Once unplugged, the
//! wrapped scheduler decides alone until the queue is idle again.
//!
//! The spec is `plug=on` (3 ms, 4 requests), `plug=off` (the default), or `plug=DELAY/COUNT`
//! (`plug=5ms/8`); the delay needs its unit.

use super::{duration_text, ComponentSpec, IoRequest, Scheduler};
use crate::error::ConfigError;

/// When a plugged queue is unplugged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlugSettings {
    /// Longest plug, ns.
    pub unplug_delay: u64,
    /// Queued requests that unplug at once.
    pub unplug_thresh: usize,
}

impl Default for PlugSettings {
    /// Linux 2.6's: 3 ms, 4 requests.
    fn default() -> Self {
        PlugSettings { unplug_delay: 3_000_000, unplug_thresh: 4 }
    }
}

impl PlugSettings {
    /// The `plug` parameter of a scheduler spec, if plugging is on.
    pub fn from_spec(spec: &mut ComponentSpec) -> Result<Option<PlugSettings>, ConfigError> {
        let Some(v) = spec.text("plug") else { return Ok(None) };
        match v.as_str() {
            "off" | "no" | "false" => return Ok(None),
            "on" | "yes" | "true" => return Ok(Some(PlugSettings::default())),
            _ => {}
        }
        let bad = || spec.error("plug", format!("`{v}` is not on, off or DELAY/COUNT (e.g. 3ms/4)"));
        let (delay, count) = v.split_once('/').ok_or_else(bad)?;
        let unplug_delay = crate::units::parse_duration_ns(&format!("{} {}.plug", spec.option, spec.name), delay)?;
        let unplug_thresh: usize = count.trim().parse().map_err(|_| bad())?;
        if unplug_thresh == 0 {
            return Err(spec.error("plug", "the unplug threshold must be at least 1 request"));
        }
        Ok(Some(PlugSettings { unplug_delay, unplug_thresh }))
    }
}

/// A scheduler behind a plug.
pub struct Plug {
    inner: Box<dyn Scheduler>,
    s: PlugSettings,
    /// When the queue was plugged, while it is.
    plugged_at: Option<u64>,
    /// Requests dispatched and not completed.
    in_flight: usize,
    /// Times the queue was plugged.
    pub plugs: u64,
}

impl Plug {
    pub fn new(inner: Box<dyn Scheduler>, s: PlugSettings) -> Plug {
        Plug { inner, s, plugged_at: None, in_flight: 0, plugs: 0 }
    }

    /// The wrapped scheduler.
    pub fn inner(&self) -> &dyn Scheduler {
        &*self.inner
    }
}

impl Scheduler for Plug {
    fn name(&self) -> String {
        let inner = self.inner.name();
        let sep = if inner.contains(':') { ',' } else { ':' };
        format!("{inner}{sep}plug={}/{}", duration_text(self.s.unplug_delay), self.s.unplug_thresh)
    }

    fn add(&mut self, req: IoRequest, now_ns: u64) {
        if self.plugged_at.is_none() && self.inner.queued() == 0 && self.in_flight == 0 && !req.sync {
            self.plugged_at = Some(now_ns);
            self.plugs += 1;
        }
        self.inner.add(req, now_ns);
        if req.sync || self.inner.queued() >= self.s.unplug_thresh {
            self.plugged_at = None;
        }
    }

    fn dispatch(&mut self, now_ns: u64) -> Option<IoRequest> {
        if let Some(t) = self.plugged_at {
            if now_ns < t.saturating_add(self.s.unplug_delay) {
                return None;
            }
            self.plugged_at = None;
        }
        let r = self.inner.dispatch(now_ns)?;
        self.in_flight += 1;
        Some(r)
    }

    fn queued(&self) -> usize {
        self.inner.queued()
    }

    fn merges(&self) -> u64 {
        self.inner.merges()
    }

    fn wake_at(&self) -> Option<u64> {
        match self.plugged_at {
            Some(t) => Some(t.saturating_add(self.s.unplug_delay)),
            None => self.inner.wake_at(),
        }
    }

    fn completed(&mut self, req: &IoRequest, now_ns: u64) {
        self.in_flight = self.in_flight.saturating_sub(1);
        self.plugged_at = None;
        self.inner.completed(req, now_ns);
    }

    fn process_exit(&mut self, pid: u32, now_ns: u64) {
        self.inner.process_exit(pid, now_ns);
    }

    fn take_queued(&mut self) -> Option<Vec<IoRequest>> {
        let v = self.inner.take_queued()?;
        self.plugged_at = None;
        Some(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::{build, Cause, SchedLimits};
    use crate::trace::Op;

    fn ra(block: u64, t: u64) -> IoRequest {
        IoRequest { op: Op::Read, device: 0, block, blocks: 1, sync: false, cause: Cause::Prefetch, arrival_ns: t, pid: 1 }
    }

    fn plugged(spec: &str) -> Box<dyn Scheduler> {
        build(spec, SchedLimits::new(128, 4096)).unwrap()
    }

    #[test]
    fn unplugs_after_the_delay() {
        let mut s = plugged("noop:plug=on");
        s.add(ra(10, 0), 0);
        assert_eq!(s.dispatch(0), None);
        assert_eq!(s.wake_at(), Some(3_000_000));
        assert_eq!(s.dispatch(2_999_999), None);
        assert_eq!(s.dispatch(3_000_000).unwrap().block, 10);
    }

    #[test]
    fn unplugs_at_four_requests() {
        let mut s = plugged("noop:plug=on");
        for (i, b) in [10, 30, 50].into_iter().enumerate() {
            s.add(ra(b, i as u64), i as u64);
            assert_eq!(s.dispatch(i as u64), None, "plugged with {} queued", i + 1);
        }
        s.add(ra(70, 3), 3);
        assert_eq!(s.dispatch(3).unwrap().block, 10);
        // Unplugged: the wrapped scheduler serves the rest at once.
        assert_eq!(s.dispatch(3).unwrap().block, 30);
    }

    #[test]
    fn merged_requests_count_once_and_sync_requests_unplug() {
        // Adjacent readahead requests merge: still one request queued, still plugged.
        let mut s = plugged("cscan:plug=2ms/2");
        s.add(ra(10, 0), 0);
        s.add(ra(11, 0), 0);
        assert_eq!((s.queued(), s.dispatch(0)), (1, None));
        s.add(ra(50, 0), 0);
        assert_eq!(s.dispatch(0).unwrap().blocks, 2);
        // A waited-for read never plugs.
        let mut s = plugged("noop:plug=on");
        let mut r = ra(10, 0);
        r.sync = true;
        s.add(r, 0);
        assert_eq!(s.dispatch(0).unwrap().block, 10);
        assert_eq!(s.name(), "noop:plug=3ms/4");
    }

    #[test]
    fn bad_plug_specs_name_the_parameter() {
        for spec in ["noop:plug=3/4", "noop:plug=maybe", "noop:plug=3ms/0"] {
            let e = build(spec, SchedLimits::new(128, 4096)).err().unwrap().to_string();
            assert!(e.contains("plug"), "{spec}: {e}");
        }
    }
}
