//! The miss-ratio engine.
//!
//! Object mode: one request is one object keyed by its start offset; its size is the request's
//! length, or 1 with `unit_size` (libCacheSim's `ignore_obj_size`). Capacity is in objects
//! (unit size) or bytes.
//!
//! Block mode: a request is split into the `page_size` blocks it touches, each keyed by
//! (device, block number) and of size 1; capacity is in blocks. A request hits when all its blocks
//! hit. Reads and writes both go through the cache (write-allocate): a write brings its blocks in
//! like a read, as a page cache does before it writes a partial page back.

use serde::{Deserialize, Serialize};

use crate::cache::{self, block_key, Access, Key, Policy};
use crate::engine::future::next_use_positions;
use crate::error::{ConfigError, Error};
use crate::trace::{read_all, Request, TraceReader};

/// How requests map to cache entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "lowercase")]
pub enum Mode {
    /// One object per request, keyed by its start offset.
    Object { unit_size: bool },
    /// Requests split into blocks of `page_size` bytes.
    Block { page_size: u64 },
}

impl Mode {
    pub fn name(&self) -> &'static str {
        match self {
            Mode::Object { .. } => "object",
            Mode::Block { .. } => "block",
        }
    }
}

/// Counters of one simulation run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SimCounts {
    pub requests: u64,
    pub hits: u64,
    pub bytes: u64,
    pub byte_hits: u64,
    /// Block mode only.
    pub blocks: u64,
    pub block_hits: u64,
}

/// One run: a policy at one capacity, fed request by request.
pub struct SimRun {
    policy: Box<dyn Policy>,
    mode: Mode,
    vtime: u64,
    /// Next-use position of every reference, indexed by reference position (see
    /// [`SimRun::set_future`]).
    future: Option<Vec<u64>>,
    pub counts: SimCounts,
}

impl SimRun {
    /// `capacity` is in the cache's unit: objects (unit size), bytes (sized object mode) or blocks.
    pub fn new(policy_spec: &str, capacity: u64, mode: Mode) -> Result<SimRun, ConfigError> {
        if let Mode::Block { page_size } = mode {
            if page_size == 0 {
                return Err(ConfigError::new("--page-size", "the page size must be at least 1 byte"));
            }
        }
        Ok(SimRun { policy: cache::build(policy_spec, capacity)?, mode, vtime: 0, future: None, counts: SimCounts::default() })
    }

    pub fn policy(&self) -> &dyn Policy {
        &*self.policy
    }

    /// Whether the policy needs the next-use position of each reference (Belady).
    pub fn needs_future(&self) -> bool {
        self.policy.needs_future()
    }

    /// Gives the run the next-use position of every reference of the trace, indexed by reference
    /// position (one reference per request in object mode, one per block in block mode), as
    /// [`next_use_positions`] computes it from [`reference_keys`]. `feed` then takes each
    /// reference's next use from it instead of its `next_access` argument.
    pub fn set_future(&mut self, next_use: Vec<u64>) {
        self.future = Some(next_use);
    }

    /// Feeds one request. `next_access` is the position of the next reference to the same
    /// object (object mode, for policies that need the future), else `u64::MAX`; ignored after
    /// [`SimRun::set_future`].
    #[inline]
    pub fn feed(&mut self, r: &Request, next_access: u64) {
        let c = &mut self.counts;
        c.requests += 1;
        c.bytes += r.length;
        match self.mode {
            Mode::Object { unit_size } => {
                let size = if unit_size { 1 } else { r.length };
                let next_access = next_use(&self.future, self.vtime, next_access);
                let a = Access { key: r.offset, size, op: Some(r.op), pid: r.pid, time_ns: r.time_ns, vtime: self.vtime, next_access, ..Default::default() };
                self.vtime += 1;
                if self.policy.get(&a) {
                    c.hits += 1;
                    c.byte_hits += r.length;
                }
            }
            Mode::Block { page_size } => {
                let (first, end) = r.block_range(page_size);
                let mut all = true;
                for b in first..end {
                    let next_access = next_use(&self.future, self.vtime, next_access);
                    let a = Access { key: block_key(r.device, b), size: 1, op: Some(r.op), pid: r.pid, time_ns: r.time_ns, vtime: self.vtime, next_access, ..Default::default() };
                    self.vtime += 1;
                    let hit = self.policy.get(&a);
                    c.blocks += 1;
                    c.block_hits += hit as u64;
                    all &= hit;
                }
                if all {
                    c.hits += 1;
                    c.byte_hits += r.length;
                }
            }
        }
    }
}

