//! Below the page cache: misses and write-back gathered into runs per cause and process, the
//! block-layer stage, the schedulers and their devices, completions coming back up, and the
//! flusher.

use super::*;

impl<P: Policy + ?Sized, F: Prefetcher + ?Sized, S: Scheduler + ?Sized, D: Device + ?Sized> Engine<P, F, S, D> {
    // ----- toward the scheduler -----

    /// Adds a block of `op` to the run of that op being built: the run grows when the block
    /// follows it on its device for the same cause and process, up to the largest request;
    /// otherwise the run goes to the scheduler and a new one starts at the block.
    #[inline]
    pub(super) fn push_block(&mut self, op: Op, device: u32, block: u64, cause: Cause, sync: bool, pid: u32) {
        let write = op.is_write();
        if write {
            self.c.cache.writeback_blocks += 1;
        }
        let max = self.s.resolved.max_request_blocks;
        let run = if write { &mut self.write_run } else { &mut self.read_run };
        if run.live {
            let r = &mut run.req;
            if r.device == device && r.end() == block && r.cause == cause && r.pid == pid && r.blocks < max {
                r.blocks += 1;
                return;
            }
            // The finished run reaches the scheduler before the new one is stored.
            run.live = false;
            let r = run.req;
            self.to_sched(r);
        }
        let new = Run { req: IoRequest { op, device, block, blocks: 1, sync, cause, arrival_ns: self.now, pid }, live: true };
        if write {
            self.write_run = new;
        } else {
            self.read_run = new;
        }
    }

    /// Hands the runs being built to the scheduler.
    #[inline]
    pub(super) fn flush_runs(&mut self) {
        if self.read_run.live || self.write_run.live {
            self.flush_runs_now();
        }
    }

    #[inline(never)]
    pub(super) fn flush_runs_now(&mut self) {
        if self.read_run.live {
            self.read_run.live = false;
            let r = self.read_run.req;
            self.to_sched(r);
        }
        if self.write_run.live {
            self.write_run.live = false;
            let r = self.write_run.req;
            self.to_sched(r);
        }
    }

    pub(super) fn as_request(&self, r: &IoRequest, time_ns: u64) -> Request {
        Request {
            time_ns,
            offset: r.block * self.s.page_size,
            length: r.blocks as u64 * self.s.page_size,
            pid: r.pid,
            device: r.device,
            op: r.op,
            file: None,
        }
    }

    /// A run leaves the page cache for the block stage or the scheduler. Inlined into its
    /// callers, which have just built or taken the run: passed to a call, the request would
    /// be written to the stack in pieces and read back whole, a load the CPU cannot forward
    /// from those stores (a stall on every run).
    #[inline(always)]
    pub(super) fn to_sched(&mut self, r: IoRequest) {
        self.c.cache.requests_out += 1;
        self.c.cache.blocks_out += r.blocks as u64;
        if self.observe[Boundary::Cache as usize] || self.stage.is_some() {
            self.to_sched_observed(r);
        } else {
            self.sched_add(r);
        }
    }

    /// [`Self::to_sched`] with a cache-boundary observer or a block stage.
    #[inline(never)]
    pub(super) fn to_sched_observed(&mut self, r: IoRequest) {
        if self.observe[Boundary::Cache as usize] {
            let q = self.as_request(&r, self.now);
            self.notify(Boundary::Cache, &q);
        }
        if self.stage.is_some() {
            self.through_stage(r);
        } else {
            self.sched_add(r);
        }
    }

    #[inline]
    pub(super) fn sched_add(&mut self, r: IoRequest) {
        let l = self.lane_index(r.device);
        let lane = &mut self.lanes[l];
        lane.sched_counts.requests_in += 1;
        lane.sched.add(r, self.now);
        lane.holds = true;
        self.kick_due |= lane.in_device < self.s.queue_depth;
    }

    /// Offers `r` to the block stage and carries out what it decided.
    #[inline(never)]
    pub(super) fn through_stage(&mut self, r: IoRequest) {
        let stage = self.stage.as_mut().expect("a stage");
        let mut out = std::mem::take(&mut self.stage_out);
        self.c.blk.requests_in += 1;
        self.c.blk.blocks_in += r.blocks as u64;
        match stage.submit(r, self.now, &mut out) {
            Submit::Pass => {
                self.c.blk.passed += 1;
                self.apply_stage(&mut out);
                self.sched_add(r);
            }
            Submit::Take => {
                self.c.blk.taken += 1;
                self.apply_stage(&mut out);
            }
        }
        self.stage_out = out;
    }

