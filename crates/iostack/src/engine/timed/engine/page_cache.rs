//! A request through the page cache: each block looked up, read or written, prefetches
//! around demand reads, room made by eviction (with write-back), and the waits of a request
//! for the blocks it needs until they arrive.

use super::*;

impl<P: Policy + ?Sized, F: Prefetcher + ?Sized, S: Scheduler + ?Sized, D: Device + ?Sized> Engine<P, F, S, D> {
    // ----- requests -----

    /// Process `p` gets to the next entry of its queue.
    #[inline]
    pub(super) fn start_queued(&mut self, p: u32, q: Queued) {
        match q {
            Queued::Request(r) => self.start_request(p, r),
            Queued::Event { time_ns, index } => self.run_proc_event(p, time_ns, index),
        }
    }

    #[inline(always)]
    pub(super) fn start_request(&mut self, p: u32, r: Request) {
        if self.series.is_some() {
            self.series_issue();
        }
        let proc = &mut self.procs[p as usize];
        if !proc.started {
            proc.started = true;
            proc.start_ns = self.now;
        }
        proc.last_trace_ns = r.time_ns;
        let pid = proc.pid;
        self.acting_pid = pid;
        let f = &mut self.c.front;
        f.requests += 1;
        let write = r.op.is_write();
        if write {
            f.writes += 1;
        } else {
            f.reads += 1;
        }
        if self.observe[Boundary::Front as usize] {
            let mut seen = r;
            seen.time_ns = self.now;
            self.notify(Boundary::Front, &seen);
        }
        let (first, end) = self.pages.block_range(&r);
        self.c.front.blocks += end - first;
        self.cur = Pending { proc: p, issue_ns: self.now, outstanding: 0, write };
        debug_assert_eq!(self.cur_slot, NIL);
        // Two forms of one loop, so that the default stack tests nothing per block for the
        // per-process counts it does not keep.
        if self.tracking.is_some() {
            self.references::<true>(&r, pid, first, end);
        } else {
            self.references::<false>(&r, pid, first, end);
        }
        self.flush_runs();
        self.kick();
        // Nothing to wait for: the request completed now.
        if std::mem::replace(&mut self.cur_slot, NIL) == NIL {
            self.request_done(self.cur.proc, self.cur.issue_ns, self.cur.write);
        }
    }

    /// The references of request `r` of `pid` to its blocks `first..end`, with the per-process
    /// counts and application control of [`Tracking`] when `TRACKED`.
    #[inline(always)]
    pub(super) fn references<const TRACKED: bool>(&mut self, r: &Request, pid: u32, first: u64, end: u64) {
        let hits_before = self.c.cache.hits;
        if TRACKED {
            self.track_request(r, pid);
        }
        if r.op.is_write() {
            for b in first..end {
                if TRACKED {
                    self.track_block(r, b);
                }
                self.access_write(r.device, b, pid);
                if TRACKED {
                    self.track_reference(pid);
                }
            }
        } else {
            // The file the blocks belong to, for the prefetcher.
            let (id, is_device, first_index, size_pages) = match r.file {
                Some(f) => {
                    let size = match f.size {
                        Some(sz) => sz.div_ceil(self.s.page_size),
                        None => self.extents.get(&(false, f.id)).copied().unwrap_or(u64::MAX),
                    };
                    (f.id, false, self.pages.page_of(f.offset), size)
                }
                None => (r.device as u64, true, first, self.lanes[self.lane_index(r.device)].device_pages.unwrap_or_else(|| {
                    self.extents.get(&(true, r.device as u64)).copied().unwrap_or(u64::MAX)
                })),
            };
            for b in first..end {
                let file = FileView { id, is_device, index: first_index + (b - first), size_pages };
                if TRACKED {
                    self.track_block(r, b);
                }
                self.access_read(r.device, b, file, end - b, pid);
                if TRACKED {
                    self.track_reference(pid);
                }
            }
        }
        if TRACKED {
            self.track_request_done(pid, end - first, self.c.cache.hits - hits_before);
        }
    }

