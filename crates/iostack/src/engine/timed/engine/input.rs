//! Trace input and replay: reading the trace in batches, starting each process at its trace
//! time (closed loop) or each request at its arrival (open loop), and issuing a process's next
//! request when its previous one completes.

use super::*;

impl<P: Policy + ?Sized, F: Prefetcher + ?Sized, S: Scheduler + ?Sized, D: Device + ?Sized> Engine<P, F, S, D> {
    // ----- trace input -----

    /// The trace's next request (a copy of the batch's entry, see [`Engine::next_index`]).
    #[inline(always)]
    pub(super) fn next_request(&mut self, reader: &mut dyn crate::trace::TraceReader) -> InputResult<Option<Request>> {
        Ok(self.next_index(reader)?.map(|(i, t)| self.taken(i, t)))
    }

    /// The request at place `i` of the batch, taken with trace time `t` (see
    /// [`Engine::next_index`]).
    #[inline(always)]
    pub(super) fn taken(&self, i: usize, t: u64) -> Request {
        Request { time_ns: t, ..self.batch[i] }
    }

    /// Takes the trace's next request: its place in the batch and its time, made relative to
    /// the first request's and never going back; `None` at the end of the trace. (The place,
    /// not the request: the callers on the per-request path copy it once, where they use it,
    /// rather than through this function's result. The batch keeps the raw time: writing the
    /// new one there and then copying the request would read the 8-byte store back in a wider
    /// load, which the CPU cannot forward, a stall on every request.)
    #[inline(always)]
    pub(super) fn next_index(&mut self, reader: &mut dyn crate::trace::TraceReader) -> InputResult<Option<(usize, u64)>> {
        if self.batch_pos == self.batch_stop && !self.at_stop(reader)? {
            return Ok(None);
        }
        let i = self.batch_pos;
        self.batch_pos += 1;
        // Let the policy start loading the index cell some requests ahead and the entry a few
        // requests ahead, in two stages so neither stalls, and the entry's list neighbours (which
        // a hit's relinking writes) once the entry has arrived (memory prefetches only; no effect
        // on results).
        let keys = &self.scan.keys;
        if let Some(&k) = keys.get(self.batch_pos + 8) {
            self.policy.prefetch_index(k);
        }
        if let Some(&k) = keys.get(self.batch_pos + 3) {
            self.policy.prefetch(k);
        }
        if let Some(&k) = keys.get(self.batch_pos) {
            self.policy.prefetch_neighbours(k);
        }
        // Trace time relative to the first request, never going back.
        let raw = self.batch[i].time_ns;
        let t0 = *self.t0.get_or_insert(raw);
        let t = raw.saturating_sub(t0).max(self.last_trace_ns);
        self.last_trace_ns = t;
        Ok(Some((i, t)))
    }

    /// The reader got to `batch_stop`: reads the next batch at the end of this one, and places
    /// the process events due before the next request; `false` at the end of the trace (its
    /// remaining events placed).
    #[cold]
    #[inline(never)]
    pub(super) fn at_stop(&mut self, reader: &mut dyn crate::trace::TraceReader) -> InputResult<bool> {
        if self.batch_pos == self.batch.len() && !self.refill(reader)? {
            if self.proc_events.is_some() {
                self.place_events(u64::MAX);
            }
            return Ok(false);
        }
        if self.proc_events.is_some() {
            self.place_events(self.requests_taken());
            self.set_batch_stop();
        }
        Ok(true)
    }

    /// Requests of the trace taken so far (those read, less those left in the batch).
    #[inline]
    pub(super) fn requests_taken(&self) -> u64 {
        self.order.read - (self.batch.len() - self.batch_pos) as u64
    }

    /// Stops the reader at the end of the batch, or before the request of the next process
    /// event if that comes first.
    pub(super) fn set_batch_stop(&mut self) {
        let len = self.batch.len();
        self.batch_stop = match self.proc_events.as_ref().and_then(|pe| pe.next_due()) {
            Some(before) => {
                // The trace's number of the batch's first request.
                let first = self.order.read - len as u64;
                (before.saturating_sub(first).min(len as u64) as usize).max(self.batch_pos)
            }
            None => len,
        };
    }