    /// Carries out (and clears) the actions a stage queued.
    pub(super) fn apply_stage(&mut self, out: &mut StageActions) {
        for mut q in out.issue.drain(..) {
            q.arrival_ns = self.now;
            self.c.blk.issued += 1;
            self.c.blk.issued_blocks += q.blocks as u64;
            self.sched_add(q);
        }
        for (q, at) in out.serve.drain(..).chain(out.hold.drain(..)) {
            let slot = slab_put(&mut self.stage_serves, &mut self.stage_serves_free, Some(q));
            self.push(at.max(self.now), Kind::StageServe, slot);
        }
    }

    /// Completes the blocks of `r` (a completing device request) outside the ranges the stage
    /// holds (`holds`, sorted here by block); the held ones complete at their serve events.
    #[inline(never)]
    pub(super) fn complete_blocks_held(&mut self, r: &IoRequest, holds: &mut [(IoRequest, u64)]) {
        holds.sort_by_key(|(q, _)| q.block);
        let mut from = r.block;
        for (q, _) in holds.iter() {
            if q.device != r.device || q.block >= r.end() || q.end() <= from {
                continue;
            }
            if q.block > from {
                self.complete_blocks(&IoRequest { block: from, blocks: (q.block - from) as u32, ..*r });
            }
            from = q.end();
        }
        if from < r.end() {
            self.complete_blocks(&IoRequest { block: from, blocks: (r.end() - from) as u32, ..*r });
        }
    }

    /// A stage's serve event: the blocks of its request are complete now.
    pub(super) fn stage_served(&mut self, slot: u32) {
        let r = self.stage_serves[slot as usize].take().expect("a request being served");
        self.stage_serves_free.push(slot);
        self.c.blk.served += 1;
        self.c.blk.served_blocks += r.blocks as u64;
        self.c.end_ns = self.now;
        self.complete_blocks(&r);
        self.fetch_complete(&r, false);
        self.kick();
    }

    /// Hands requests to the device while it has room.
    #[inline]
    pub(super) fn kick(&mut self) {
        // Nothing to hand over (the common case after a hit): one test, no call.
        if self.kick_due {
            if self.lanes.len() == 1 {
                self.dispatch_to_device(0);
            } else {
                self.kick_lanes();
            }
        }
    }

    #[inline(never)]
    pub(super) fn kick_lanes(&mut self) {
        for l in 0..self.lanes.len() {
            let lane = &self.lanes[l];
            if lane.holds && lane.in_device < self.s.queue_depth {
                self.dispatch_to_device(l);
            }
        }
    }

    #[inline(never)]
    pub(super) fn dispatch_to_device(&mut self, l: usize) {
        // The lane's count of requests in the device, kept here while dispatching (nothing
        // called below reads it).
        let depth = self.s.queue_depth;
        let mut in_device = self.lanes[l].in_device;
        while in_device < depth {
            let lane = &mut self.lanes[l];
            let Some(r) = lane.sched.dispatch(self.now) else { break };
            lane.sched_counts.requests_out += 1;
            lane.sched_counts.blocks_out += r.blocks as u64;
            if self.observe[Boundary::Sched as usize] {
                let q = self.as_request(&r, self.now);
                self.notify(Boundary::Sched, &q);
            }
            let dreq = DeviceRequest {
                op: r.op,
                device: r.device,
                sector: r.block * self.sectors_per_block,
                sectors: r.blocks as u64 * self.sectors_per_block,
            };
            let lane = &mut self.lanes[l];
            // (The drive's answer stays where the call wrote it: moved to another local, it
            // would be read back in wider loads than the call's stores, a stall.)
            let direct = lane.layers.is_empty();
            let service = if direct {
                lane.device.service(&dreq, self.now)
            } else {
                let mut device = DeviceRef(&mut *lane.device);
                let mut below = Below { layers: &mut lane.layers[..], device: &mut device, seen: &mut self.seen };
                let s = below.service(&dreq, self.now);
                for i in 0..self.seen.len() {
                    let (q, s) = self.seen[i];
                    self.device_served(l, &q, &s, r.pid);
                }
                self.seen.clear();
                s
            };
            if direct {
                self.device_served(l, &dreq, &service, r.pid);
            }
            if let Some(stage) = self.stage.as_mut() {
                stage.dispatched(&r, &service, self.now);
            }
            let slot = slab_put(&mut self.in_device, &mut self.in_device_free, Some(r));
            if self.keep_service {
                self.keep_service_of(slot, service);
            }
            in_device += 1;
            self.push(service.finish_ns.max(self.now), Kind::Done, slot);
        }
        let several = self.lanes.len() > 1;
        let lane = &mut self.lanes[l];
        lane.in_device = in_device;
        lane.holds = lane.sched.queued() > 0;
        self.kick_due = several || (lane.holds && in_device < depth);
        if lane.holds && in_device < depth {
            if let Some(t) = lane.sched.wake_at() {
                if lane.wake_armed.map_or(true, |a| a > t) {
                    lane.wake_armed = Some(t);
                    self.push(t.max(self.now), Kind::SchedWake, l as u32);
                }
            }
        }
    }

