//! AIR and AIP: the five benchmarks in a row and in parallel (KDSim/REDCAP paper, l.195-197).
//!
//! - AIR ("all in a row"): TAC; 512k-SR; 8k-SR; LKR; IOR-R, in that order, without a reboot, so
//!   page-cache contents carry over (l.298-306). Process `p` runs its part of each benchmark,
//!   then its part of the next, with the same pid. The trace format has no barrier between
//!   processes, so with several processes each one moves on when its own part is done rather than
//!   when all are (with one process, the paper's order exactly).
//! - AIP ("all in parallel"): the five benchmarks at once, `processes` processes each, every
//!   benchmark with its own pids and files. The paper relaunches a benchmark that finishes until
//!   every benchmark has completed at least once (l.197). That depends on when the benchmarks
//!   finish in the simulated run, so the trace holds one run of each and marks it as a
//!   relaunchable benchmark: before each benchmark process's first request, a `launch` event
//!   from the benchmark's launcher (pid `1 + 5·processes + b` for benchmark `b`, a process that
//!   issues nothing); the timed replay applies the rule (`engine/timed/engine/relaunch.rs`). With
//!   `runs=` given as five counts, each benchmark instead runs that many times back to back with
//!   no launch events (the fixed form, for a replay that should not relaunch, e.g. open loop).
//!   A relaunch, or a fixed rerun, reads the same files again.
//!
//! Every benchmark has its own files, placed one region after another (TAC, 512k-SR, 8k-SR, LKR,
//! IOR). Sizes are those of the single benchmarks; `file_size` and `lkr_files`/`lkr_dirs` shrink
//! them for quick runs.
//!
//! - AIR as the paper ran it (`form=paper`, [`Benchmarks::in_a_row_paper`]): its account of AIR
//!   (l.298-306) has TAC, 512k-SR, 8k-SR and IOR-R read *one* file per process (512k-SR finds the
//!   part of the file TAC left in the page cache, IOR-R the third 8k-SR left), and times each
//!   benchmark on its own (Figure 5), so a benchmark's processes start together once the previous
//!   benchmark's have all finished. Process `q` of benchmark `b` has pid `1 + b·processes + q`; a
//!   shell (pid `1 + 5·processes`, which issues nothing) forks each benchmark's processes and
//!   waits for every one before it forks the next benchmark's. The files are laid out as IOR
//!   writes them in parallel (the paper created its files with IOR, l.186), the LKR trees after
//!   them.

use super::ior::Ior;
use super::lkr::Lkr;
use super::streams::{steps, FileMap, Merged, Placement, ProcStream, Step};
use super::stride::Stride;
use super::tac::Tac;
use super::{Common, GenParams, GeneratorInfo};
use crate::error::ConfigError;
use crate::trace::ProcessEventKind;

/// AIP's parameters; AIR takes all but the last.
const PARAMS: &[(&str, &str)] = &[
    ("file_size", "bytes per file of TAC, the strided readers and IOR-R (default 1GiB)"),
    ("lkr_files", "files per LKR tree (default 19000)"),
    ("lkr_dirs", "directories per LKR tree (default 1200)"),
    ("lkr_cat", "LKR's cat: child (a process per file, with fork/wait/exit events) or inline (default child)"),
    ("runs", "relaunch (default: the replay relaunches a finished benchmark until each has completed once) or fixed counts TAC:512k-SR:8k-SR:LKR:IOR-R such as 1:1:2:1:3"),
];

/// AIR's parameters: AIP's but `runs`, and the form.
const AIR_PARAMS: &[(&str, &str)] = &[
    PARAMS[0],
    PARAMS[1],
    PARAMS[2],
    PARAMS[3],
    ("form", "own: each benchmark its own files, each process going on when its own part is done (default); paper: one file per process for TAC, 512k-SR, 8k-SR and IOR-R, each benchmark starting when all processes of the one before have finished"),
];