/// The next use of reference `vtime`: from the pre-computed positions if any, else `given`.
#[inline]
fn next_use(future: &Option<Vec<u64>>, vtime: u64, given: u64) -> u64 {
    match future {
        Some(f) => f.get(vtime as usize).copied().unwrap_or(u64::MAX),
        None => given,
    }
}

/// The keys of the cache references `requests` make in `mode`, in reference order (what
/// [`next_use_positions`] needs for policies that look into the future).
pub fn reference_keys(requests: &[Request], mode: Mode) -> Vec<Key> {
    match mode {
        Mode::Object { .. } => requests.iter().map(|r| r.offset).collect(),
        Mode::Block { page_size } => {
            let mut keys = Vec::with_capacity(requests.len());
            for r in requests {
                let (first, end) = r.block_range(page_size);
                keys.extend((first..end).map(|b| block_key(r.device, b)));
            }
            keys
        }
    }
}

/// Runs one policy over a whole trace. A policy that needs the future (Belady) reads the whole
/// trace into memory first to compute each reference's next use; the others stream.
pub fn simulate(reader: &mut dyn TraceReader, policy_spec: &str, capacity: u64, mode: Mode) -> Result<SimCounts, Error> {
    let mut run = SimRun::new(policy_spec, capacity, mode)?;
    if run.needs_future() {
        let requests = read_all(reader)?;
        run.set_future(next_use_positions(&reference_keys(&requests, mode)));
        for r in &requests {
            run.feed(r, u64::MAX);
        }
        return Ok(run.counts);
    }
    let mut buf = Vec::with_capacity(1 << 14);
    loop {
        buf.clear();
        if reader.read_batch(&mut buf, 1 << 14)? == 0 {
            break;
        }
        for r in &buf {
            run.feed(r, u64::MAX);
        }
    }
    Ok(run.counts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::VecReader;

    fn reads(offsets: &[u64], length: u64) -> Vec<Request> {
        offsets.iter().map(|&o| Request::read(o, length)).collect()
    }

    #[test]
    fn belady_gets_next_uses_in_object_mode() {
        // Capacity 2: 1 2 miss; 3 evicts 2 (next used after 1); 1 hits; 2 evicts 1 (next used
        // after 3); 3 hits; 1 misses. LRU hits none of them.
        let reqs = reads(&[1, 2, 3, 1, 2, 3, 1], 1);
        let c = simulate(&mut VecReader::new(reqs.clone()), "belady", 2, Mode::Object { unit_size: true }).unwrap();
        assert_eq!((c.requests, c.hits), (7, 2));
        let c = simulate(&mut VecReader::new(reqs), "lru", 2, Mode::Object { unit_size: true }).unwrap();
        assert_eq!(c.hits, 0);
    }

    #[test]
    fn belady_gets_next_uses_in_block_mode() {
        // Two-block requests on 4 KiB pages: blocks (0,1) (2,3) (0,1) with room for 3 blocks.
        // Block 3 is never used again, so Belady evicts it (or 2) and keeps 0 and 1: the third
        // request hits both blocks.
        let reqs = reads(&[0, 8192, 0], 8192);
        let c = simulate(&mut VecReader::new(reqs), "belady", 3, Mode::Block { page_size: 4096 }).unwrap();
        assert_eq!((c.blocks, c.block_hits, c.hits), (6, 2, 1));
    }

    #[test]
    fn reference_keys_follow_the_mode() {
        let reqs = reads(&[0, 8192], 8192);
        assert_eq!(reference_keys(&reqs, Mode::Object { unit_size: true }), vec![0, 8192]);
        assert_eq!(reference_keys(&reqs, Mode::Block { page_size: 4096 }), vec![0, 1, 2, 3]);
    }
}