    /// Before request `r` of process `pid`: the process's caching calls due now.
    #[cold]
    #[inline(never)]
    pub(super) fn track_request(&mut self, r: &Request, pid: u32) {
        let t = self.tracking.as_mut().expect("tracked");
        if self.tell_files {
            t.before_request(&mut *self.policy, &Request { pid, ..*r });
        }
    }

    /// Before the reference to block `b` of `r`: the policy learns its file.
    #[inline(never)]
    pub(super) fn track_block(&mut self, r: &Request, b: u64) {
        if self.tell_files {
            let fb = file_block(r, Some(self.s.page_size), b);
            self.demand_file = Some((r.device, b, fb));
            self.policy.next_file(Some(fb));
        }
    }

    /// After one reference of `pid`: the oracle's priorities.
    #[inline(never)]
    pub(super) fn track_reference(&mut self, pid: u32) {
        if self.tell_files {
            let t = self.tracking.as_mut().expect("tracked");
            t.after_reference(&mut *self.policy, pid);
        }
    }

    /// After the references of a request of `pid` (`blocks` of them, `block_hits` found
    /// cached): its counts, and the process's exit after its last request.
    #[inline(never)]
    pub(super) fn track_request_done(&mut self, pid: u32, blocks: u64, block_hits: u64) {
        self.demand_file = None;
        let t = self.tracking.as_mut().expect("tracked");
        t.after_request(&mut *self.policy, pid, block_hits == blocks, blocks, block_hits);
    }

    /// The file of a block about to be prefetched, for a policy told files: what the
    /// prefetcher knows of it, else its place beside the demand reference that triggered it
    /// (same device, the same file, as many blocks on), else none.
    #[cold]
    #[inline(never)]
    pub(super) fn tell_prefetch_file(&mut self, device: u32, block: u64) {
        let fb = self.prefetcher.file_of(device, block).or_else(|| {
            let (d, b, fb) = self.demand_file?;
            let index = (fb.block + block).checked_sub(b)?;
            (d == device).then_some(FileBlock { file: fb.file, block: index })
        });
        if self.tell_files {
            self.policy.next_file(fb);
        }
    }

    /// Carries out what the prefetcher asked of the cache: caching calls to an
    /// application-controlled policy, and flushes of false prefetches (released like
    /// evictions; a flushed block whose read is still under way is simply not cached when
    /// it completes).
    #[inline(never)]
    pub(super) fn apply_cache_actions(&mut self) {
        let mut acts = std::mem::take(&mut self.cache_acts);
        self.prefetcher.cache_actions(&mut acts);
        if self.tell_files {
            for c in &acts.controls {
                self.policy.control(c);
            }
        }
        for &(d, b) in &acts.flush {
            let key = block_key(d, b);
            if self.policy.remove(key) {
                self.c.cache.prefetch_flushed += 1;
                self.release(key);
                self.drain_side();
            }
        }
        acts.controls.clear();
        acts.flush.clear();
        self.cache_acts = acts;
    }

    /// The slot of the request being started, taken on its first wait; counts one more wait.
    #[inline]
    pub(super) fn wait_on_current(&mut self) -> u32 {
        if self.cur_slot == NIL {
            self.cur_slot = slab_put(&mut self.pending, &mut self.pending_free, self.cur);
        }
        self.pending[self.cur_slot as usize].outstanding += 1;
        self.cur_slot
    }

    #[inline]
    pub(super) fn access(&mut self, key: Key, op: Op, pid: u32, origin: Origin) -> Access {
        Access { key, size: 1, op: Some(op), pid, time_ns: self.now, vtime: self.vtime, next_access: u64::MAX, origin }
    }

