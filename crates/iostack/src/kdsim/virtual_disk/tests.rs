use super::*;
use crate::sched::SchedLimits;

/// A disk whose every request takes 1 ms (one trained value, repeated everywhere).
fn disk(max_blocks: u32) -> VirtualDisk {
    let mut t = TableModel::new(1 << 30, 64).unwrap();
    t.observe(Op::Read, 4096, 0, 1_000_000);
    let sched = crate::sched::build("noop", SchedLimits::new(max_blocks, 4096)).unwrap();
    VirtualDisk::new(sched, t, 4096)
}

fn read(id: u64, pid: u32, block: u64, sync: bool) -> VirtualRequest {
    VirtualRequest { id, pid, op: Op::Read, block, blocks: 1, sync, issued_behind: None, issued_queued: None, awaits_real: false }
}

fn done(vd: &mut VirtualDisk) -> Vec<(u64, u64, u64)> {
    vd.take_completed().iter().map(|c| (c.id, c.queued_ns, c.finish_ns)).collect()
}

const MS: u64 = 1_000_000;

/// The ids in the waiting queue, in arrival order.
fn waiting_ids(vd: &VirtualDisk) -> Vec<u64> {
    let mut v: Vec<(u64, u64)> = vd.waiting.values().flat_map(|q| q.items.iter().map(|p| (p.serial, p.req.id))).collect();
    v.sort_unstable();
    v.into_iter().map(|(_, id)| id).collect()
}

#[test]
fn r1_writes_move_at_once() {
    let mut vd = disk(1);
    vd.submit(read(0, 1, 0, true), 0);
    // Far apart so that nothing merges; all writes queued at once behind the read.
    for i in 1..4 {
        vd.submit(VirtualRequest { id: i, pid: 1, op: Op::Write, block: 100 * i, blocks: 1, sync: false, issued_behind: None, issued_queued: None, awaits_real: false }, 0);
    }
    vd.drain();
    assert_eq!(done(&mut vd), vec![(0, 0, MS), (1, 0, 2 * MS), (2, 0, 3 * MS), (3, 0, 4 * MS)]);
}

#[test]
fn r2_a_sync_read_waits_for_the_previous_one() {
    let mut vd = disk(1);
    vd.submit(read(0, 1, 0, true), 0);
    vd.submit(read(1, 1, 50, true), 0);
    // Another process's sync read is not held back.
    vd.submit(read(2, 2, 90, true), 0);
    vd.drain();
    // Request 1 enters the scheduler only when request 0 completes (at 1 ms); its service time
    // leaves out the waiting.
    let c = done(&mut vd);
    assert_eq!(c, vec![(0, 0, MS), (2, 0, 2 * MS), (1, MS, 3 * MS)]);
}

#[test]
fn r2_a_sync_read_already_in_the_scheduler_blocks_the_next() {
    let mut vd = disk(1);
    // Process 2 keeps the disk busy; process 1's first sync read is queued in the scheduler
    // (not dispatched) when its second arrives.
    vd.submit(read(0, 2, 500, false), 0);
    vd.submit(read(1, 1, 0, true), 0);
    assert_eq!(vd.waiting_len, 0);
    vd.submit(read(2, 1, 50, true), 10);
    assert_eq!(vd.waiting_len, 1, "held while the first is in the scheduler");
    vd.drain();
    assert_eq!(done(&mut vd), vec![(0, 0, MS), (1, 0, 2 * MS), (2, 2 * MS, 3 * MS)]);
}

#[test]
fn r2_r3_async_reads_and_order() {
    let mut vd = disk(1);
    vd.submit(read(0, 1, 0, true), 0);
    // An async read of the same process goes in even with its sync read in the scheduler...
    vd.submit(read(1, 1, 100, false), 0);
    assert_eq!(vd.waiting_len, 0);
    // ...but not past a sync read of its process that waits ahead of it (R3).
    vd.submit(read(2, 1, 200, true), 0);
    vd.submit(read(3, 1, 300, false), 0);
    assert_eq!(waiting_ids(&vd), vec![2, 3]);
    // A sync read may enter while an async read of its process is in the scheduler.
    vd.drain();
    let c = done(&mut vd);
    assert_eq!(c[0], (0, 0, MS));
    assert_eq!(c[1], (1, 0, 2 * MS));
    // 2 and 3 moved together when 0 completed, in arrival order.
    assert_eq!(c[2], (2, MS, 3 * MS));
    assert_eq!(c[3], (3, MS, 4 * MS));
}