pub const AIR: GeneratorInfo = GeneratorInfo {
    name: "air",
    summary: "AIR: TAC, 512k-SR, 8k-SR, LKR, IOR-R in a row",
    params: AIR_PARAMS,
    common: &["processes", "seed"],
    build: |c, p| {
        let b = Benchmarks::from_params("air", p, c)?;
        let streams = match p.text("form").as_deref().map(str::trim) {
            None | Some("own") => b.in_a_row(c.processes),
            Some("paper") => b.in_a_row_paper(c.processes),
            Some(other) => return Err(ConfigError::unknown("air.form", "form", other, &["own", "paper"])),
        };
        Ok(Box::new(Merged::with_events("air", streams)))
    },
};

pub const AIP: GeneratorInfo = GeneratorInfo {
    name: "aip",
    summary: "AIP: TAC, 512k-SR, 8k-SR, LKR, IOR-R in parallel, each with its own processes and files",
    params: PARAMS,
    common: &["processes", "seed"],
    build: |c, p| {
        let b = Benchmarks::from_params("aip", p, c)?;
        let runs = match p.text("runs") {
            None => Runs::Relaunch,
            Some(t) if t.trim().eq_ignore_ascii_case("relaunch") => Runs::Relaunch,
            Some(t) => {
                let bad = || ConfigError::new("aip.runs", format!("`{t}` is neither `relaunch` nor five counts like 1:1:2:1:3"));
                let v: Vec<u32> = t.split(':').map(|x| x.trim().parse::<u32>()).collect::<Result<_, _>>().map_err(|_| bad())?;
                let runs = <[u32; 5]>::try_from(v).map_err(|_| bad())?;
                if runs.iter().any(|r| !(1..=MAX_RUNS).contains(r)) {
                    return Err(ConfigError::new("aip.runs", format!("`{}` is out of range: every benchmark runs 1 to {MAX_RUNS} times", runs.map(|r| r.to_string()).join(":"))));
                }
                Runs::Fixed(runs)
            }
        };
        Ok(Box::new(Merged::with_events("aip", b.in_parallel(c.processes, runs))))
    },
};

/// Most runs of one benchmark in `aip` (documented range of `runs`).
const MAX_RUNS: u32 = 1024;

/// How AIP's benchmarks run again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Runs {
    /// Once in the trace, marked with launch events: the replay relaunches each until every
    /// benchmark has completed once (the paper's rule).
    Relaunch,
    /// This many times each (TAC, 512k-SR, 8k-SR, LKR, IOR-R), back to back, no launch events.
    Fixed([u32; 5]),
}

/// The five benchmarks with their sizes.
#[derive(Debug, Clone, Copy)]
pub struct Benchmarks {
    pub tac: Tac,
    pub sr512: Stride,
    pub sr8: Stride,
    pub lkr: Lkr,
    pub ior: Ior,
}

impl Benchmarks {
    pub fn from_params(name: &str, p: &mut GenParams, c: &Common) -> Result<Benchmarks, ConfigError> {
        let file_size = p.bytes_in("file_size", 1 << 30, 1, super::MAX_FILE_SIZE)?;
        if file_size == 0 {
            return Err(ConfigError::new(format!("{name}.file_size"), "must be positive"));
        }
        let d = Lkr::default();
        let child_cat = super::lkr::child_cat(p.text("lkr_cat"), &format!("{name}.lkr_cat"))?;
        let lkr = Lkr { files: p.u64_in("lkr_files", d.files, 0, super::lkr::MAX_TREE)?, dirs: p.u64_in("lkr_dirs", d.dirs, 1, super::lkr::MAX_TREE)?, seed: c.seed, child_cat, ..d };
        if lkr.dirs == 0 {
            return Err(ConfigError::new(format!("{name}.lkr_dirs"), "at least one directory (the root)"));
        }
        let b = Benchmarks {
            tac: Tac { file_size, ..Tac::default() },
            sr512: Stride { file_size, ..Stride::sr512k() },
            sr8: Stride { file_size, ..Stride::sr8k() },
            lkr,
            ior: Ior { file_size, ..Ior::default() },
        };
        b.lkr.check_size(c.processes, &format!("{name}.lkr_files"))?;
        b.ior.check_layout(c.processes, &format!("{name}.file_size"))?;
        Ok(b)
    }

