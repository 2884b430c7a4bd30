//! What a locality probe reads of a request: a 40-byte record instead of the 72-byte
//! [`Request`].
//!
//! Probes that run on threads of their own get their requests copied into batches (and, where
//! boundaries share a probe, through a queue first); every byte copied is a byte written on the
//! engine's thread and read again on the probe's, mostly from memory. A probe of a given
//! configuration reads only a few fields of a request, so the record keeps those, already in the
//! form the probe uses: the file-relative position at file granularity, and no time unless the
//! probe's intervals are durations. Two requests give equal records exactly when a probe of that
//! configuration cannot tell them apart, which is what boundaries sharing a probe compare.

use super::probe::{Granularity, ProbeConfig};
use super::series::IntervalSpec;
use crate::trace::Request;

/// A request as a probe of one configuration sees it ([`ProbeRequest::of`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ProbeRequest {
    /// Trace time; 0 unless the probe's intervals are durations (only they read it).
    pub time_ns: u64,
    /// Byte offset on the device; at file granularity, the offset of the file's start on the
    /// device (the request's offset minus its offset within the file).
    pub offset: u64,
    /// Length in bytes.
    pub length: u64,
    /// The file's id at file granularity, else 0.
    pub file: u64,
    pub device: u32,
    /// At file granularity, whether the request belongs to a file (requests that do not are
    /// only counted); else `true`.
    pub counted: bool,
}

impl ProbeRequest {
    /// The record of `r` for a probe configured by `config`.
    #[inline]
    pub fn of(r: &Request, config: &ProbeConfig) -> ProbeRequest {
        Recorder::new(config).record(r)
    }
}

/// Makes the records of one probe configuration, with what the configuration asks decided
/// once: the engine's thread makes a record per request and boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recorder {
    /// All ones where the intervals are durations, else 0 (the time is then left out).
    time_mask: u64,
    files: bool,
}

impl Recorder {
    pub fn new(config: &ProbeConfig) -> Recorder {
        Recorder { time_mask: if matches!(config.interval, IntervalSpec::Time(_)) { u64::MAX } else { 0 }, files: config.granularity == Granularity::File }
    }

    /// [`ProbeRequest::of`] `r` for the configuration.
    #[inline(always)]
    pub fn record(&self, r: &Request) -> ProbeRequest {
        let time_ns = r.time_ns & self.time_mask;
        if self.files {
            return match r.file {
                Some(f) => ProbeRequest { time_ns, offset: r.offset.saturating_sub(f.offset), length: r.length, file: f.id, device: r.device, counted: true },
                None => ProbeRequest { time_ns, offset: 0, length: 0, file: 0, device: 0, counted: false },
            };
        }
        ProbeRequest { time_ns, offset: r.offset, length: r.length, file: 0, device: r.device, counted: true }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::FileRef;

    #[test]
    fn records_are_forty_bytes() {
        assert_eq!(std::mem::size_of::<ProbeRequest>(), 40);
    }

    #[test]
    fn equal_records_exactly_when_the_probe_reads_the_same() {
        let bytes = ProbeConfig::default();
        let a = Request::read(8192, 4096).at(5);
        let mut b = a.at(7);
        b.pid = 3;
        b.file = Some(FileRef { id: 9, offset: 0, size: None });
        // Time, process and file mean nothing to a byte-granularity probe with request intervals.
        assert_eq!(ProbeRequest::of(&a, &bytes), ProbeRequest::of(&b, &bytes));
        // Durations read the time.
        let timed = ProbeConfig { interval: IntervalSpec::Time(1_000), ..Default::default() };
        assert_ne!(ProbeRequest::of(&a, &timed), ProbeRequest::of(&b, &timed));
        let mut c = a;
        c.device = 1;
        assert_ne!(ProbeRequest::of(&a, &bytes), ProbeRequest::of(&c, &bytes));
        // Files: the file's id and start; requests without one are all the same.
        let file = ProbeConfig { granularity: Granularity::File, ..Default::default() };
        let mut d = b;
        d.offset += 4096;
        d.file = Some(FileRef { id: 9, offset: 4096, size: None });
        assert_eq!(ProbeRequest::of(&b, &file), ProbeRequest::of(&d, &file));
        assert_eq!(ProbeRequest::of(&b, &file).offset, 8192);
        d.file = Some(FileRef { id: 10, offset: 4096, size: None });
        assert_ne!(ProbeRequest::of(&b, &file), ProbeRequest::of(&d, &file));
        assert!(!ProbeRequest::of(&a, &file).counted);
        assert_eq!(ProbeRequest::of(&a, &file), ProbeRequest::of(&c, &file));
    }
}