    /// One demand read of one block.
    pub(super) fn access_read(&mut self, device: u32, block: u64, file: FileView, req_pages: u64, pid: u32) {
        let key = block_key(device, block);
        self.vtime += 1;
        let acc = self.access(key, Op::Read, pid, Origin::Demand);
        let hit = self.policy.find(&acc);
        self.drain_side();
        let (mut flags, mut in_flight) = (0u8, false);
        // A hit consumes the marker and the prefetch (and drops the state if that was all).
        if let Some(f) = self.blocks.update(key, |st| {
            let f = st.flags;
            if hit {
                st.flags &= !(MARKER | PREFETCHED);
            }
            f
        }) {
            flags = f;
            in_flight = flags & INFLIGHT != 0;
        }
        let marker = hit && flags & MARKER != 0;
        let prefetch_hit = hit && flags & PREFETCHED != 0;
        let c = &mut self.c.cache;
        c.accesses += 1;
        if hit {
            c.hits += 1;
            if in_flight {
                c.hits_in_flight += 1;
            }
            if prefetch_hit {
                c.prefetch_used += 1;
            }
        } else {
            c.misses += 1;
        }
        self.fetch_buf.clear();
        if !(hit && !marker && !in_flight && !prefetch_hit && self.prefetcher.on_plain_hit(pid, &file, req_pages)) {
            let a = DemandAccess { device, block, file, req_pages, hit, in_flight, marker, prefetch_hit, pid, time_ns: self.now };
            let presence = Presence { policy: &*self.policy, capacity: self.capacity, blocks: &self.blocks, evicted_reads: self.evicted_reads };
            self.prefetcher.on_access(&a, &presence, &mut self.fetch_buf);
            if self.prefetcher_acts {
                self.apply_cache_actions();
            }
        }

        let mut fetched_now = false;
        if !hit {
            self.make_room(&acc);
            self.policy.insert(&acc);
            if in_flight {
                // Evicted while its read runs: cached again, and waits for that read.
                self.c.cache.misses_in_flight += 1;
                let st = self.blocks.get_mut(key).expect("in-flight block state");
                debug_assert!(st.flags & EVICTED != 0);
                st.flags &= !EVICTED;
                self.evicted_reads -= 1;
                self.wait_read(key);
                self.drain_side();
            } else {
                self.c.cache.demand_fetched += 1;
                // Mark in flight and wait, with one map operation.
                let pend = self.wait_on_current();
                let node = self.alloc_wait(WaitNode { pending: pend, next: NIL });
                let st = self.blocks.or_empty(key);
                st.flags |= INFLIGHT;
                self.waits[node as usize].next = std::mem::replace(&mut st.read_waiters, node);
                self.push_block(Op::Read, device, block, Cause::Demand, true, pid);
                fetched_now = true;
                self.drain_side();
            }
        } else if in_flight {
            self.wait_read(key);
        }
        if !self.fetch_buf.is_empty() {
            let fetches = std::mem::take(&mut self.fetch_buf);
            for f in &fetches {
                self.prefetch(f, key, fetched_now, pid);
            }
            self.fetch_buf = fetches;
        }
    }

    /// Issues one prefetch: its blocks that are neither cached nor in flight.
    #[inline]
    pub(super) fn prefetch(&mut self, f: &Fetch, demand_key: Key, demand_fetched_now: bool, pid: u32) {
        let set = self.next_set;
        self.next_set = self.next_set.wrapping_add(1);
        for i in 0..f.blocks {
            let block = f.block + i as u64;
            let key = block_key(f.device, block);
            let is_marker = f.marker == Some(block);
            if key == demand_key {
                // The demanded block inside a readahead window: read as demand; it carries the
                // window's marker if the window put one there (Linux marks pages it adds).
                if is_marker && demand_fetched_now {
                    self.blocks.or_empty(key).flags |= MARKER;
                }
                continue;
            }
            if self.policy.contains(key) {
                continue;
            }
            // Not in the policy: in flight only if its read outlived an eviction.
            if self.evicted_reads > 0 && self.blocks.get(key).is_some_and(|s| s.flags & INFLIGHT != 0) {
                continue;
            }
            let acc = self.access(key, Op::Read, pid, Origin::Prefetch { set, index: i, len: f.blocks });
            if self.tell_files || self.prefetcher_acts {
                self.tell_prefetch_file(f.device, block);
            }
            self.make_room(&acc);
            self.policy.insert(&acc);
            if self.prefetcher_acts {
                self.apply_cache_actions();
            }
            let st = self.blocks.or_empty(key);
            st.flags |= INFLIGHT | PREFETCHED | if is_marker { MARKER } else { 0 };
            self.c.cache.prefetch_issued += 1;
            self.push_block(Op::Read, f.device, block, Cause::Prefetch, false, pid);
            self.drain_side();
        }
    }