    /// Reads the next batch of the trace; `false` at its end.
    #[cold]
    #[inline(never)]
    pub(super) fn refill(&mut self, reader: &mut dyn crate::trace::TraceReader) -> InputResult<bool> {
        if self.input_done {
            return Ok(false);
        }
        self.batch.clear();
        self.batch_pos = 0;
        self.ahead_pos = 0;
        if std::mem::take(&mut self.ahead_waits) {
            // The look-ahead stopped at the end of the last batch: it goes on in this one.
            self.push(self.now, Kind::Discover, 0);
        }
        let n = reader.read_batch(&mut self.batch, INPUT_BATCH)?;
        self.take_proc_events(reader);
        self.batch_stop = 0;
        if n == 0 {
            self.input_done = true;
            self.skipped = reader.skipped();
            return Ok(false);
        }
        // What the per-request path needs to know about the batch (the key of each request's
        // first block, for the memory hints above; the order of trace times; one pid or
        // several), from one pass over it: made on the reader's thread when it can
        // (`BackgroundReader::scanning`), else here. The same either way.
        if !reader.take_scan(&mut self.scan) {
            self.scan.scan(&self.batch, self.pages, self.order.max_raw_ns);
        }
        let scan = &self.scan;
        // Device ids the device map does not name: checked a batch at a time.
        if self.mapped && scan.max_device as usize >= self.lanes.len() {
            let lanes = self.lanes.len();
            let i = self.batch.iter().position(|r| r.device as usize >= lanes).expect("the batch's largest device");
            let r = self.batch[i];
            self.order.read += i as u64 + 1;
            return Err(self.unmapped_device(&r));
        }
        let t0 = self.t0.unwrap_or(self.batch[0].time_ns);
        let o = &mut self.order;
        if let (None, Some((i, prev_max))) = (o.first_backwards, scan.first_backwards) {
            let r = &self.batch[i];
            o.first_backwards = Some((o.read + i as u64 + 1, r.pid, r.time_ns.saturating_sub(t0), prev_max - t0));
        }
        o.backwards += scan.backwards;
        o.max_raw_ns = scan.max_raw_ns;
        o.read += self.batch.len() as u64;
        self.batch_one_proc = if scan.backwards > 0 {
            None
        } else {
            match self.s.processes {
                Processes::Trace => scan.one_pid.then_some(self.batch[0].pid),
                Processes::One => Some(0),
                Processes::Device => None,
            }
        };
        self.set_batch_stop();
        Ok(true)
    }

    /// The process `r` is for, as the run sees it.
    #[inline]
    pub(super) fn pid_of(&self, r: &Request) -> u32 {
        match self.s.processes {
            Processes::Trace => r.pid,
            Processes::One => 0,
            Processes::Device => r.device,
        }
    }

    /// The index of the process `r` is for, which it creates when it meets it first. Traces
    /// come in runs of one process: the last one looked up is checked inline, the map only out
    /// of line.
    #[inline(always)]
    pub(super) fn proc_index(&mut self, r: &Request) -> u32 {
        let pid = self.pid_of(r);
        if self.last_proc.0 == pid && !self.procs.is_empty() {
            return self.last_proc.1;
        }
        self.index_of_pid(pid)
    }

    /// The index of process `pid`, created if new (out of line: the common case, the process
    /// of the request before, is the caller's).
    #[inline(never)]
    pub(super) fn index_of_pid(&mut self, pid: u32) -> u32 {
        let i = match self.proc_of.get(&pid) {
            Some(&i) => i,
            None => {
                let i = self.procs.len() as u32;
                self.procs.push(Proc { pid, ..Default::default() });
                self.proc_of.insert(pid, i);
                i
            }
        };
        self.last_proc = (pid, i);
        i
    }

