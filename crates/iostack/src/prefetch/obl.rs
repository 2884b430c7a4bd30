//! obl: one-block lookahead (Smith, "Cache memories", 1982), and its sequential variant.
//!
//! `obl` (`obl:always`): on every demand access to a block (hit or miss), fetch the next block
//! if it is not cached. The simplest sequential prefetcher: a sequential stream is always one
//! block ahead, a random one wastes one block per access.
//!
//! `obl:seq`: the Ultrix (and 4.3BSD) file system's read-ahead, the baseline of ACFS's
//! experiments (Cao et al., papers/002, l.14-16 and l.895-897): after accesses to blocks K and
//! K+1 of a file, fetch K+2. Each file remembers the index of its last accessed block (BSD's
//! `v_lastr`, one per file whichever process reads it); an access to the block after it fetches
//! the next one, any other access fetches nothing. Files are the trace's files, or the device
//! for requests without one.
//!
//! "The next block" is the file's next logical block, where the file system put it: 4.3BSD's
//! read-ahead asks `bmap` for the device block of logical block K+2, and on its fast file
//! system a file's blocks lie every other block (`specs/acfs.md`, the layout `fs=ffs`), so the
//! device block after K+1's is another file's. Both modes take the place from the trace's
//! [`FileMap`]; a block the trace never places, and requests without a file, are taken to
//! follow on the device (block b+1), which is also where a contiguous file's next block lies.
//!
//! Fetches stop at the end of the file when its size is known.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::file_map::FileMap;
use super::{next_in_file, BlockPresence, DemandAccess, Fetch, Prefetcher, PrefetcherInfo};
use crate::cache::FileBlock;

pub const INFO: PrefetcherInfo = PrefetcherInfo {
    name: "obl",
    aliases: &["one-block-lookahead"],
    summary: "one-block lookahead: every access to a file's block fetches the file's next block (obl:seq: only after K and K+1 of a file, fetch K+2)",
    build: |spec, _page| {
        Ok(match spec.choice("mode", "always", &["always", "seq"])? {
            "seq" => Box::new(OblSeq::default()),
            _ => Box::new(Obl::default()),
        })
    },
};

/// What both modes share: the file map, and the file block of the last fetch the map moved
/// away from the device block after the accessed one.
#[derive(Default)]
struct NextBlock {
    map: Option<Arc<FileMap>>,
    moved: Option<(u32, u64, FileBlock)>,
}

impl NextBlock {
    /// Fetches the accessed file's next block unless it is cached.
    #[inline]
    fn fetch(&mut self, a: &DemandAccess, cache: &dyn BlockPresence, out: &mut Vec<Fetch>) {
        self.moved = None;
        let Some((device, block)) = next_in_file(a, self.map.as_deref()) else { return };
        if cache.is_cached(device, block) {
            return;
        }
        out.push(Fetch { device, block, blocks: 1, marker: None });
        if (device, block) != (a.device, a.block + 1) {
            self.moved = Some((device, block, FileBlock { file: a.file.id, block: a.file.index + 1 }));
        }
    }

    /// The engine places a prefetched block beside the demand block that triggered it, as
    /// many blocks on; that is right for the device's next block, and only a fetch the map
    /// moved elsewhere needs its file block said.
    fn file_of(&self, device: u32, block: u64) -> Option<FileBlock> {
        self.moved.filter(|&(d, b, _)| (d, b) == (device, block)).map(|(_, _, fb)| fb)
    }
}

#[derive(Default)]
pub struct Obl {
    next: NextBlock,
}

impl Prefetcher for Obl {
    fn name(&self) -> String {
        "obl".into()
    }
    #[inline]
    fn on_access(&mut self, a: &DemandAccess, cache: &dyn BlockPresence, out: &mut Vec<Fetch>) {
        self.next.fetch(a, cache, out);
    }
    fn file_of(&mut self, device: u32, block: u64) -> Option<FileBlock> {
        self.next.file_of(device, block)
    }
    fn wants_file_map(&self) -> bool {
        true
    }
    fn set_file_map(&mut self, map: Arc<FileMap>) {
        self.next.map = Some(map);
    }
}

/// Sequential one-block lookahead: the last accessed block of each file.
#[derive(Default)]
pub struct OblSeq {
    last: FxHashMap<(u64, bool), u64>,
    next: NextBlock,
}