#[test]
fn r4_a_child_starts_after_its_parents_last_request_and_a_waiting_parent_after_its_exit() {
    let mut vd = disk(1);
    vd.submit(read(0, 1, 0, false), 0);
    vd.submit(read(1, 1, 100, false), 0);
    vd.fork(1, 7, true);
    // The child's first request waits for the parent's request 1 to be served.
    vd.submit(read(2, 7, 200, false), 0);
    assert_eq!(vd.waiting_len, 1);
    // The parent waits for the child: its new request is held until the exit.
    vd.submit(read(3, 1, 300, false), 0);
    vd.advance(2 * MS);
    assert_eq!(waiting_ids(&vd), vec![3], "child moved once request 1 was served");
    vd.advance(3 * MS);
    vd.exit(7, 10 * MS);
    vd.drain();
    assert_eq!(done(&mut vd), vec![(0, 0, MS), (1, 0, 2 * MS), (2, 2 * MS, 3 * MS), (3, 10 * MS, 11 * MS)]);
}

/// R4 holds every request of the child, not only its first: a write or an asynchronous read
/// the child issues next waits too; a child that does not wait is not waited for.
#[test]
fn r4_holds_all_of_a_new_childs_requests() {
    let mut vd = disk(1);
    vd.submit(read(0, 1, 0, true), 0);
    vd.fork(1, 8, false);
    vd.submit(read(1, 8, 100, false), 0);
    vd.submit(VirtualRequest { id: 2, pid: 8, op: Op::Write, block: 300, blocks: 1, sync: false, issued_behind: None, issued_queued: None, awaits_real: false }, 0);
    vd.submit(read(3, 8, 200, false), 0);
    assert_eq!(waiting_ids(&vd), vec![1, 2, 3], "every request of the child waits for the parent's request 0");
    // The parent did not wait: its next request moves at once (R2: after its sync read 0).
    vd.submit(read(4, 1, 400, false), 0);
    assert_eq!(waiting_ids(&vd), vec![1, 2, 3]);
    vd.drain();
    assert_eq!(done(&mut vd), vec![(0, 0, MS), (4, 0, 2 * MS), (1, MS, 3 * MS), (2, MS, 4 * MS), (3, MS, 5 * MS)]);
}

/// R4 from a trace's events: a wait holds only the parent's requests issued after it (one
/// issued before still moves), until the child's exit.
#[test]
fn r4_from_process_events_holds_only_requests_after_the_wait() {
    let mut vd = disk(1);
    vd.submit(read(0, 2, 900, false), 0);
    vd.submit(read(1, 1, 0, true), 0);
    vd.submit(read(2, 1, 100, false), 0);
    let e = |kind, pid, ppid| ProcessEvent { before: 0, time_ns: 0, kind, pid, ppid };
    vd.process_event(&e(ProcessEventKind::Fork, 7, 1), 0);
    vd.process_event(&e(ProcessEventKind::Wait, 7, 1), 0);
    vd.submit(read(3, 1, 200, false), 0);
    vd.submit(read(4, 7, 300, false), 0);
    assert_eq!(waiting_ids(&vd), vec![3, 4], "the request after the wait and the child's wait");
    vd.process_event(&e(ProcessEventKind::Exit, 7, 1), 10 * MS);
    vd.drain();
    let ids: Vec<u64> = done(&mut vd).iter().map(|c| c.0).collect();
    assert_eq!(ids, vec![0, 1, 2, 4, 3]);
}