    /// Closed loop: reads the trace until process `want` has a request queued (or the trace
    /// ends). Processes met on the way start at their first request's trace time, or now if
    /// that has passed.
    pub(super) fn fill(&mut self, reader: &mut dyn crate::trace::TraceReader, want: Option<u32>) -> InputResult<()> {
        loop {
            if let Some(p) = want {
                if !self.procs[p as usize].queue.is_empty() {
                    return Ok(());
                }
            }
            let Some(r) = self.next_request(reader)? else { return Ok(()) };
            let p = self.proc_index(&r);
            self.enqueue(p, Queued::Request(r));
            if want.is_none() {
                return Ok(());
            }
        }
    }

    /// Closed loop: looks ahead in the trace, up to the present, for processes whose first
    /// request is due, so that each starts at its trace time however far the running processes
    /// have read. The look-ahead scans the batch in memory without taking requests from it;
    /// only when it finds a new process does the reader take the requests up to that one's
    /// first (queueing the others' on the way, as `fill` does). It then waits, as a `Discover`
    /// event, for the trace time of the next request it has not seen. At the end of the batch
    /// it waits until the running processes have taken the batch's requests (`refill` wakes it):
    /// so the look-ahead holds no request beyond the batch, and a process whose first request
    /// lies in a later batch starts when the others have issued the requests of this one.
    pub(super) fn discover(&mut self, reader: &mut dyn crate::trace::TraceReader) -> InputResult<()> {
        let t0 = self.t0.unwrap_or(0);
        // A request is due when its time relative to the first is no later than now, and the
        // reader has not raised the times past now (it never lets them go back).
        let due_raw = t0.saturating_add(self.now);
        loop {
            let start = self.ahead_pos.max(self.batch_pos);
            if start == self.batch.len() {
                if self.batch_pos < self.batch.len() {
                    self.ahead_pos = start;
                    self.ahead_waits = true;
                    return Ok(());
                }
                if !self.refill(reader)? {
                    return Ok(());
                }
                continue;
            }
            // Most requests are due ones of the process last met: skip them in one tight scan.
            let known = self.last_proc.0;
            let rest = &self.batch[start..];
            // (The choice of process key is made once, outside the scan.)
            let n = if self.last_trace_ns > self.now {
                0
            } else if self.batch_one_proc == Some(known) {
                // Every request is `known`'s and the times do not go back: the first not due.
                rest.partition_point(|r| r.time_ns <= due_raw)
            } else {
                let other = match self.s.processes {
                    Processes::Trace => rest.iter().position(|r| r.time_ns > due_raw || r.pid != known),
                    Processes::One => rest.iter().position(|r| r.time_ns > due_raw),
                    Processes::Device => rest.iter().position(|r| r.time_ns > due_raw || r.device != known),
                };
                other.unwrap_or(rest.len())
            };
            let j = start + n;
            self.ahead_pos = j;
            let Some(&r) = self.batch.get(j) else { continue };
            let t = r.time_ns.saturating_sub(t0).max(self.last_trace_ns);
            if t > self.now {
                self.push(t, Kind::Discover, 0);
                return Ok(());
            }
            self.ahead_pos = j + 1;
            if !self.proc_of.contains_key(&self.pid_of(&r)) {
                // A process whose first request is due: take the requests up to it.
                while self.batch_pos <= j {
                    let Some(r) = self.next_request(reader)? else { break };
                    let p = self.proc_index(&r);
                    self.enqueue(p, Queued::Request(r));
                }
            }
        }
    }

    /// Queues `q` for process `p`; a process met for the first time starts at its trace time,
    /// or now if that has passed.
    #[inline]
    pub(super) fn enqueue(&mut self, p: u32, q: Queued) {
        let proc = &mut self.procs[p as usize];
        let first = !proc.started && proc.queue.is_empty();
        proc.queue.push_back(q);
        if first && !proc.unborn {
            let t = q.time_ns();
            if self.now > t.saturating_add(LATE_START_NS).max(t.saturating_mul(2)) {
                self.late_start(p, t);
            }
            self.push(t.max(self.now), Kind::Issue, p);
        }
    }

