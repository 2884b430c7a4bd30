//! Block distance: how far a reference lands from the one before it.
//!
//! Fox, Lojpur and Wang (Section 2.1, Figure 2.1): block distance is the difference of the block
//! numbers of adjacent references, `|b_i - b_(i-1)|`; the first reference's distance is its block
//! number ("initialized to the block number": a first reference to block 1,000 has distance 1,000,
//! as if the head started at block 0). Spatial locality is then a small mean distance, or, with
//! the paper's transformation, a high block affinity ([`super::affinity`]).
//!
//! Multi-block requests: the paper analyses references at one granularity and converts larger
//! references to it (Section 3, "Granularity of analyses": file references are converted to the
//! blocks they cover). A request covering blocks `b..e` is therefore the references `b, b+1, ...,
//! e-1`: the first at distance `|b - previous|`, the others at distance 1.
//!
//! Devices: block numbers of different devices are unrelated positions, so each device keeps its
//! own previous block, and the first reference to each device is measured from block 0 as the
//! paper's first reference is. A single-device trace is exactly the paper's definition.

use crate::cache::KeyMap;

/// Tracks the previous block of each device.
#[derive(Debug, Default, Clone)]
pub struct BlockDistance {
    /// Last device seen and its previous block (the common single-device case needs no lookup).
    last_device: Option<u32>,
    last_block: u64,
    others: KeyMap<u64>,
}

impl BlockDistance {
    pub fn new() -> Self {
        Self::default()
    }

    /// Distance of a reference to `block` of `device`, which becomes the previous reference.
    #[inline(always)]
    pub fn access(&mut self, device: u32, block: u64) -> u64 {
        let prev = match self.last_device {
            Some(d) if d == device => self.last_block,
            Some(d) => {
                self.others.insert(d as u64, self.last_block);
                self.last_device = Some(device);
                self.others.get(&(device as u64)).copied().unwrap_or(0)
            }
            None => {
                self.last_device = Some(device);
                0
            }
        };
        self.last_block = block;
        block.abs_diff(prev)
    }

    /// A request covering blocks `first..end` (see the module comment): returns the distance of
    /// its first block; each further block is at distance 1, and `end - 1` becomes the previous
    /// block.
    #[inline(always)]
    pub fn access_range(&mut self, device: u32, first: u64, end: u64) -> u64 {
        let d = self.access(device, first);
        self.last_block = end - 1;
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_figure_2_1() {
        // First reference to block 1,000 has distance 1,000; then 4,000 has 3,000.
        let mut b = BlockDistance::new();
        assert_eq!(b.access(0, 1000), 1000);
        assert_eq!(b.access(0, 4000), 3000);
        assert_eq!(b.access(0, 3999), 1);
    }

    #[test]
    fn devices_are_separate_disks() {
        let mut b = BlockDistance::new();
        assert_eq!(b.access(0, 100), 100);
        assert_eq!(b.access(1, 7), 7);
        assert_eq!(b.access(0, 101), 1);
        assert_eq!(b.access(1, 9), 2);
        assert_eq!(b.access_range(0, 102, 110), 1);
        assert_eq!(b.access(0, 110), 1);
    }
}