impl Prefetcher for OblSeq {
    fn name(&self) -> String {
        "obl:seq".into()
    }
    fn on_access(&mut self, a: &DemandAccess, cache: &dyn BlockPresence, out: &mut Vec<Fetch>) {
        let key = (a.file.id, a.file.is_device);
        let sequential = a.file.index > 0 && self.last.get(&key) == Some(&(a.file.index - 1));
        self.last.insert(key, a.file.index);
        if sequential {
            self.next.fetch(a, cache, out);
        } else {
            self.next.moved = None;
        }
    }
    fn file_of(&mut self, device: u32, block: u64) -> Option<FileBlock> {
        self.next.file_of(device, block)
    }
    fn wants_file_map(&self) -> bool {
        true
    }
    fn set_file_map(&mut self, map: Arc<FileMap>) {
        self.next.map = Some(map);
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

    /// Two files written one after the other on a fast file system: file 1's block i at 100 + 2i,
    /// file 2's at 101 + 2i (10 blocks each).
    fn ffs_map() -> Arc<FileMap> {
        let mut m = FileMap::default();
        for i in 0..10 {
            m.add(1, i, 0, 100 + 2 * i, 1);
            m.add(2, i, 0, 101 + 2 * i, 1);
        }
        Arc::new(m)
    }

    fn ffs_access(file: u64, index: u64) -> DemandAccess {
        DemandAccess { block: 99 + file + 2 * index, ..access(file, index) }
    }

    #[test]
    fn seq_fetches_the_files_next_block_where_it_lies() {
        let mut p = OblSeq::default();
        p.set_file_map(ffs_map());
        let mut out = Vec::new();
        p.on_access(&ffs_access(1, 3), &Nothing, &mut out);
        assert!(out.is_empty());
        p.on_access(&ffs_access(1, 4), &Nothing, &mut out);
        // K+1 = 4 lies at 108; K+2 = 5 at 110, not at 109 (file 2's block 4).
        assert_eq!(out, vec![Fetch { device: 0, block: 110, blocks: 1, marker: None }]);
        assert_eq!(p.file_of(0, 110), Some(FileBlock { file: 1, block: 5 }), "the engine learns the file block it fetched");
        assert_eq!(p.file_of(0, 109), None);
        // The cache is asked about the block fetched.
        struct Has(u64);
        impl BlockPresence for Has {
            fn is_cached(&self, _d: u32, b: u64) -> bool {
                b == self.0
            }
        }
        out.clear();
        p.on_access(&ffs_access(1, 5), &Has(111), &mut out);
        assert_eq!(out.iter().map(|f| f.block).collect::<Vec<_>>(), vec![112]);
        out.clear();
        p.on_access(&ffs_access(1, 6), &Has(114), &mut out);
        assert!(out.is_empty(), "block 7 of file 1 (114) is cached");
        // `obl` too.
        let mut o = Obl::default();
        o.set_file_map(ffs_map());
        out.clear();
        o.on_access(&ffs_access(2, 0), &Nothing, &mut out);
        assert_eq!(out.iter().map(|f| f.block).collect::<Vec<_>>(), vec![103]);
    }

    #[test]
    fn without_a_place_the_next_device_block_is_fetched() {
        // No map: the device's next block, as on a contiguous layout.
        let mut p = OblSeq::default();
        let mut out = Vec::new();
        p.on_access(&ffs_access(1, 4), &Nothing, &mut out);
        p.on_access(&ffs_access(1, 5), &Nothing, &mut out);
        assert_eq!(out.iter().map(|f| f.block).collect::<Vec<_>>(), vec![111]);
        assert_eq!(p.file_of(0, 111), None, "the engine's own placement is right");
        // A block the map never placed (file 1 known up to block 3): the next device block.
        let mut m = FileMap::default();
        m.add(1, 0, 0, 100, 1);
        m.add(1, 1, 0, 102, 1);
        let mut p = OblSeq::default();
        p.set_file_map(Arc::new(m));
        out.clear();
        p.on_access(&ffs_access(1, 0), &Nothing, &mut out);
        p.on_access(&ffs_access(1, 1), &Nothing, &mut out);
        assert_eq!(out.iter().map(|f| f.block).collect::<Vec<_>>(), vec![103]);
        // A request without a file: the device is the file, its blocks are its places.
        out.clear();
        let dev = |b: u64| DemandAccess { block: b, file: FileView { id: 0, is_device: true, index: b, size_pages: u64::MAX }, ..access(0, 0) };
        p.on_access(&dev(100), &Nothing, &mut out);
        p.on_access(&dev(101), &Nothing, &mut out);
        assert_eq!(out.iter().map(|f| f.block).collect::<Vec<_>>(), vec![102]);
    }

    /// On a contiguous layout the map changes nothing: a mixed stream of accesses to files laid
    /// one after another fetches the same blocks with the map as without.
    #[test]
    fn a_contiguous_map_fetches_what_no_map_fetches() {
        let (files, size) = (5u64, 40u64);
        let mut m = FileMap::default();
        for f in 0..files {
            m.add(f, 0, 0, f * size, size);
        }
        let map = Arc::new(m);
        // Blocks below 50 and every third block are cached.
        struct Some3;
        impl BlockPresence for Some3 {
            fn is_cached(&self, _d: u32, b: u64) -> bool {
                b < 50 || b % 3 == 0
            }
        }
        let mut x = 7u64;
        let accesses: Vec<DemandAccess> = (0..3000)
            .map(|i| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let f = (x >> 40) % files;
                let index = if x >> 62 == 0 { (x >> 20) % size } else { i % size };
                DemandAccess { block: f * size + index, file: FileView { id: f, is_device: false, index, size_pages: size }, ..access(f, index) }
            })
            .collect();
        for mode in ["obl", "obl:seq"] {
            let (mut with, mut without) = (crate::prefetch::build(mode, 4096).unwrap(), crate::prefetch::build(mode, 4096).unwrap());
            with.set_file_map(map.clone());
            let mut fetched = 0;
            for a in &accesses {
                let (mut got, mut want) = (Vec::new(), Vec::new());
                with.on_access(a, &Some3, &mut got);
                without.on_access(a, &Some3, &mut want);
                assert_eq!(got, want, "{mode}: {a:?}");
                fetched += got.len();
            }
            assert!(fetched > 100, "{mode}: the stream fetches ({fetched})");
        }
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