    /// Process `p`, met now, should have started at `trace_ns`: a late start if others run.
    #[cold]
    pub(super) fn late_start(&mut self, p: u32, trace_ns: u64) {
        if self.procs.iter().any(|q| q.started) {
            self.order.late += 1;
            if self.order.first_late.is_none() {
                self.order.first_late = Some((self.procs[p as usize].pid, trace_ns, self.now));
            }
        }
    }

    /// Closed loop, after process `p`'s request completed (the only one that did): issues its
    /// next request here if the event queue would hand that issue back straight away (no other
    /// event due at or before it), which is what most completions lead to; the event order, and so
    /// every result, is the same as going through the queue. Returns whether it issued one
    /// (`false`: the issue was left to the queue, or `p` has no more requests). Inlined into its
    /// one caller; the common case, `p`'s next request straight from the trace, goes to
    /// `start_request` as read, without passing through the queue's entry type.
    #[inline(always)]
    pub(super) fn issue_next_inline(&mut self, reader: &mut dyn crate::trace::TraceReader, p: u32) -> InputResult<bool> {
        debug_assert_eq!(self.ready, [p]);
        self.ready.clear();
        // p's next request: queued already, else the trace's next if it is p's, else what
        // `fill` finds (queueing the other processes' requests on the way).
        if self.procs[p as usize].queue.is_empty() {
            if let Some((i, t)) = self.next_index(reader)? {
                let r = self.taken(i, t);
                let q = self.proc_index(&r);
                // (Reading may have placed an event of p's, which comes first.)
                if q == p && self.procs[p as usize].queue.is_empty() {
                    if !self.issue_due(p, r.time_ns) {
                        self.procs[p as usize].queue.push_back(Queued::Request(r));
                        return Ok(false);
                    }
                    self.start_request(p, r);
                    return Ok(true);
                }
                self.enqueue(q, Queued::Request(r));
                self.fill(reader, Some(p))?;
            }
            // At the end of the trace, reading may have placed an event of p's.
        }
        let Some(next) = self.procs[p as usize].queue.pop_front() else {
            if self.proc_events.is_some() {
                self.proc_ended(p);
            }
            return Ok(false);
        };
        if !self.issue_due(p, next.time_ns()) {
            self.procs[p as usize].queue.push_front(next);
            return Ok(false);
        }
        self.start_queued(p, next);
        Ok(true)
    }

    /// Closed loop: whether process `p` issues what it has next (at trace time `next_ns`) now,
    /// after its think time, with no other event due first; then the clock is at its issue.
    /// Otherwise the issue is left to the event queue (the caller queues the request).
    #[inline(always)]
    pub(super) fn issue_due(&mut self, p: u32, next_ns: u64) -> bool {
        let think = self.think_before(p, next_ns);
        if think > 0 && self.cpus.is_some() {
            self.compute(p, think);
            return false;
        }
        let t = self.now + think;
        let other_due = self.inline.is_some_and(|e| e.time <= t) || self.heap.peek().is_some_and(|Reverse(e)| e.time <= t);
        if other_due {
            self.push(t, Kind::Issue, p);
            return false;
        }
        // The sequence number the issue event would have taken.
        self.seq += 1;
        self.now = t;
        true
    }

    /// Closed loop, after an event: the processes whose request completed continue (here, after
    /// the event, so that trace reading errors propagate). A lone one issues its next requests
    /// itself for as long as no other event comes first (see `issue_next_inline`); otherwise
    /// each gets an issue event.
    pub(super) fn continue_ready(&mut self, reader: &mut dyn crate::trace::TraceReader) -> InputResult<()> {
        loop {
            while let [p] = self.ready[..] {
                if !self.issue_next_inline(reader, p)? {
                    break;
                }
            }
            if self.ready.is_empty() {
                return Ok(());
            }
            let mut ready = std::mem::take(&mut self.ready);
            for &p in &ready {
                self.fill(reader, Some(p))?;
                self.continue_proc(p);
            }
            ready.clear();
            // Processes a process event woke (a child's exit) go on too.
            let woken = std::mem::replace(&mut self.ready, ready);
            if woken.is_empty() {
                return Ok(());
            }
            self.ready.extend_from_slice(&woken);
        }
    }
}
