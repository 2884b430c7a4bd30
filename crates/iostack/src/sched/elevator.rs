//! The request choice Linux's CFQ and anticipatory schedulers share (Linux 2.6.20,
//! `as_choose_req` in block/as-iosched.c, lifted into CFQ as `cfq_choose_req` in
//! block/cfq-iosched.c).
//!
//! From the end of the last dispatched request (the head), the next request is the nearest one
//! in a one-way elevator that tolerates short backward seeks: a request at or after the head
//! costs its forward distance; one behind the head by at most `back_max` costs `penalty` times
//! its backward distance (twice, by default: seeking back is dearer than forward); one further
//! behind is not a candidate ("wrapped"). Of the nearest candidate ahead and the nearest behind,
//! the cheaper wins, the one ahead on a tie. With no candidate, the sweep wraps to the lowest
//! queued request, as both kernels do when every request lies behind the head. Distances are
//! measured on the head's device; requests of other devices only count once the sweep wraps.

use super::queue::{Head, Id, RequestQueue};

/// The queued request to serve next from `head` (see the module comment); `back_max` is in
/// blocks.
pub fn choose(q: &RequestQueue, head: Head, back_max: u64, penalty: u64) -> Option<Id> {
    let ahead = q.at_or_after(head.device, head.block).filter(|&id| q.get(id).device == head.device);
    let behind = q.before(head.device, head.block).filter(|&id| {
        let r = q.get(id);
        r.device == head.device && head.block - r.block <= back_max
    });
    match (ahead, behind) {
        (Some(a), Some(b)) => {
            let da = q.get(a).block - head.block;
            let db = (head.block - q.get(b).block).saturating_mul(penalty);
            Some(if db < da { b } else { a })
        }
        (Some(a), None) => Some(a),
        (None, Some(b)) => Some(b),
        (None, None) => q.at_or_after(head.device, head.block).or_else(|| q.lowest()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::{Cause, IoRequest};
    use crate::trace::Op;

    fn q(blocks: &[u64]) -> RequestQueue {
        let mut q = RequestQueue::new(1);
        for (i, &b) in blocks.iter().enumerate() {
            q.add(IoRequest { op: Op::Read, device: 0, block: b, blocks: 1, sync: true, cause: Cause::Demand, arrival_ns: i as u64, pid: 0 });
        }
        q
    }

    #[test]
    fn short_back_seeks_cost_double_long_ones_wrap() {
        let head = Head { device: 0, block: 100 };
        // 95 is 5 back (cost 10), 108 is 8 ahead: forward wins.
        let s = q(&[95, 108]);
        assert_eq!(s.get(choose(&s, head, 50, 2).unwrap()).block, 108);
        // 97 is 3 back (cost 6) against 8 ahead: back wins.
        let s = q(&[97, 108]);
        assert_eq!(s.get(choose(&s, head, 50, 2).unwrap()).block, 97);
        // Beyond back_max, behind requests are not candidates.
        let s = q(&[10, 500]);
        assert_eq!(s.get(choose(&s, head, 50, 2).unwrap()).block, 500);
        // Everything far behind: wrap to the lowest.
        let s = q(&[40, 10]);
        assert_eq!(s.get(choose(&s, head, 50, 2).unwrap()).block, 10);
    }
}