    /// One demand write of one block.
    pub(super) fn access_write(&mut self, device: u32, block: u64, pid: u32) {
        let key = block_key(device, block);
        self.vtime += 1;
        let acc = self.access(key, Op::Write, pid, Origin::Demand);
        let hit = self.policy.find(&acc);
        self.drain_side();
        let c = &mut self.c.cache;
        c.accesses += 1;
        if hit {
            c.hits += 1;
        } else {
            c.misses += 1;
            // Whole-page writes: the block is not read first.
            self.make_room(&acc);
            self.policy.insert(&acc);
        }
        let st = self.blocks.or_empty(key);
        let flags = st.flags;
        st.flags &= !(PREFETCHED | MARKER | EVICTED);
        if flags & EVICTED != 0 {
            self.evicted_reads -= 1;
        }
        let newly_dirty = !self.s.write_through && flags & DIRTY == 0;
        if self.s.write_through {
            st.flags &= !DIRTY;
        } else if newly_dirty {
            st.flags |= DIRTY;
            st.dirty_since = self.now;
            st.dirty_pid = pid;
        }
        if hit && flags & INFLIGHT != 0 {
            self.c.cache.hits_in_flight += 1;
        }
        if !hit && flags & EVICTED != 0 {
            self.c.cache.misses_in_flight += 1;
        }
        if flags & PREFETCHED != 0 {
            self.c.cache.prefetch_used += 1;
        }
        if self.s.write_through {
            self.c.cache.write_through += 1;
            self.wait_write(key);
            self.push_block(Op::Write, device, block, Cause::Demand, true, pid);
        } else if newly_dirty {
            self.dirty_fifo.push_back((self.now, key));
            if !self.flush_armed {
                self.flush_armed = true;
                let iv = self.s.resolved.flush_interval_ns;
                self.push((self.now / iv + 1) * iv, Kind::Flush, 0);
            }
        }
        // After the block's state is set, so that an insert that gives up the block itself
        // releases it like any eviction.
        self.drain_side();
    }

    /// Evicts until one more block fits.
    #[inline]
    pub(super) fn make_room(&mut self, acc: &Access) {
        while self.policy.occupied() + 1 > self.capacity {
            match self.policy.evict(acc) {
                Some(ev) => {
                    self.evicted(ev.key);
                    self.drain_side();
                }
                None => break,
            }
        }
    }

    /// Takes the entries the policy dropped outside `evict` since the last call (SLRU demotions
    /// cascading out on a hit, 2Q making room on insert, LIRS dropping several blocks in one
    /// evict) and releases each exactly like an eviction: write-back of dirty blocks, wasted
    /// prefetches, reads still in flight. Called after every `find`, `evict` and `insert`, as
    /// the `Policy` contract asks of callers that track residency.
    #[inline]
    pub(super) fn drain_side(&mut self) {
        if !self.side_evictions {
            return;
        }
        self.policy.drain_side_evictions(&mut self.side_buf);
        if self.side_buf.is_empty() {
            return;
        }
        let mut buf = std::mem::take(&mut self.side_buf);
        for ev in &buf {
            self.c.cache.side_evictions += 1;
            self.evicted(ev.key);
        }
        buf.clear();
        self.side_buf = buf;
    }

    pub(super) fn evicted(&mut self, key: Key) {
        self.c.cache.evictions += 1;
        self.release(key);
    }

