//! The locality probes of `iostack run`'s four boundaries, sharing one probe among boundaries
//! while they see the same stream.
//!
//! Below the page cache the streams of the boundaries are often the same: with no block stage,
//! no merging and no reordering in the scheduler, the scheduler's output is the page cache's,
//! and with one request in the device at a time the device sees the scheduler's output in the
//! same order. Measuring each copy of a stream costs as much as measuring the first, so the
//! boundaries start out as one group with one probe, and a group splits when one of its
//! boundaries sees something else.
//!
//! The boundaries of a group see the same requests at different moments (a request crosses the
//! scheduler before it reaches the device), so the group keeps the requests its leading members
//! have seen and the others have not yet confirmed, and feeds its probe a request only when every
//! member has seen it. A member that sees a request different from the group's at its position
//! leaves with a copy of the probe taken at the last request all had seen (made on the probe's
//! thread, in order: [`super::ProbeThread::fork`]) plus the requests it had confirmed since; the
//! members behind it, downstream in the data path, that have not yet seen the differing request
//! go with it (the device follows the scheduler, not the page cache). A member that falls far
//! behind the others (more than [`MAX_LAG`] requests) leaves the same way, so a group's memory is
//! bounded. At the end each member's report is its group's probe after exactly the requests the
//! member saw.
//!
//! Every decision depends only on the order in which the engine notifies the boundaries, which
//! is deterministic, and each probe measures exactly the stream of the members it reports, so
//! every report is byte for byte the one a probe per boundary would make.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use super::engine::BoundaryObserver;
use super::observers::{ProbeThread, MAX_STREAMS};
use crate::metrics::probe_request::Recorder;
use crate::metrics::{LocalityReport, ProbeConfig, ProbeRequest};
use crate::trace::Request;

/// Requests a group holds for members that lag behind its leader; a member further behind
/// leaves the group.
pub const MAX_LAG: usize = 1 << 14;

/// Requests every member has seen that a group gathers before it hands them to its probe in
/// one copy (the data path's boundaries are usually a request or two apart, so handing each
/// over as it is confirmed would cost the engine's thread a queue operation per request).
const FEED_CHUNK: usize = 64;

/// One probe (a stream of a probe thread) and the members whose streams it measures.
struct Group {
    /// The probe thread ([`ProbeSet::threads`]) and its stream that measures the group.
    thread: usize,
    stream: usize,
    /// Requests some member has seen and another not yet, oldest first, after up to
    /// [`FEED_CHUNK`] that every member has seen and the probe has not been fed yet.
    unconfirmed: VecDeque<ProbeRequest>,
    /// Members and how many of `unconfirmed` each has seen (in the data path's order).
    members: Vec<(usize, usize)>,
}

impl Group {
    /// Feeds the probe the requests every member has seen.
    fn feed_confirmed(&mut self, threads: &mut [ProbeThread]) {
        let done = self.members.iter().map(|&(_, seen)| seen).min().unwrap_or(0);
        if done == 0 {
            return;
        }
        let (front, back) = self.unconfirmed.as_slices();
        let split = done.min(front.len());
        let probe = &mut threads[self.thread];
        probe.observe_all_in(self.stream, &front[..split]);
        probe.observe_all_in(self.stream, &back[..done - split]);
        self.unconfirmed.drain(..done);
        for (_, seen) in self.members.iter_mut() {
            *seen -= done;
        }
    }
}

/// The probes of a set of boundaries (members `0..n`, in the data path's order).
pub struct ProbeSet {
    /// Makes the records the probes read ([`ProbeRequest`]).
    recorder: Recorder,
    /// The probe threads; a thread measures one stream per group it serves.
    threads: Vec<ProbeThread>,
    /// Streams of each thread given to a group so far.
    used: Vec<usize>,
    groups: Vec<Group>,
    /// The group of each member.
    group_of: Vec<usize>,
    /// Reports, once made.
    reports: Option<Vec<LocalityReport>>,
    /// [`MAX_LAG`] (smaller in tests).
    max_lag: usize,
}