    /// Benchmark `b` (in AIR order: TAC, 512k-SR, 8k-SR, LKR, IOR-R), placed from `at`.
    fn bench(&self, b: usize, processes: u32, at: &mut Placement) -> Vec<ProcStream> {
        let plain = match b {
            0 => self.tac.streams(processes, at),
            1 => self.sr512.streams(processes, at),
            2 => self.sr8.streams(processes, at),
            3 => return self.lkr.process_streams(processes, at),
            _ => self.ior.streams(processes, at),
        };
        plain.into_iter().map(steps).collect()
    }

    /// AIR: process `p` runs the five benchmarks one after another.
    pub fn in_a_row(&self, processes: u32) -> Vec<ProcStream> {
        let mut at = Placement::default();
        let mut per_proc: Vec<Vec<ProcStream>> = (0..processes).map(|_| Vec::new()).collect();
        for b in 0..5 {
            for (p, s) in self.bench(b, processes, &mut at).into_iter().enumerate() {
                per_proc[p].push(s);
            }
        }
        per_proc.into_iter().map(|v| Box::new(v.into_iter().flatten()) as ProcStream).collect()
    }

    /// AIR as the paper ran it (the module comment): one file per process for TAC, 512k-SR,
    /// 8k-SR and IOR-R, the LKR trees after the files, benchmark `b`'s process `q` with pid
    /// `1 + b·processes + q`, and a shell (the first stream, pid `1 + 5·processes`) that forks
    /// each benchmark's processes and waits for all of them before the next benchmark's.
    pub fn in_a_row_paper(&self, processes: u32) -> Vec<ProcStream> {
        let files = self.ior.layout(processes, &Placement::default());
        let end = files.iter().map(FileMap::end_block).max().unwrap_or(0);
        let n = processes;
        let shell = 1 + 5 * n;
        let mut at = Placement { block: end, file_id: 1 + n as u64, pid: 1 + 3 * n, ..Placement::default() };
        let lkr = self.lkr.process_streams(n, &mut at);
        let mut out: Vec<ProcStream> = Vec::new();
        let mut events = Vec::new();
        for b in 0..5u32 {
            let pids = (0..n).map(|q| 1 + b * n + q);
            events.extend(pids.clone().map(|p| Step::event(ProcessEventKind::Fork, p, shell)));
            events.extend(pids.map(|p| Step::event(ProcessEventKind::Wait, p, shell)));
        }
        out.push(Box::new(events.into_iter()));
        for b in 0..5u32 {
            if b == 3 {
                continue;
            }
            for (q, f) in files.iter().enumerate() {
                let pid = 1 + b * n + q as u32;
                let f = f.clone();
                out.push(steps(match b {
                    0 => self.tac.reader(f, pid),
                    1 => self.sr512.reader(f, pid),
                    2 => self.sr8.reader(f, pid),
                    _ => self.ior.reader(f, pid),
                }));
            }
        }
        out.extend(lkr);
        out
    }