    /// Keeps the service of the request in device slot `slot`, dispatched now.
    #[cold]
    #[inline(never)]
    pub(super) fn keep_service_of(&mut self, slot: u32, service: Service) {
        let i = slot as usize;
        if self.in_device_service.len() <= i {
            self.in_device_service.resize(i + 1, (service, 0));
        }
        self.in_device_service[i] = (service, self.now);
    }

    /// Accounts a request that reached the device.
    #[inline]
    pub(super) fn device_served(&mut self, l: usize, q: &DeviceRequest, s: &Service, pid: u32) {
        let lane = &mut self.lanes[l];
        let d = &mut lane.counts;
        d.requests += 1;
        let blocks = q.sectors.div_ceil(self.sectors_per_block);
        if q.op.is_write() {
            d.writes += 1;
            d.blocks_written += blocks;
        } else {
            d.reads += 1;
            d.blocks_read += blocks;
        }
        d.busy_ns += s.finish_ns - s.start_ns;
        if s.cache_hit {
            d.cache_hits += 1;
        }
        lane.request_sizes.add(blocks);
        lane.seqs.push(q.device, q.op.is_write(), q.sector, q.sectors, blocks, &mut lane.sequence_sizes);
        if self.observe[Boundary::Device as usize] {
            let r = Request { time_ns: s.start_ns, offset: q.sector * SECTOR, length: q.sectors * SECTOR, pid, device: q.device, op: q.op, file: None };
            self.notify(Boundary::Device, &r);
        }
    }

    /// A dispatched request completed: every block in its range is done.
    pub(super) fn device_done(&mut self, slot: u32) {
        let r = self.in_device[slot as usize].take().expect("request in the device");
        // Its service and dispatch time, read before the slot is freed (kept when needed).
        let kept = if self.keep_service { Some(self.in_device_service[slot as usize]) } else { None };
        self.c.end_ns = self.now;
        let q2c = self.now - r.arrival_ns;
        // Each request in one histogram (reads are the merge of two, at the end).
        let [other_read, write, demand] = &mut self.c.device_response;
        if r.op.is_write() {
            write.record(q2c);
        } else if r.cause == Cause::Demand {
            demand.record(q2c);
        } else {
            other_read.record(q2c);
        }
        if self.latency_log.is_some() {
            let (service, dispatch_ns) = kept.expect("service kept for the latency log");
            self.log_latency(&r, &service, dispatch_ns);
        }
        self.in_device_free.push(slot);
        let l = self.lane_index(r.device);
        let lane = &mut self.lanes[l];
        lane.in_device -= 1;
        // (Below the depth now: the lane can dispatch if it holds requests.)
        self.kick_due |= lane.holds;
        lane.sched.completed(&r, self.now);
        self.charge_process(&r);
        if let Some(stage) = self.stage.as_mut() {
            // The stage hears first, so that it can hold blocks for a copy after the read.
            let (service, _) = kept.expect("service kept for the stage");
            let mut out = std::mem::take(&mut self.stage_out);
            stage.completed(&r, &service, self.now, &mut out);
            if out.hold.is_empty() {
                self.complete_blocks(&r);
            } else {
                self.complete_blocks_held(&r, &mut out.hold);
            }
            self.apply_stage(&mut out);
            self.stage_out = out;
        } else {
            self.complete_blocks(&r);
        }
        self.fetch_complete(&r, true);
        self.kick();
    }

    #[inline(never)]
    pub(super) fn log_latency(&mut self, r: &IoRequest, service: &Service, dispatch_ns: u64) {
        let device = self.trace_device(r.device);
        let spb = self.sectors_per_block;
        if let Some(log) = self.latency_log.as_deref_mut() {
            log.record(r, device, spb, dispatch_ns, service.start_ns, self.now);
        }
    }

    /// The counters a series takes differences of, as they are now.
    pub(super) fn snapshot(&self) -> Snapshot {
        let (mut device_requests, mut device_busy_ns) = (0, 0);
        for l in &self.lanes {
            device_requests += l.counts.requests;
            device_busy_ns += l.counts.busy_ns;
        }
        Snapshot {
            requests: self.c.front.requests,
            completed: self.c.response_read.count() + self.c.response_write.count(),
            accesses: self.c.cache.accesses,
            hits: self.c.cache.hits,
            device_requests,
            device_busy_ns,
        }
    }