impl ProbeSet {
    pub fn new(config: ProbeConfig, members: usize) -> ProbeSet {
        let group = Group { thread: 0, stream: 0, unconfirmed: VecDeque::new(), members: (0..members).map(|m| (m, 0)).collect() };
        ProbeSet { recorder: Recorder::new(&config), threads: vec![ProbeThread::new(config)], used: vec![1], groups: vec![group], group_of: vec![0; members], reports: None, max_lag: MAX_LAG }
    }

    /// Member `m` saw request `r`.
    #[inline]
    pub fn observe(&mut self, m: usize, r: &Request) {
        let g = self.group_of[m];
        let group = &mut self.groups[g];
        if group.members.len() == 1 {
            self.threads[group.thread].observe_request_in(group.stream, r);
            return;
        }
        // Requests are kept, compared and handed over as what the probes read of them: equal
        // records are the same to a probe.
        let r = &self.recorder.record(r);
        let at = group.members.iter().position(|&(x, _)| x == m).expect("a member of its group");
        let seen = group.members[at].1;
        if seen == group.unconfirmed.len() {
            // The leader: the others have not seen this request, so nothing is confirmed.
            group.unconfirmed.push_back(*r);
            group.members[at].1 += 1;
            if group.unconfirmed.len() > self.max_lag {
                group.feed_confirmed(&mut self.threads);
                if group.unconfirmed.len() > self.max_lag {
                    self.drop_laggards(g);
                }
            }
            return;
        }
        if group.unconfirmed[seen] != *r {
            self.split(g, m, r);
            return;
        }
        group.members[at].1 += 1;
        // Only the member furthest behind confirms requests, and its count is then the number
        // confirmed; they go to the probe a chunk at a time.
        if seen + 1 >= FEED_CHUNK && group.members.iter().all(|&(x, s)| x == m || s > seen) {
            group.feed_confirmed(&mut self.threads);
        }
    }

    /// Member `m` of group `g` saw `r`, which differs from the group's request at its position:
    /// it leaves with the members downstream of it that have not yet seen that position.
    #[cold]
    fn split(&mut self, g: usize, m: usize, r: &ProbeRequest) {
        let seen = self.groups[g].members.iter().find(|&&(x, _)| x == m).expect("a member").1;
        let leaving: Vec<(usize, usize)> = self.groups[g].members.iter().copied().filter(|&(x, s)| x == m || (x > m && s <= seen)).collect();
        let mut group = self.leave(g, &leaving);
        group.unconfirmed.truncate(seen);
        group.unconfirmed.push_back(*r);
        for (x, s) in group.members.iter_mut() {
            if *x == m {
                *s += 1;
            }
        }
        group.feed_confirmed(&mut self.threads);
        self.groups.push(group);
        self.groups[g].feed_confirmed(&mut self.threads);
    }

    /// The members of group `g` furthest behind leave it, so that it holds no more requests.
    #[cold]
    fn drop_laggards(&mut self, g: usize) {
        let least = self.groups[g].members.iter().map(|&(_, s)| s).min().unwrap_or(0);
        let leaving: Vec<(usize, usize)> = self.groups[g].members.iter().copied().filter(|&(_, s)| s == least).collect();
        let mut group = self.leave(g, &leaving);
        group.unconfirmed.truncate(least);
        group.feed_confirmed(&mut self.threads);
        self.groups.push(group);
        self.groups[g].feed_confirmed(&mut self.threads);
    }

