//! Fixed-cost device: every request costs one positioning time, and nothing else.
//!
//! This is the cost model of the DULO paper's illustration (Jiang et al., ACM TOS 2007, Section
//! 3.1 and Table I; `papers/000_eed2f20ca423ecea.txt`): "we use the average seek time to represent
//! the cost of any seek operation, and we use average rotation time to represent the cost of any
//! rotation operation ... We ignore other negligible costs such as disk read time and bus transfer
//! time. The 6.5ms average seek time and 3.0ms average rotation time are taken from the
//! specification of the Hitachi Ultrastar 18ZX 10K RPM". A request therefore costs 9.5 ms
//! whatever its size or position; the paper's Table I counts a sequence of adjacent blocks as one
//! request, which is what the scheduler's merging does here.
//!
//! Spec: `fixed:COST` (e.g. `fixed:9.5ms`), or `fixed:cost=COST`; `write=COST` gives writes a
//! different cost (default: the same).

use super::{to_ns, Device, DeviceRequest, Service, Spec};
use crate::error::ConfigError;
use crate::trace::Op;

/// The DULO paper's cost: 6.5 ms average seek + 3.0 ms average rotation (Section 3.1).
pub const DULO_COST_NS: f64 = 9.5e6;

#[derive(Debug, Clone)]
pub struct Fixed {
    /// Cost of a read, ns.
    pub read_ns: f64,
    /// Cost of a write, ns.
    pub write_ns: f64,
    busy_until: u64,
}

impl Fixed {
    pub fn new(cost_ns: f64) -> Fixed {
        Fixed { read_ns: cost_ns, write_ns: cost_ns, busy_until: 0 }
    }

    pub fn from_spec(mut s: Spec) -> Result<Fixed, ConfigError> {
        let positional = match s.preset.clone() {
            Some(p) => Some(super::parse_duration("fixed", &p)?),
            None => None,
        };
        let cost = s.duration_ns("cost", positional.unwrap_or(DULO_COST_NS))?;
        if positional.is_some() && s.params.iter().any(|(k, _, _)| k == "cost") {
            return Err(ConfigError::new("fixed.cost", "cost given twice"));
        }
        let write = s.duration_ns("write", cost)?;
        s.finish(&["cost", "write"])?;
        Ok(Fixed { read_ns: cost, write_ns: write, busy_until: 0 })
    }
}

impl Device for Fixed {
    fn name(&self) -> String {
        format!("fixed:{}ms", self.read_ns / 1e6)
    }

    fn service(&mut self, req: &DeviceRequest, now_ns: u64) -> Service {
        let start = now_ns.max(self.busy_until);
        let cost = if req.op == Op::Write { self.write_ns } else { self.read_ns };
        let finish = to_ns(start as f64 + cost, start);
        self.busy_until = finish;
        Service { start_ns: start, finish_ns: finish, cache_hit: false }
    }

    fn parameters(&self) -> serde_json::Value {
        serde_json::json!({
            "model": "fixed",
            "read_ms": self.read_ns / 1e6,
            "write_ms": self.write_ns / 1e6,
            "source": "DULO (ACM TOS 2007) Sec. 3.1: 6.5 ms average seek + 3.0 ms average rotation, Ultrastar 18ZX",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::build;

    #[test]
    fn one_cost_per_request_one_at_a_time() {
        let mut d = build("fixed:9.5ms").unwrap();
        let a = d.service(&DeviceRequest::read(0, 8), 0);
        assert_eq!((a.start_ns, a.finish_ns), (0, 9_500_000));
        // Handed over while busy: waits; size and position do not matter.
        let b = d.service(&DeviceRequest::read(1 << 30, 2048), 1_000);
        assert_eq!((b.start_ns, b.finish_ns), (9_500_000, 19_000_000));
        let c = d.service(&DeviceRequest::write(5, 1), 50_000_000);
        assert_eq!((c.start_ns, c.finish_ns), (50_000_000, 59_500_000));
        let mut w = build("fixed:cost=2ms,write=3ms").unwrap();
        assert_eq!(w.service(&DeviceRequest::write(0, 1), 0).finish_ns, 3_000_000);
        assert!(build("fixed:2ms,cost=3ms").is_err());
    }
}
