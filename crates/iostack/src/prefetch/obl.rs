//! obl: one-block lookahead (Smith, "Cache memories", 1982), and its sequential variant.
//!
//! `obl` (`obl:always`): on every demand access to block b (hit or miss), fetch block b+1 if it
//! is not cached. The simplest sequential prefetcher: a sequential stream is always one block
//! ahead, a random one wastes one block per access.
//!
//! `obl:seq`: the Ultrix (and 4.3BSD) file system's read-ahead, the baseline of ACFS's
//! experiments (Cao et al., papers/002, l.14-16 and l.895-897): after accesses to blocks K and
//! K+1 of a file, fetch K+2. Each file remembers the index of its last accessed block (BSD's
//! `v_lastr`, one per file whichever process reads it); an access to the block after it fetches
//! the next one, any other access fetches nothing. Files are the trace's files, or the device
//! for requests without one.
//!
//! Fetches stop at the end of the file when its size is known.

use rustc_hash::FxHashMap;

use super::{next_blocks, BlockPresence, DemandAccess, Fetch, Prefetcher, PrefetcherInfo};

pub const INFO: PrefetcherInfo = PrefetcherInfo {
    name: "obl",
    aliases: &["one-block-lookahead"],
    summary: "one-block lookahead: every access to b fetches b+1 (obl:seq: only after K and K+1 of a file, fetch K+2)",
    build: |spec, _page| {
        Ok(match spec.choice("mode", "always", &["always", "seq"])? {
            "seq" => Box::new(OblSeq::default()),
            _ => Box::new(Obl),
        })
    },
};

pub struct Obl;

impl Prefetcher for Obl {
    fn name(&self) -> String {
        "obl".into()
    }
    #[inline]
    fn on_access(&mut self, a: &DemandAccess, cache: &dyn BlockPresence, out: &mut Vec<Fetch>) {
        if !cache.is_cached(a.device, a.block + 1) {
            next_blocks(a, 1, out);
        }
    }
}

/// Sequential one-block lookahead: the last accessed block of each file.
#[derive(Default)]
pub struct OblSeq {
    last: FxHashMap<(u64, bool), u64>,
}

impl Prefetcher for OblSeq {
    fn name(&self) -> String {
        "obl:seq".into()
    }
    fn on_access(&mut self, a: &DemandAccess, cache: &dyn BlockPresence, out: &mut Vec<Fetch>) {
        let key = (a.file.id, a.file.is_device);
        let sequential = a.file.index > 0 && self.last.get(&key) == Some(&(a.file.index - 1));
        self.last.insert(key, a.file.index);
        if sequential && !cache.is_cached(a.device, a.block + 1) {
            next_blocks(a, 1, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prefetch::FileView;

    struct Nothing;
    impl BlockPresence for Nothing {
        fn is_cached(&self, _device: u32, _block: u64) -> bool {
            false
        }
    }

    fn access(file: u64, index: u64) -> DemandAccess {
        DemandAccess {
            device: 0,
            block: file * 1000 + index,
            file: FileView { id: file, is_device: false, index, size_pages: 10 },
            req_pages: 1,
            hit: false,
            in_flight: false,
            marker: false,
            prefetch_hit: false,
            pid: 1,
            time_ns: 0,
        }
    }

    #[test]
    fn seq_fetches_k_plus_2_after_k_and_k_plus_1() {
        let mut p = OblSeq::default();
        let mut out = Vec::new();
        let mut step = |file, index| {
            out.clear();
            p.on_access(&access(file, index), &Nothing, &mut out);
            out.iter().map(|f| f.block).collect::<Vec<_>>()
        };
        assert_eq!(step(1, 3), Vec::<u64>::new(), "a first access fetches nothing");
        assert_eq!(step(1, 4), vec![1005], "K=3, K+1=4: fetch K+2");
        assert_eq!(step(2, 0), Vec::<u64>::new(), "another file has its own history");
        assert_eq!(step(1, 5), vec![1006]);
        assert_eq!(step(1, 7), Vec::<u64>::new(), "a jump fetches nothing");
        assert_eq!(step(1, 9), Vec::<u64>::new(), "nor at the end of the file");
        assert_eq!(step(2, 1), vec![2002]);
    }

    #[test]
    fn spec_selects_the_variant() {
        let spec = |t: &str| {
            let mut s = crate::sched::ComponentSpec::parse("--prefetch", t, &[("obl", "mode")]).unwrap();
            let p = (INFO.build)(&mut s, 4096);
            s.finish().and(p.map(|p| p.name()))
        };
        assert_eq!(spec("obl").unwrap(), "obl");
        assert_eq!(spec("obl:seq").unwrap(), "obl:seq");
        assert!(spec("obl:sideways").is_err());
    }
}