    /// Takes `leaving` out of group `g` into a new group (not yet added, with a copy of `g`'s
    /// unconfirmed requests) whose probe is a copy of `g`'s as it is now; the new group's index
    /// is the next one.
    ///
    /// Where the copy measures: the front end's stream (member 0) has more references than any
    /// other and keeps a thread of its own; the streams below it are the same data a moment
    /// later, so the group without the front end (whichever leaves) measures on in a free stream
    /// of a thread that does not serve the front end (its own thread's, else another's), sharing
    /// that thread's key table (one cache miss per key for both streams), or else in a new
    /// thread of [`MAX_STREAMS`] streams ([`ProbeSet::place_copy`]).
    fn leave(&mut self, g: usize, leaving: &[(usize, usize)]) -> Group {
        let new = self.groups.len();
        let from = &mut self.groups[g];
        from.members.retain(|(x, _)| !leaving.iter().any(|(y, _)| y == x));
        debug_assert!(!from.members.is_empty(), "a group keeps the member whose request differed");
        for &(x, _) in leaving {
            self.group_of[x] = new;
        }
        let (t, s) = (from.thread, from.stream);
        let unconfirmed = from.unconfirmed.clone();
        let serves_front = |members: &[(usize, usize)]| members.iter().any(|&(x, _)| x == 0);
        // Both groups measure on from the same state; the copy goes to the one without the
        // front end, so that the front end's stream stays alone on its thread.
        let move_staying = serves_front(leaving);
        let (u, stream) = self.place_copy(t, s, move_staying);
        if move_staying {
            self.groups[g].thread = u;
            self.groups[g].stream = stream;
            return Group { thread: t, stream: s, unconfirmed, members: leaving.to_vec() };
        }
        Group { thread: u, stream, unconfirmed, members: leaving.to_vec() }
    }

    /// Makes a copy of stream `s` of thread `t`, as it is now, for a group that does not serve
    /// the front end: in a free stream of a thread that serves no front end (`t` itself unless
    /// `t_keeps_front`, else another), or in a new thread. Returns its thread and stream.
    fn place_copy(&mut self, t: usize, s: usize, t_keeps_front: bool) -> (usize, usize) {
        let free = |u: usize| {
            self.used[u] < self.threads[u].streams()
                && !(u == t && t_keeps_front)
                && !self.groups.iter().any(|gr| gr.thread == u && gr.members.iter().any(|&(x, _)| x == 0))
        };
        if let Some(u) = std::iter::once(t).chain(0..self.threads.len()).find(|&u| free(u)) {
            let stream = self.used[u];
            self.used[u] += 1;
            if u == t {
                self.threads[t].copy_stream(s, stream);
            } else {
                let (a, b) = self.threads.split_at_mut(t.max(u));
                let (target, source) = if u < t { (&mut a[u], &mut b[0]) } else { (&mut b[0], &mut a[t]) };
                target.adopt(stream, source, s);
            }
            return (u, stream);
        }
        let streams = MAX_STREAMS.max(self.threads[t].streams());
        let thread = self.threads[t].fork(streams);
        // The copy's other streams hold copies of the source's: only a fresh one may be given.
        self.used.push(if self.threads[t].streams() == 1 { 1 } else { streams });
        self.threads.push(thread);
        (self.threads.len() - 1, s)
    }

    /// Each member's report, after every request it saw (the probes' threads end).
    pub fn reports(&mut self) -> &[LocalityReport] {
        if self.reports.is_none() {
            let mut reports: Vec<Option<LocalityReport>> = vec![None; self.group_of.len()];
            for group in &mut self.groups {
                let mut members = group.members.clone();
                members.sort_by_key(|&(_, seen)| seen);
                let probe = self.threads[group.thread].probe();
                let mut fed = 0;
                for (m, seen) in members {
                    for r in group.unconfirmed.range(fed..seen) {
                        probe.observe_in(group.stream, r);
                    }
                    fed = seen;
                    reports[m] = Some(probe.report_of(group.stream));
                }
            }
            self.reports = Some(reports.into_iter().map(|r| r.expect("every member is in a group")).collect());
        }
        self.reports.as_deref().expect("made above")
    }

