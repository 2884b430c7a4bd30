//! Per-process I/O history as Linux 2.6.20's CFQ and anticipatory schedulers keep it
//! (`cfq_update_io_thinktime` / `cfq_update_io_seektime` in block/cfq-iosched.c,
//! `as_update_thinktime` / `as_update_seekdist` in block/as-iosched.c).
//!
//! Both keep decaying means in fixed point: every new sample weighs 1/8 and the older ones 7/8.
//! The sample count itself decays the same way (scaled by 256: 32, 60, 84, ... towards 256), so
//! a history "is valid" (`sample_valid`: more than 80) after three samples and a process that
//! stops issuing requests keeps its history. Think time is the time from the completion of the
//! process's previous request to its next request, capped by the caller (CFQ: twice slice_idle;
//! AS: 20 ms). Seek distance is the distance in sectors from the end of the process's previous
//! request to the start of the new one, clamped to four times the current mean plus 1 GiB for
//! the first samples and plus 64 MiB later, so that an odd far seek (a page-in, another file's
//! metadata) does not make a streaming process look random.

/// Decaying think-time and seek-distance means of one process.
#[derive(Debug, Clone, Copy, Default)]
pub struct IoHistory {
    ttime_samples: u64,
    ttime_total: u64,
    /// Mean think time, ns.
    pub ttime_mean: u64,
    seek_samples: u64,
    seek_total: u64,
    /// Mean seek distance, sectors.
    pub seek_mean: u64,
}

/// The kernels' `sample_valid`: enough samples to trust a mean.
const VALID: u64 = 80;

impl IoHistory {
    /// Records a think time (ns, already capped by the caller).
    pub fn add_think(&mut self, ttime_ns: u64) {
        self.ttime_samples = (7 * self.ttime_samples + 256) / 8;
        self.ttime_total = (7 * self.ttime_total + 256 * ttime_ns) / 8;
        self.ttime_mean = (self.ttime_total + 128) / self.ttime_samples;
    }

    /// Records a seek distance in sectors.
    pub fn add_seek(&mut self, sectors: u64) {
        let slack = if self.seek_samples <= 60 { 2 * 1024 * 1024 } else { 2 * 1024 * 64 };
        let d = sectors.min(self.seek_mean.saturating_mul(4).saturating_add(slack));
        self.seek_samples = (7 * self.seek_samples + 256) / 8;
        self.seek_total = (7 * self.seek_total).saturating_add(256 * d) / 8;
        self.seek_mean = (self.seek_total + self.seek_samples / 2) / self.seek_samples;
    }

    /// Whether any think time was recorded.
    pub fn has_think(&self) -> bool {
        self.ttime_samples > 0
    }

    /// Whether any seek was recorded.
    pub fn has_seek(&self) -> bool {
        self.seek_samples > 0
    }

    /// Enough think-time samples to trust the mean.
    pub fn think_valid(&self) -> bool {
        self.ttime_samples > VALID
    }

    /// Enough seek samples to trust the mean.
    pub fn seek_valid(&self) -> bool {
        self.seek_samples > VALID
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn means_decay_and_become_valid_after_three_samples() {
        let mut h = IoHistory::default();
        for i in 0..3 {
            assert!(!h.think_valid(), "after {i}");
            h.add_think(1_000_000);
        }
        assert!(h.think_valid());
        // Within 1 % (the sample count is rounded down in fixed point).
        assert!(h.ttime_mean.abs_diff(1_000_000) < 10_000, "{}", h.ttime_mean);
        // Short think times pull the mean down by 1/8 each.
        for _ in 0..40 {
            h.add_think(0);
        }
        assert!(h.ttime_mean < 10_000, "{}", h.ttime_mean);
        // A lone far seek after a sequential history is clamped.
        let mut s = IoHistory::default();
        for _ in 0..20 {
            s.add_seek(0);
        }
        s.add_seek(1 << 40);
        assert!(s.seek_mean <= 2 * 1024 * 64, "{}", s.seek_mean);
    }
}