    /// An event at `now` past the end of the series' current interval.
    #[inline(never)]
    pub(super) fn series_at(&mut self) {
        let counts = self.snapshot();
        if let Some(s) = self.series.as_deref_mut() {
            s.at(self.now, counts);
        }
    }

    /// Tells the series a request is issued now.
    #[inline(never)]
    pub(super) fn series_issue(&mut self) {
        let counts = self.snapshot();
        if let Some(s) = self.series.as_deref_mut() {
            s.issue(self.now, || counts);
        }
    }

    /// Tells the prefetcher that `r`'s blocks are complete, and issues what it asks for.
    #[inline]
    pub(super) fn fetch_complete(&mut self, r: &IoRequest, by_device: bool) {
        let done = Completion { op: r.op, device: r.device, block: r.block, blocks: r.blocks, cause: r.cause, pid: r.pid, by_device, time_ns: self.now };
        let presence = Presence { policy: &*self.policy, capacity: self.capacity, blocks: &self.blocks, evicted_reads: self.evicted_reads };
        self.fetch_buf.clear();
        self.prefetcher.on_complete(&done, &presence, &mut self.fetch_buf);
        if self.prefetcher_acts {
            self.apply_cache_actions();
        }
        if !self.fetch_buf.is_empty() {
            self.fetches_at_completion(r.pid);
        }
    }

    #[inline(never)]
    pub(super) fn fetches_at_completion(&mut self, pid: u32) {
        self.acting_pid = pid;
        let fetches = std::mem::take(&mut self.fetch_buf);
        for f in &fetches {
            self.prefetch(f, Key::MAX, false, pid);
        }
        self.fetch_buf = fetches;
        self.flush_runs();
    }

    /// Every block in `r`'s range is complete: reads end their flight (a block evicted in
    /// flight is now simply not cached), and the references waiting for them wake. Inlined
    /// into the device completion, which every device request passes (the stage's serve event
    /// is the other caller).
    #[inline(always)]
    pub(super) fn complete_blocks(&mut self, r: &IoRequest) {
        let write = r.op.is_write();
        for b in r.block..r.end() {
            let key = block_key(r.device, b);
            let Some((waiters, was_evicted)) = self.blocks.complete(key, write) else {
                continue;
            };
            if was_evicted {
                self.evicted_reads -= 1;
            }
            self.wake(waiters);
        }
    }

    /// Charges a completed device request to the process it was for.
    #[inline]
    pub(super) fn charge_process(&mut self, r: &IoRequest) {
        let i = if self.last_done_proc.0 == r.pid {
            self.last_done_proc.1
        } else {
            // A pid no process has (a request a block stage made up) is charged to nobody.
            let Some(&i) = self.proc_of.get(&r.pid) else { return };
            self.last_done_proc = (r.pid, i);
            i
        };
        let rt = self.now - r.arrival_ns;
        let d = &mut self.procs[i as usize].device;
        d.requests += 1;
        d.sync_requests += r.sync as u64;
        if r.op.is_write() {
            d.blocks_written += r.blocks as u64;
        } else {
            d.blocks_read += r.blocks as u64;
        }
        d.response_sum += rt as u128;
        d.response_max = d.response_max.max(rt);
    }

    /// The flusher: writes back blocks dirty for longer than the expiry, then sleeps one
    /// interval (while the run goes on).
    pub(super) fn flush_expired(&mut self) {
        self.flush_armed = false;
        let expire = self.s.resolved.dirty_expire_ns;
        self.flush_buf.clear();
        while let Some(&(t, key)) = self.dirty_fifo.front() {
            if t.saturating_add(expire) > self.now {
                break;
            }
            self.dirty_fifo.pop_front();
            let expired = self.blocks.update(key, |st| {
                let expired = st.flags & DIRTY != 0 && st.dirty_since == t;
                if expired {
                    st.flags &= !DIRTY;
                }
                expired.then_some(st.dirty_pid)
            });
            if let Some(Some(pid)) = expired {
                self.flush_buf.push((key, pid));
            }
        }
        // Disk order, so contiguous dirty blocks of one process leave as one request.
        let mut keys = std::mem::take(&mut self.flush_buf);
        keys.sort_unstable_by_key(|&(k, _)| k);
        for &(k, pid) in &keys {
            let (device, block) = split_block_key(k);
            self.c.cache.writeback_flush += 1;
            self.push_block(Op::Write, device, block, Cause::Writeback, false, pid);
        }
        self.flush_buf = keys;
        self.flush_runs();
        self.kick();
        if !self.dirty_fifo.is_empty() && !self.finished() {
            self.flush_armed = true;
            let iv = self.s.resolved.flush_interval_ns;
            self.push(self.now + iv, Kind::Flush, 0);
        }
    }
}