    /// The block left the cache: prefetch and write-back accounting.
    pub(super) fn release(&mut self, key: Key) {
        let Some(flags) = self.blocks.update(key, |st| {
            let flags = st.flags;
            st.flags &= !(PREFETCHED | MARKER | DIRTY);
            if flags & INFLIGHT != 0 {
                st.flags |= EVICTED;
            }
            flags
        }) else {
            return;
        };
        if flags & PREFETCHED != 0 {
            self.c.cache.prefetch_wasted += 1;
        }
        if flags & INFLIGHT != 0 {
            debug_assert!(flags & EVICTED == 0, "a block released twice");
            self.evicted_reads += 1;
            self.c.cache.evicted_in_flight += 1;
        }
        if flags & DIRTY != 0 {
            self.c.cache.writeback_evict += 1;
            let (device, block) = split_block_key(key);
            self.push_block(Op::Write, device, block, Cause::Writeback, false, self.acting_pid);
        }
    }

    #[inline]
    pub(super) fn wait_read(&mut self, key: Key) {
        let pend = self.wait_on_current();
        let node = self.alloc_wait(WaitNode { pending: pend, next: NIL });
        let st = self.blocks.or_empty(key);
        self.waits[node as usize].next = std::mem::replace(&mut st.read_waiters, node);
    }

    pub(super) fn wait_write(&mut self, key: Key) {
        let pend = self.wait_on_current();
        let node = self.alloc_wait(WaitNode { pending: pend, next: NIL });
        let st = self.blocks.or_empty(key);
        self.waits[node as usize].next = std::mem::replace(&mut st.write_waiters, node);
    }

    pub(super) fn alloc_wait(&mut self, w: WaitNode) -> u32 {
        slab_put(&mut self.waits, &mut self.wait_free, w)
    }

    /// Wakes a list of waiters. Inlined into the block completion, its one caller, which every
    /// device request passes.
    #[inline(always)]
    pub(super) fn wake(&mut self, mut node: u32) {
        while node != NIL {
            let w = self.waits[node as usize];
            self.wait_free.push(node);
            node = w.next;
            let p = &mut self.pending[w.pending as usize];
            p.outstanding -= 1;
            if p.outstanding == 0 {
                self.complete(w.pending);
            }
        }
    }

    /// The request waiting in slot `pend` completed now.
    #[inline(always)]
    pub(super) fn complete(&mut self, pend: u32) {
        let p = self.pending[pend as usize];
        self.pending_free.push(pend);
        self.request_done(p.proc, p.issue_ns, p.write);
    }

    /// A request of process `proc` issued at `issue_ns` completed now. Inlined into its two
    /// callers (a request that completes as it starts, one whose last block arrives): every
    /// request passes here once, and a call costs a third of its body.
    #[inline(always)]
    pub(super) fn request_done(&mut self, p: u32, issue_ns: u64, write: bool) {
        let rt = self.now - issue_ns;
        if write {
            self.c.response_write.record(rt);
        } else {
            self.c.response_read.record(rt);
        }
        if let Some(s) = self.series.as_deref_mut() {
            s.response(rt);
        }
        self.c.elapsed_ns = self.c.elapsed_ns.max(self.now);
        let proc = &mut self.procs[p as usize];
        proc.response_sum += rt as u128;
        proc.response_max = proc.response_max.max(rt);
        proc.requests += 1;
        proc.end_ns = self.now;
        if self.s.replay == Replay::Closed {
            self.ready.push(p);
        }
    }

    /// Closed loop: process `p` completed a request; issue its next one after the think time.
    pub(super) fn continue_proc(&mut self, p: u32) {
        let Some(next) = self.procs[p as usize].queue.front() else {
            if self.proc_events.is_some() {
                self.proc_ended(p);
            }
            return;
        };
        let think = self.think_before(p, next.time_ns());
        if think > 0 && self.cpus.is_some() {
            return self.compute(p, think);
        }
        self.push(self.now + think, Kind::Issue, p);
    }

    /// Think time of process `p` before issuing what it has queued next, at trace time
    /// `next_ns`.
    #[inline]
    pub(super) fn think_before(&self, p: u32, next_ns: u64) -> u64 {
        match self.s.resolved.think {
            Think::None => 0,
            Think::Fixed(t) => t,
            Think::Trace => next_ns.saturating_sub(self.procs[p as usize].last_trace_ns),
        }
    }
}