/// An exit reported by the real system while the virtual disk still has reads of the child to
/// serve takes effect once they are served: the waiting parent's next request does not run
/// beside them (a virtual disk lagging the real one would otherwise interleave the two).
#[test]
fn r4_an_exit_waits_for_the_childs_reads_on_the_virtual_disk() {
    let mut vd = disk(1);
    vd.fork(1, 7, true);
    vd.submit(read(0, 7, 100, true), 0);
    vd.submit(read(1, 7, 300, false), 0);
    // The real child exited at 0.5 ms; here its reads end at 1 and 2 ms.
    vd.exit(7, MS / 2);
    vd.submit(read(2, 1, 500, true), MS / 2);
    assert_eq!(waiting_ids(&vd), vec![2], "the parent still waits for its child");
    vd.drain();
    assert_eq!(done(&mut vd), vec![(0, 0, MS), (1, 0, 2 * MS), (2, 2 * MS, 3 * MS)]);
    // Once the exit took effect, nothing of the child is kept.
    assert!(!vd.procs.contains_key(&7));
    // A child with nothing left to serve exits at once.
    vd.fork(1, 8, true);
    vd.submit(read(3, 8, 700, true), 3 * MS);
    vd.advance(5 * MS);
    vd.exit(8, 5 * MS);
    vd.submit(read(4, 1, 900, true), 5 * MS);
    assert!(waiting_ids(&vd).is_empty());
}

/// Copies withdrawn from the waiting queue never reach the scheduler and are not reported;
/// those in the scheduler or in service finish. For R4 the withdrawn count as served: an exit
/// waiting for them takes effect and its waiting parent goes on.
#[test]
fn withdrawn_copies_are_not_served_and_count_as_served_for_r4() {
    let mut vd = disk(1);
    vd.fork(1, 7, true);
    vd.submit(read(0, 7, 100, true), 0); // in service 0..1 ms
    vd.submit(read(1, 7, 300, true), 0); // waits behind it (R2)
    vd.submit(read(2, 7, 500, true), 0);
    vd.exit(7, MS / 2); // pending: the child's reads are not all served here
    vd.submit(read(3, 1, 700, true), MS / 2); // the parent waits for the child (R4)
    assert_eq!(waiting_ids(&vd), vec![1, 2, 3]);
    let gone = vd.withdraw_waiting(MS / 2, |r| r.pid == 7);
    assert_eq!(gone, vec![1, 2]);
    vd.drain();
    // The child's read in service finishes; then its exit takes effect and the parent's moves.
    assert_eq!(done(&mut vd), vec![(0, 0, MS), (3, MS, 2 * MS)]);
    assert!(!vd.procs.contains_key(&7));
    assert_eq!(vd.outstanding(), 0);
}

/// R5: a read issued when all but `n` of its process's earlier reads had completed at the
/// real disk waits until at most `n` are unserved here; a feed that does not know gives no
/// `n` and the read moves by R3 alone. Writes are not held (R1).
#[test]
fn r5_a_read_issued_after_earlier_ones_completed_waits_for_them_here() {
    let run = |known: bool| {
        let mut vd = disk(1);
        let behind = |n: u32| known.then_some(n);
        vd.submit(read(0, 2, 900, false), 0);
        // A readahead pipeline: A, then B while A is outstanding, then C once both completed
        // (in the real system); here all three arrive while the disk is busy with request 0.
        vd.submit(VirtualRequest { issued_behind: behind(0), issued_queued: None, ..read(1, 1, 0, false) }, 0);
        vd.submit(VirtualRequest { issued_behind: behind(1), issued_queued: None, ..read(2, 1, 50, false) }, 0);
        vd.submit(VirtualRequest { issued_behind: behind(0), issued_queued: None, ..read(3, 1, 100, false) }, 0);
        vd.submit(VirtualRequest { id: 4, pid: 1, op: Op::Write, block: 300, blocks: 1, sync: false, issued_behind: None, issued_queued: None, awaits_real: false }, 0);
        let waiting = waiting_ids(&vd);
        vd.drain();
        (waiting, done(&mut vd))
    };
    let (waiting, c) = run(true);
    assert_eq!(waiting, vec![3], "C waits for A and B; the write does not");
    assert_eq!(c, vec![(0, 0, MS), (1, 0, 2 * MS), (2, 0, 3 * MS), (4, 0, 4 * MS), (3, 3 * MS, 5 * MS)]);
    let (waiting, c) = run(false);
    assert!(waiting.is_empty());
    assert_eq!(c[3], (3, 0, 4 * MS));
}