    /// Probe threads started so far (for tests and diagnostics).
    pub fn threads(&self) -> usize {
        self.threads.len()
    }

    /// Groups the members form now (for tests and diagnostics): each group's members.
    pub fn groups(&self) -> Vec<Vec<usize>> {
        self.groups.iter().map(|g| g.members.iter().map(|&(m, _)| m).collect()).collect()
    }
}

/// Member `member` of a shared [`ProbeSet`], as the observer of its boundary.
pub struct SetMember {
    pub set: Rc<RefCell<ProbeSet>>,
    pub member: usize,
}

impl BoundaryObserver for SetMember {
    #[inline]
    fn observe(&mut self, r: &Request) {
        self.set.borrow_mut().observe(self.member, r);
    }
    fn finish(&mut self) -> Result<serde_json::Value, String> {
        Ok(serde_json::Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::LocalityProbe;

    /// Feeds `streams[m]` to member `m` in the interleaving `order` (member numbers, each
    /// appearing once per request of its stream), and checks every report against a probe of
    /// its own.
    fn check(streams: &[Vec<Request>], order: &[usize], config: ProbeConfig, lag: Option<usize>) -> Vec<Vec<usize>> {
        let mut set = ProbeSet::new(config, streams.len());
        if let Some(l) = lag {
            set.max_lag = l;
        }
        let mut next = vec![0; streams.len()];
        for &m in order {
            set.observe(m, &streams[m][next[m]]);
            next[m] += 1;
        }
        let groups = set.groups();
        let reports = set.reports().to_vec();
        for (m, s) in streams.iter().enumerate() {
            let mut own = LocalityProbe::new(config);
            for r in s {
                own.observe_request(r);
            }
            assert_eq!(reports[m], own.report(), "member {m}");
        }
        groups
    }

    /// The data path's order: each request of `base` crosses member 0, then 1, ... with `delay`
    /// requests in flight between neighbours.
    fn pipelined(lengths: &[usize], delay: usize) -> Vec<usize> {
        let mut order = Vec::new();
        let longest = lengths.iter().copied().max().unwrap_or(0);
        for i in 0..longest + delay * lengths.len() {
            for (m, &n) in lengths.iter().enumerate() {
                if let Some(j) = i.checked_sub(m * delay) {
                    if j < n {
                        order.push(m);
                    }
                }
            }
        }
        order
    }

    fn stream(n: usize, seed: u64) -> Vec<Request> {
        (0..n as u64).map(|i| Request::read(((i * 7 + seed) * 2_654_435_761 % 5_000) * 4096, 4096 * (1 + i % 3)).at(i * 1000)).collect()
    }

    #[test]
    fn identical_streams_share_one_probe() {
        let s = stream(5_000, 1);
        let streams = vec![s.clone(), s.clone(), s.clone()];
        let groups = check(&streams, &pipelined(&[5_000; 3], 3), ProbeConfig::default(), None);
        assert_eq!(groups, vec![vec![0, 1, 2]]);
    }

    #[test]
    fn a_diverging_member_takes_the_members_behind_it() {
        // Member 1 differs from 0 from request 2,000; member 2 follows 1.
        let a = stream(5_000, 1);
        let mut b = a.clone();
        for r in &mut b[2_000..] {
            r.offset += 4096;
        }
        let groups = check(&[a, b.clone(), b], &pipelined(&[5_000; 3], 2), ProbeConfig::default(), None);
        assert_eq!(groups, vec![vec![0], vec![1, 2]]);
    }

    #[test]
    fn streams_below_the_front_end_share_a_thread() {
        // Member 2 differs from 0 and 1 first (and takes 3), then 1 from 0: the three streams
        // run on two threads, 1 and 2 sharing one.
        let a = stream(6_000, 7);
        let mut b = a.clone();
        b[3_000].offset += 4096;
        let mut c = b.clone();
        c[1_000].length = 512;
        let mut set_groups = check(&[a, b, c.clone(), c], &pipelined(&[6_000; 4], 2), ProbeConfig::default(), None);
        set_groups.sort();
        assert_eq!(set_groups, vec![vec![0], vec![1], vec![2, 3]]);
        let mut set = ProbeSet::new(ProbeConfig::default(), 4);
        let s = stream(3_000, 7);
        let mut t = s.clone();
        t[1_000].length = 512;
        let mut u = t.clone();
        u[2_000].offset += 4096;
        let streams = [s.clone(), t, u.clone(), u];
        let mut next = [0; 4];
        for m in pipelined(&[3_000; 4], 2) {
            set.observe(m, &streams[m][next[m]]);
            next[m] += 1;
        }
        assert_eq!(set.groups().len(), 3);
        assert_eq!(set.threads(), 2);
    }

    #[test]
    fn the_last_member_diverging_leaves_alone() {
        let a = stream(4_000, 2);
        let mut c = a.clone();
        c[3_000].length = 512;
        let groups = check(&[a.clone(), a, c], &pipelined(&[4_000; 3], 5), ProbeConfig::default(), None);
        assert_eq!(groups, vec![vec![0, 1], vec![2]]);
    }

    #[test]
    fn shorter_and_longer_streams() {
        // Member 1 sees a prefix of 0's stream; member 2 sees more than 0 (extra requests).
        let a = stream(3_000, 3);
        let b = a[..1_000].to_vec();
        let mut c = a.clone();
        c.extend(stream(500, 9));
        let order = pipelined(&[3_000, 1_000, 3_500], 4);
        check(&[a, b, c], &order, ProbeConfig::default(), None);
    }

    #[test]
    fn a_member_far_behind_leaves_and_memory_stays_bounded() {
        let a = stream(6_000, 4);
        let streams = vec![a.clone(), a];
        // Member 1 sees nothing until member 0 has seen everything.
        let order: Vec<usize> = std::iter::repeat_n(0, 6_000).chain(std::iter::repeat_n(1, 6_000)).collect();
        let groups = check(&streams, &order, ProbeConfig::default(), Some(1_000));
        assert_eq!(groups.len(), 2);
    }

    #[test]
    fn time_intervals_compare_times() {
        let a = stream(2_000, 5);
        let mut b = a.clone();
        for r in &mut b {
            r.time_ns += 10;
        }
        let by_time = ProbeConfig { interval: crate::metrics::IntervalSpec::Time(50_000), ..Default::default() };
        let groups = check(&[a.clone(), b.clone()], &pipelined(&[2_000; 2], 1), by_time, None);
        assert_eq!(groups.len(), 2);
        // With request-count intervals the times do not matter: one probe.
        let groups = check(&[a, b], &pipelined(&[2_000; 2], 1), ProbeConfig::default(), None);
        assert_eq!(groups.len(), 1);
    }

    proptest::proptest! {
        #[test]
        fn any_interleaving_reports_as_separate_probes(
            changes in proptest::collection::vec((0usize..4, 0usize..300, 0u64..8), 0..6),
            delays in proptest::collection::vec(0usize..6, 4),
            lag in 1usize..64,
        ) {
            let base = stream(300, 6);
            let mut streams = vec![base.clone(), base.clone(), base.clone(), base];
            for &(m, at, by) in &changes {
                streams[m][at].offset = by * 4096;
            }
            // Each member m after its predecessor by delays[m] requests.
            let mut order = Vec::new();
            let start: Vec<usize> = delays.iter().scan(0, |acc, &d| { *acc += d; Some(*acc) }).collect();
            for i in 0..300 + start[3] + 1 {
                for m in 0..4 {
                    if i >= start[m] && i - start[m] < 300 {
                        order.push(m);
                    }
                }
            }
            check(&streams, &order, ProbeConfig::default(), Some(lag));
        }
    }
}