    /// AIP: the benchmarks side by side, benchmark `b`'s process `q` with pid `1 + b·processes + q`;
    /// each benchmark is launched by launcher `1 + 5·processes + b` to be relaunched, or run the
    /// fixed number of times over the same files.
    pub fn in_parallel(&self, processes: u32, runs: Runs) -> Vec<ProcStream> {
        let mut at = Placement::default();
        let mut out = Vec::new();
        let counts = match runs {
            Runs::Relaunch => [1; 5],
            Runs::Fixed(n) => n,
        };
        for (b, &n) in counts.iter().enumerate() {
            let start = Placement { pid: 1 + b as u32 * processes, ..at };
            let mut per_proc: Vec<Vec<ProcStream>> = (0..processes).map(|_| Vec::new()).collect();
            for _ in 0..n {
                // A relaunch reads the same files; its children get new pids.
                at = Placement { child_pid: at.child_pid, ..start };
                for (q, s) in self.bench(b, processes, &mut at).into_iter().enumerate() {
                    per_proc[q].push(s);
                }
            }
            let launcher = 1 + 5 * processes + b as u32;
            out.extend(per_proc.into_iter().enumerate().map(|(q, v)| {
                let launch = (runs == Runs::Relaunch).then(|| Step::event(ProcessEventKind::Launch, start.pid + q as u32, launcher));
                Box::new(launch.into_iter().chain(v.into_iter().flatten())) as ProcStream
            }));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{read_all, TraceReader};

    fn small() -> Benchmarks {
        let c = Common::default();
        Benchmarks::from_params("air", &mut GenParams::parse("air", "file_size=4MiB,lkr_files=50,lkr_dirs=5").unwrap(), &c).unwrap()
    }

    #[test]
    fn air_runs_the_five_in_order_per_process() {
        let b = small();
        let v = read_all(&mut Merged::with_events("air", b.in_a_row(2))).unwrap();
        let per = |pid| v.iter().filter(|r| r.pid == pid).cloned().collect::<Vec<_>>();
        let one = per(1);
        let n = [1024 / 2, Stride { file_size: 4 << 20, ..Stride::sr512k() }.count() as usize, Stride { file_size: 4 << 20, ..Stride::sr8k() }.count() as usize];
        // TAC first (backward), then the strided readers, LKR, and 64 sequential IOR reads last.
        assert!(one[..n[0]].windows(2).all(|w| w[1].offset < w[0].offset));
        assert_eq!(one[n[0]].length, 4096);
        assert!(one[one.len() - 64..].windows(2).all(|w| w[1].offset == w[0].offset + 65536));
        assert_eq!(one.len(), per(2).len());
        // LKR's cats are child processes: 50 files per copy, each its own pid.
        let children: std::collections::BTreeSet<u32> = v.iter().map(|r| r.pid).filter(|&p| p >= super::super::streams::CHILD_PID_BASE).collect();
        assert_eq!(children.len(), 2 * 50);
        assert!(v.iter().all(|r| r.pid == 1 || r.pid == 2 || children.contains(&r.pid)));
        // No file is read by both processes.
        let files = |r: &[crate::trace::Request]| r.iter().filter_map(|q| q.file.map(|f| f.id)).collect::<std::collections::HashSet<_>>();
        assert!(files(&one).is_disjoint(&files(&per(2))));
    }

    /// The paper's AIR: the four file benchmarks of a process read one file, LKR its own tree,
    /// and the shell forks each benchmark's processes and waits for all of them before the next.
    #[test]
    fn air_in_the_papers_form_shares_a_file_and_waits_between_benchmarks() {
        let b = small();
        let mut m = Merged::with_events("air", b.in_a_row_paper(2));
        let v = read_all(&mut m).unwrap();
        let mut ev = Vec::new();
        m.take_events(&mut ev);
        let file_of = |pid: u32| v.iter().filter(|r| r.pid == pid).filter_map(|r| r.file.map(|f| f.id)).collect::<std::collections::BTreeSet<_>>();
        for q in 0..2 {
            // TAC (1, 2), 512k-SR (3, 4), 8k-SR (5, 6) and IOR-R (9, 10): process q's one file.
            let f = file_of(1 + q);
            assert_eq!(f.len(), 1);
            for b in [1, 2, 4] {
                assert_eq!(file_of(1 + 2 * b + q), f);
            }
            assert!(file_of(7 + q).is_empty(), "LKR's find reads only metadata");
        }
        assert_ne!(file_of(1), file_of(2));
        // The shell (pid 11) forks both processes of a benchmark, waits for both, then goes on.
        let shell: Vec<(ProcessEventKind, u32)> = ev.iter().filter(|e| e.ppid == 11).map(|e| (e.kind, e.pid)).collect();
        let want: Vec<(ProcessEventKind, u32)> = (0..5).flat_map(|b| [(ProcessEventKind::Fork, 1 + 2 * b), (ProcessEventKind::Fork, 2 + 2 * b), (ProcessEventKind::Wait, 1 + 2 * b), (ProcessEventKind::Wait, 2 + 2 * b)]).collect();
        assert_eq!(shell, want);
        assert!(ev.iter().filter(|e| e.ppid == 11).all(|e| e.before == 0), "before any request");
        let e = super::super::build("air", &Common::default(), GenParams::parse("air", "form=rows").unwrap()).err().unwrap().to_string();
        assert!(e.contains("air.form"), "{e}");
    }

    #[test]
    fn aip_runs_benchmarks_side_by_side_and_relaunches() {
        let b = small();
        let v = read_all(&mut Merged::with_events("aip", b.in_parallel(2, Runs::Fixed([1, 1, 1, 1, 3])))).unwrap();
        let base = super::super::streams::CHILD_PID_BASE;
        let pids: std::collections::BTreeSet<u32> = v.iter().map(|r| r.pid).filter(|&p| p < base).collect();
        assert_eq!(pids.into_iter().collect::<Vec<_>>(), (1..=10).collect::<Vec<_>>());
        // LKR's cats: one child per file of each copy.
        assert_eq!(v.iter().map(|r| r.pid).filter(|&p| p >= base).collect::<std::collections::BTreeSet<_>>().len(), 2 * 50);
        // IOR's processes (pids 9, 10) read their file three times; TAC's once.
        assert_eq!(v.iter().filter(|r| r.pid == 9).count(), 3 * 64);
        assert_eq!(v.iter().filter(|r| r.pid == 1).count(), 512);
        // All start at once: every pid appears among the first ten requests.
        assert_eq!(v[..10].iter().map(|r| r.pid).collect::<std::collections::BTreeSet<_>>().len(), 10);
        let e = super::super::build("aip", &Common::default(), GenParams::parse("aip", "runs=1:2").unwrap()).err().unwrap().to_string();
        assert!(e.contains("aip.runs"), "{e}");
        // Fixed runs carry no launch events.
        let mut m = Merged::with_events("aip", b.in_parallel(2, Runs::Fixed([1; 5])));
        read_all(&mut m).unwrap();
        let mut ev = Vec::new();
        m.take_events(&mut ev);
        assert!(ev.iter().all(|e| e.kind != ProcessEventKind::Launch));
    }

    /// By default each benchmark process is launched by its benchmark's launcher before its
    /// first request, and the replay relaunches until every benchmark has completed once.
    #[test]
    fn aip_marks_relaunchable_benchmarks() {
        let b = small();
        let mut m = Merged::with_events("aip", b.in_parallel(2, Runs::Relaunch));
        let v = read_all(&mut m).unwrap();
        let mut ev = Vec::new();
        m.take_events(&mut ev);
        let launches: Vec<(u32, u32)> = ev.iter().filter(|e| e.kind == ProcessEventKind::Launch).map(|e| (e.pid, e.ppid)).collect();
        let mut want: Vec<(u32, u32)> = (0..5).flat_map(|b| (0..2).map(move |q| (1 + 2 * b + q, 11 + b))).collect();
        let mut got = launches.clone();
        got.sort();
        want.sort();
        assert_eq!(got, want);
        for e in ev.iter().filter(|e| e.kind == ProcessEventKind::Launch) {
            let first = v.iter().position(|r| r.pid == e.pid).unwrap() as u64;
            assert!(e.before <= first);
        }
        let config = crate::engine::timed::StackConfig { cache: "256".into(), ..Default::default() };
        let rep = crate::engine::timed::TimedRun::new(&config).unwrap().run(&mut Merged::with_events("aip", b.in_parallel(2, Runs::Relaunch))).unwrap();
        let bs = rep.benchmarks.expect("benchmarks");
        assert_eq!(bs.benchmarks.len(), 5);
        let firsts: Vec<u64> = bs.benchmarks.iter().map(|b| b.completions_ns[0]).collect();
        assert_eq!(bs.all_completed_ns, firsts.iter().max().copied());
        assert!(bs.benchmarks.iter().all(|b| b.runs as usize == b.completions_ns.len()));
        assert!(bs.benchmarks.iter().any(|b| b.runs > 1), "{bs:?}");
    }
}