/// R5, dispatch: a read issued when its process's earlier read was already dispatched at the
/// real disk (and so could not merge with it there) does not merge with that read's copy
/// still queued here behind another request; issued while the earlier one was still queued
/// at the real disk, or from a feed that does not know, it merges as the real one did.
#[test]
fn r5_a_read_issued_after_an_earlier_one_was_dispatched_does_not_merge_with_it_here() {
    let run = |queued: Option<u32>| {
        let mut vd = disk(8);
        vd.submit(read(9, 2, 900, false), 0);
        // A (blocks 0-1) is issued and dispatched at the real disk; B (blocks 2-3), the
        // next readahead, is issued while A is in service there. Here A waits behind 9.
        vd.submit(VirtualRequest { blocks: 2, issued_behind: Some(0), issued_queued: Some(0), ..read(0, 1, 0, true) }, 0);
        vd.submit(VirtualRequest { blocks: 2, issued_behind: Some(1), issued_queued: queued, ..read(1, 1, 2, false) }, MS / 2);
        vd.drain();
        done(&mut vd)
    };
    // Dispatched at the real disk: B enters the scheduler when A is dispatched, and is
    // served after it.
    assert_eq!(run(Some(0)), vec![(9, 0, MS), (0, 0, 2 * MS), (1, MS, 3 * MS)]);
    // Still queued at the real disk, or not known: one request serves both.
    for q in [Some(1), None] {
        let c = run(q);
        assert_eq!(c[1].2, c[2].2, "{q:?}: {c:?}");
    }
}

/// R6: process 1's first read is served here in 1 ms but in the running system only at 20 ms,
/// and its next read arrives at 21 ms. CFQ idles for process 1 from 20 ms, so the next read
/// is served before process 2's; without R6 the idle wait runs out at 9 ms and process 2's read
/// goes first.
#[test]
fn r6_the_scheduler_hears_of_a_completion_no_earlier_than_the_running_system_had_it() {
    let order = |awaits_real: bool| {
        let mut t = TableModel::new(1 << 30, 64).unwrap();
        t.observe(Op::Read, 4096, 0, MS);
        let sched = crate::sched::build("cfq", SchedLimits::new(1, 4096)).unwrap();
        let mut vd = VirtualDisk::new(sched, t, 4096);
        vd.submit(VirtualRequest { awaits_real, ..read(0, 1, 0, true) }, 0);
        vd.submit(read(1, 2, 5000, true), MS / 2);
        vd.real_done(0, 20 * MS);
        vd.submit(VirtualRequest { awaits_real, ..read(2, 1, 1, true) }, 21 * MS);
        vd.drain();
        let mut d = done(&mut vd);
        d.sort_by_key(|&(_, _, finish)| finish);
        d.into_iter().map(|(id, _, _)| id).collect::<Vec<_>>()
    };
    assert_eq!(order(true), vec![0, 2, 1]);
    assert_eq!(order(false), vec![0, 1, 2]);
}

#[test]
fn merged_copies_share_the_io_time_by_blocks() {
    let mut vd = disk(8);
    let mut t = TableModel::new(1 << 30, 64).unwrap();
    t.observe(Op::Read, 3 * 4096, 0, 3 * MS);
    t.observe(Op::Read, 4096, 0, MS);
    vd.table = t;
    vd.submit(read(9, 3, 500, false), 0);
    vd.submit(VirtualRequest { id: 0, pid: 1, op: Op::Read, block: 0, blocks: 2, sync: false, issued_behind: None, issued_queued: None, awaits_real: false }, 0);
    vd.submit(read(1, 2, 2, false), 0);
    vd.drain();
    let c = vd.take_completed();
    assert_eq!(c.len(), 3);
    // 0 and 1 were merged into one 3-block request; its time is shared 2:1.
    let io: Vec<f64> = c[1..].iter().map(|c| c.io_ns).collect();
    assert!((io[0] - 2.0 * io[1]).abs() < 1e-6, "{io:?}");
    assert_eq!(c[1].finish_ns, c[2].finish_ns);
}

/// An idle disk starts service only when the instant of an arrival is over: the demand block
/// and the readahead block of one read, handed over together, are served as one request (as
/// the real scheduler merges them); a copy arriving later is not merged into a request that
/// already started.
#[test]
fn copies_of_one_instant_merge_on_an_idle_disk() {
    let mut vd = disk(8);
    vd.submit(read(0, 1, 10, true), 5 * MS);
    vd.submit(read(1, 1, 11, false), 5 * MS);
    vd.submit(read(2, 1, 12, false), 5 * MS + 1);
    vd.drain();
    let c = vd.take_completed();
    assert_eq!(c.iter().map(|c| (c.id, c.queued_ns, c.finish_ns)).collect::<Vec<_>>(), vec![(0, 5 * MS, 6 * MS), (1, 5 * MS, 6 * MS), (2, 5 * MS + 1, 7 * MS)]);
    assert!((c[0].io_ns - c[1].io_ns).abs() < 1e-6 && (c[0].io_ns + c[1].io_ns - MS as f64).abs() < 1e-6);
}

/// Scanning only the processes whose requests may have become movable makes the same moves
/// as scanning every process at every arrival and completion: random requests of a few
/// processes with forks, waits and exits, run both ways.
#[test]
fn dirty_scans_move_what_full_scans_move() {
    let mut completed = 0;
    for seed in 1..40u64 {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let mut rnd = move |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let ops: Vec<(u64, u64, u64, u64)> = (0..300).map(|_| (rnd(10), rnd(6), rnd(64), rnd(3 * MS / 2))).collect();
        let run = |scan_all: bool| {
            let mut vd = disk(4);
            vd.scan_all = scan_all;
            let (mut now, mut id) = (0, 0);
            for &(kind, pid, block, dt) in &ops {
                now += dt;
                let pid = pid as u32 + 1;
                match kind {
                    0 => vd.fork(pid, pid + 1, block % 2 == 0),
                    1 => vd.wait(pid, pid % 6 + 1),
                    2 => vd.exit(pid, now),
                    k => {
                        let op = if k == 3 { Op::Write } else { Op::Read };
                        vd.submit(VirtualRequest { id, pid, op, block: block * 3, blocks: 1 + (block % 3) as u32, sync: k >= 7, issued_behind: (block % 4 != 3).then_some((block % 4) as u32), issued_queued: (block % 4 != 3).then_some((block % 2) as u32 & (block % 4) as u32), awaits_real: false }, now);
                        id += 1;
                    }
                }
            }
            vd.drain();
            (vd.take_completed(), waiting_ids(&vd))
        };
        let (dirty, full) = (run(false), run(true));
        completed += dirty.0.len();
        assert_eq!(dirty, full, "seed {seed}");
    }
    // Holds on children that never exit keep many requests waiting; enough still move.
    assert!(completed > 1000, "{completed} completed in all");
}

#[test]
fn part_matcher_splits_merged_requests() {
    let mut m = PartMatcher::default();
    m.add(Op::Read, 10, 2, 'a');
    m.add(Op::Read, 12, 1, 'b');
    m.add(Op::Read, 10, 2, 'c');
    m.add(Op::Write, 12, 1, 'w');
    assert_eq!(m.take(Op::Read, 10, 3), vec![(2, 'a'), (1, 'b')]);
    assert_eq!(m.take(Op::Read, 10, 2), vec![(2, 'c')]);
    assert_eq!(m.take(Op::Write, 12, 1), vec![(1, 'w')]);
    assert!(m.is_empty());
}
