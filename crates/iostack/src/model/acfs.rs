//! The theoretical model of integrated prefetching and caching of Cao, Felten, Karlin and Li,
//! "Implementation and performance of integrated application-controlled file caching,
//! prefetching, and disk scheduling" (ACM TOCS; `papers/002_a9d62adcdacf8768.txt`), §2.1.
//!
//! The model (l.154-167): the cache holds K blocks; the whole future reference string is known;
//! the program makes one reference per time unit and waits while the block it references is
//! absent; a fetch takes F time units and only one fetch is in progress at a time; when a fetch
//! starts a block is discarded, and is unavailable from that moment. The goal is the shortest
//! total running time.
//!
//! Three ways to run it:
//!
//! - [`ModelPolicy::None`]: demand fetching only, with optimal replacement (discard the block whose
//!   next reference is furthest, Rule 2), the "no-prefetch policy using the optimal replacement
//!   algorithm" of Figure 1 (l.118).
//! - [`ModelPolicy::Ca`]: controlled-aggressive (l.196-201): fetch the next block of the reference
//!   string that is not cached (Rule 1) "as soon as the disk is idle and as soon as there is a
//!   block in cache that will be accessed after the missing one" (Rule 3, do no harm; Rule 4,
//!   first opportunity), always replacing optimally.
//! - [`ModelPolicy::Opt`]: the optimum, found by exhaustive search over every choice of when to
//!   fetch, what to fetch and what to discard; only for small instances (see [`OPT_LIMIT`]).
//!
//! The exact semantics (those that give Figure 1's 8 and 10; `specs/acfs.md` §1.1):
//!
//! - Time is integer. Reference j runs during [s_j, s_j + 1), where s_j is the later of the end
//!   of reference j - 1 and the arrival of its block.
//! - The block of the reference in progress is in use and cannot be discarded: Figure 1's
//!   prefetch of C replaces A "because B is in use at the time" (l.129).
//! - Decisions are taken when a reference becomes current (the previous one ended) and when a
//!   fetch completes, with the disk idle. If the current reference's block is absent it is
//!   fetched on demand, discarding the cached block used furthest in the future (a free frame
//!   first). Otherwise controlled-aggressive looks at m, the first reference from the current
//!   one on whose block is neither cached nor being fetched: with a free frame it fetches m's
//!   block; else it takes v, the cached block other than the one in use whose next reference is
//!   furthest (never is furthest of all), and fetches m's block discarding v only if v's next
//!   reference comes after m (Rule 3, strictly).
//! - Blocks never referenced again tie; the first named of them is discarded, which changes no
//!   time.
//!
//! The bound (l.202-211): controlled-aggressive never takes more than (1 + F/K) times the
//! optimum; the tests check it against the exhaustive search on random small instances.

use serde::Serialize;

use crate::error::ConfigError;

/// How fetches are decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelPolicy {
    /// Demand fetching with optimal replacement.
    None,
    /// Controlled-aggressive prefetching with optimal replacement.
    Ca,
    /// The optimum, by exhaustive search.
    Opt,
}

impl ModelPolicy {
    pub const NAMES: [&'static str; 3] = ["none", "ca", "opt"];

    pub fn parse(s: &str) -> Result<ModelPolicy, ConfigError> {
        match s.to_ascii_lowercase().as_str() {
            "none" => Ok(ModelPolicy::None),
            "ca" => Ok(ModelPolicy::Ca),
            "opt" => Ok(ModelPolicy::Opt),
            _ => Err(ConfigError::unknown("--policy", "model policy", s, &ModelPolicy::NAMES)),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            ModelPolicy::None => "none",
            ModelPolicy::Ca => "ca",
            ModelPolicy::Opt => "opt",
        }
    }
}

/// The largest search the exhaustive optimum undertakes, in (reference, cache content, fetch in
/// progress) states: a bound computed before searching, so that a large instance is refused at
/// once rather than left running.
pub const OPT_LIMIT: u64 = 2_000_000;

/// Most distinct blocks an instance may name (cache contents are kept as bit sets).
pub const MAX_BLOCKS: usize = 64;

/// One instance of the model: a reference string, the initial cache, K and F.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Instance {
    /// Block names, in order of first appearance (initial cache first).
    pub names: Vec<String>,
    /// The reference string, as indexes into `names`.
    pub refs: Vec<usize>,
    /// The initially cached blocks, as indexes into `names`.
    pub init: Vec<usize>,
    /// Cache size in blocks.
    pub k: usize,
    /// Fetch time in time units (one reference takes one unit).
    pub f: u64,
}

/// Splits a block string: space-separated names when it holds whitespace, else one block per
/// character.
fn split_names(s: &str) -> Vec<String> {
    if s.chars().any(char::is_whitespace) {
        s.split_whitespace().map(str::to_string).collect()
    } else {
        s.chars().map(|c| c.to_string()).collect()
    }
}

impl Instance {
    /// An instance from its textual form: `refs` and `init` are one letter per block (`ABCA`)
    /// or space-separated names (`a1 b2 a1`).
    pub fn parse(refs: &str, init: &str, k: usize, f: u64) -> Result<Instance, ConfigError> {
        let refs = split_names(refs);
        let init = split_names(init);
        Instance::from_names(&refs, &init, k, f)
    }

    /// An instance from block names.
    pub fn from_names<S: AsRef<str>>(refs: &[S], init: &[S], k: usize, f: u64) -> Result<Instance, ConfigError> {
        if k == 0 {
            return Err(ConfigError::new("--k", "the cache must hold at least one block"));
        }
        if f == 0 {
            return Err(ConfigError::new("--f", "a fetch must take at least one time unit"));
        }
        if refs.is_empty() {
            return Err(ConfigError::new("--refs", "the reference string is empty"));
        }
        let mut names: Vec<String> = Vec::new();
        let id = |n: &str, names: &mut Vec<String>| -> usize {
            match names.iter().position(|x| x == n) {
                Some(i) => i,
                None => {
                    names.push(n.to_string());
                    names.len() - 1
                }
            }
        };
        let mut init_ids = Vec::new();
        for n in init {
            let i = id(n.as_ref(), &mut names);
            if init_ids.contains(&i) {
                return Err(ConfigError::new("--init", format!("block `{}` is named twice", n.as_ref())));
            }
            init_ids.push(i);
        }
        if init_ids.len() > k {
            return Err(ConfigError::new(
                "--init",
                format!("{} blocks do not fit in a cache of {k} (--k)", init_ids.len()),
            ));
        }
        let ref_ids: Vec<usize> = refs.iter().map(|n| id(n.as_ref(), &mut names)).collect();
        if names.len() > MAX_BLOCKS {
            return Err(ConfigError::new(
                "--refs",
                format!("{} distinct blocks; the model takes at most {MAX_BLOCKS}", names.len()),
            ));
        }
        Ok(Instance { names, refs: ref_ids, init: init_ids, k, f })
    }

    /// The reference string in its textual form (names joined by spaces unless all are one
    /// character long).
    pub fn refs_text(&self) -> String {
        self.text(&self.refs)
    }

    /// The initial cache in its textual form.
    pub fn init_text(&self) -> String {
        self.text(&self.init)
    }

    fn text(&self, ids: &[usize]) -> String {
        let single = self.names.iter().all(|n| n.chars().count() == 1);
        let parts: Vec<&str> = ids.iter().map(|&i| self.names[i].as_str()).collect();
        parts.join(if single { "" } else { " " })
    }

    /// The index of the first reference to `block` at or after `from`, or `usize::MAX`.
    fn next_use(&self, block: usize, from: usize) -> usize {
        self.refs[from.min(self.refs.len())..]
            .iter()
            .position(|&b| b == block)
            .map_or(usize::MAX, |p| from + p)
    }

    /// The exhaustive search's state count bound: references × cache contents × fetches in
    /// progress (block and time left).
    pub fn search_states(&self) -> u64 {
        let d = self.names.len() as u64;
        let mut contents: u64 = 0;
        let mut c: u64 = 1; // C(d, i)
        for i in 0..=(self.k as u64).min(d) {
            contents = contents.saturating_add(c);
            c = c.saturating_mul(d - i) / (i + 1);
        }
        (self.refs.len() as u64 + 1)
            .saturating_mul(contents)
            .saturating_mul(d.saturating_mul(self.f).saturating_add(1))
    }
}

/// Why a fetch was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FetchKind {
    /// The current reference's block was absent.
    Demand,
    /// A block referenced later.
    Prefetch,
}

/// One event of a run, in time order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// Reference `index` (0-based) to `block` runs during [t, t + 1).
    Ref { t: u64, index: usize, block: String },
    /// A fetch of `block` starts, discarding `evict` (none: a free frame), for reference
    /// `for_ref`; it arrives at `t + F`.
    Fetch { t: u64, block: String, evict: Option<String>, kind: FetchKind, for_ref: usize },
    /// A fetched block arrives.
    Arrive { t: u64, block: String },
}

impl Event {
    pub fn t(&self) -> u64 {
        match self {
            Event::Ref { t, .. } | Event::Fetch { t, .. } | Event::Arrive { t, .. } => *t,
        }
    }

    /// One line of text.
    pub fn text(&self) -> String {
        match self {
            Event::Ref { t, index, block } => format!("t={t:<4} ref {index} {block}"),
            Event::Fetch { t, block, evict, kind, for_ref } => {
                let ev = evict.as_ref().map_or("into a free frame".to_string(), |e| format!("evicting {e}"));
                let kind = match kind {
                    FetchKind::Demand => "demand",
                    FetchKind::Prefetch => "prefetch",
                };
                format!("t={t:<4} fetch {block} {ev} ({kind}, for ref {for_ref})")
            }
            Event::Arrive { t, block } => format!("t={t:<4} {block} arrives"),
        }
    }
}

/// The result of one run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Outcome {
    pub policy: ModelPolicy,
    pub k: usize,
    pub f: u64,
    pub refs: String,
    pub init: String,
    /// Total running time: the end of the last reference.
    pub total: u64,
    /// Time spent waiting for blocks (total minus one unit per reference).
    pub stall: u64,
    /// Number of fetches started.
    pub fetches: u64,
    pub log: Vec<Event>,
}

impl Outcome {
    /// The times at which the references ran.
    pub fn ref_times(&self) -> Vec<u64> {
        self.log.iter().filter_map(|e| matches!(e, Event::Ref { .. }).then(|| e.t())).collect()
    }

    /// Plain-text rendering: a summary line and the event log.
    pub fn to_text(&self) -> String {
        let mut s = format!(
            "policy {}: total {} time units ({} references, {} stalled), {} fetches; K={}, F={}, refs {}, initial cache {}\n",
            self.policy.name(),
            self.total,
            self.total - self.stall,
            self.stall,
            self.fetches,
            self.k,
            self.f,
            self.refs,
            if self.init.is_empty() { "empty" } else { &self.init },
        );
        for e in &self.log {
            s += &e.text();
            s.push('\n');
        }
        s
    }
}

/// A decision at a decision point with the disk idle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Action {
    Wait,
    /// Fetch `block`, discarding `evict` (none: into a free frame).
    Fetch { block: usize, evict: Option<usize> },
}

/// The model's state at the top of a decision point (before arrivals and the start of the
/// current reference are applied). The current reference `j` can always start at `t` if its
/// block is cached: a decision point never falls inside a reference.
#[derive(Debug, Clone)]
struct Machine<'a> {
    inst: &'a Instance,
    t: u64,
    /// The current reference: the next one to start.
    j: usize,
    cached: u64,
    /// The fetch in progress: block and arrival time.
    inflight: Option<(usize, u64)>,
    fetches: u64,
    log: Option<Vec<Event>>,
}

/// What a decider sees.
struct Situation {
    j: usize,
    /// The block in use (the current reference started now), which cannot be discarded.
    in_use: Option<usize>,
    cached: u64,
    free: bool,
}

impl<'a> Machine<'a> {
    fn new(inst: &'a Instance, log: bool) -> Machine<'a> {
        let cached = inst.init.iter().fold(0u64, |m, &b| m | (1 << b));
        Machine { inst, t: 0, j: 0, cached, inflight: None, fetches: 0, log: log.then(Vec::new) }
    }

    fn name(&self, b: usize) -> String {
        self.inst.names[b].clone()
    }

    fn push(&mut self, e: impl FnOnce(&Self) -> Event) {
        if self.log.is_some() {
            let e = e(self);
            self.log.as_mut().unwrap().push(e);
        }
    }

    /// Applies what happens at `t` before deciding: an arrival, then the start of the current
    /// reference if its block is cached. Returns the situation if the disk is idle (a decision
    /// is due), and whether the current reference started.
    fn begin(&mut self) -> (Option<Situation>, bool) {
        if let Some((b, at)) = self.inflight {
            if at == self.t {
                self.cached |= 1 << b;
                self.inflight = None;
                self.push(|m| Event::Arrive { t: m.t, block: m.name(b) });
            }
        }
        let cur = self.inst.refs[self.j];
        let starting = self.cached & (1 << cur) != 0;
        if starting {
            self.push(|m| Event::Ref { t: m.t, index: m.j, block: m.name(cur) });
        }
        let sit = self.inflight.is_none().then(|| Situation {
            j: self.j,
            in_use: starting.then_some(cur),
            cached: self.cached,
            free: (self.cached.count_ones() as usize) < self.inst.k,
        });
        (sit, starting)
    }

    /// Carries `action` out and moves to the next decision point. Returns the total running
    /// time when the last reference has run.
    fn advance(&mut self, action: Action, starting: bool) -> Option<u64> {
        if let Action::Fetch { block, evict } = action {
            debug_assert!(self.inflight.is_none());
            if let Some(v) = evict {
                self.cached &= !(1 << v);
            }
            self.inflight = Some((block, self.t + self.inst.f));
            self.fetches += 1;
            let demand = block == self.inst.refs[self.j] && !starting;
            self.push(|m| Event::Fetch {
                t: m.t,
                block: m.name(block),
                evict: evict.map(|v| m.name(v)),
                kind: if demand { FetchKind::Demand } else { FetchKind::Prefetch },
                for_ref: m.inst.next_use(block, m.j),
            });
        }
        // The next decision point: the end of the reference that started, or the arrival.
        let ready = if starting {
            self.j += 1;
            if self.j == self.inst.refs.len() {
                return Some(self.t + 1);
            }
            Some(self.t + 1)
        } else {
            None
        };
        let arrival = self.inflight.map(|(_, at)| at);
        self.t = match (ready, arrival) {
            (Some(r), Some(a)) => r.min(a),
            (Some(r), None) => r,
            (None, Some(a)) => a,
            // Waiting for an absent block with the disk idle: no decider does this.
            (None, None) => unreachable!("the model waits for a block nobody fetches"),
        };
        None
    }

    fn outcome(self, policy: ModelPolicy, total: u64) -> Outcome {
        Outcome {
            policy,
            k: self.inst.k,
            f: self.inst.f,
            refs: self.inst.refs_text(),
            init: self.inst.init_text(),
            total,
            stall: total - self.inst.refs.len() as u64,
            fetches: self.fetches,
            log: self.log.unwrap_or_default(),
        }
    }

    /// The cached block, other than `in_use`, whose next reference from `from` on is furthest
    /// (the first named among those never referenced again).
    fn furthest(&self, cached: u64, in_use: Option<usize>, from: usize) -> Option<(usize, usize)> {
        let mut best: Option<(usize, usize)> = None;
        for b in 0..self.inst.names.len() {
            if cached & (1 << b) == 0 || Some(b) == in_use {
                continue;
            }
            let n = self.inst.next_use(b, from);
            if best.is_none_or(|(_, bn)| n > bn) {
                best = Some((b, n));
            }
        }
        best
    }

    /// Demand fetching and controlled-aggressive prefetching, both with optimal replacement.
    fn decide(&self, s: &Situation, prefetch: bool) -> Action {
        let refs = &self.inst.refs;
        let cur = refs[s.j];
        if s.in_use.is_none() {
            // The current block is absent (the disk is idle, so it is not on its way).
            let evict = if s.free { None } else { self.furthest(s.cached, None, s.j).map(|(b, _)| b) };
            return Action::Fetch { block: cur, evict };
        }
        if !prefetch {
            return Action::Wait;
        }
        let Some(m) = (s.j..refs.len()).find(|&i| s.cached & (1 << refs[i]) == 0) else {
            return Action::Wait;
        };
        if s.free {
            return Action::Fetch { block: refs[m], evict: None };
        }
        match self.furthest(s.cached, s.in_use, s.j) {
            Some((v, next)) if next > m => Action::Fetch { block: refs[m], evict: Some(v) },
            _ => Action::Wait,
        }
    }

    /// Every choice the optimum may make, up to dominance: when the current block is absent,
    /// fetch it (fetching a later block first only delays every reference from the current one
    /// on); otherwise wait, or fetch any block referenced from now on that is not cached. The
    /// fetch goes into a free frame if there is one (discarding a block instead never helps),
    /// else discards any cached block but the one in use. Each decision point therefore either
    /// starts a reference or fetches the current block, whose arrival starts it: the states
    /// form no cycle, and the memoised search is exact.
    fn choices(&self, s: &Situation) -> Vec<Action> {
        let mut out = Vec::new();
        let mut wanted = 0u64;
        if s.in_use.is_some() {
            out.push(Action::Wait);
            for &b in &self.inst.refs[s.j..] {
                wanted |= 1 << b;
            }
            wanted &= !s.cached;
        } else {
            wanted = 1 << self.inst.refs[s.j];
        }
        for b in 0..self.inst.names.len() {
            if wanted & (1 << b) == 0 {
                continue;
            }
            if s.free {
                out.push(Action::Fetch { block: b, evict: None });
                continue;
            }
            for v in 0..self.inst.names.len() {
                if s.cached & (1 << v) != 0 && Some(v) != s.in_use {
                    out.push(Action::Fetch { block: b, evict: Some(v) });
                }
            }
        }
        out
    }

    /// The memo key: everything the time still to run depends on.
    fn key(&self) -> (usize, u64, Option<(usize, u64)>) {
        (self.j, self.cached, self.inflight.map(|(b, at)| (b, at - self.t)))
    }
}

type Memo = std::collections::HashMap<(usize, u64, Option<(usize, u64)>), (u64, Action)>;

/// The shortest time still to run from `m` (at the top of a decision point), remembering the
/// best choice of each state in `memo`.
fn search(m: &Machine, memo: &mut Memo) -> u64 {
    let key = m.key();
    if let Some(&(rest, _)) = memo.get(&key) {
        return rest;
    }
    let mut here = m.clone();
    let (sit, starting) = here.begin();
    let choices = match &sit {
        Some(s) => here.choices(s),
        None => vec![Action::Wait],
    };
    let mut best = (u64::MAX, Action::Wait);
    for action in choices {
        let mut next = here.clone();
        let rest = match next.advance(action, starting) {
            Some(total) => total - m.t,
            None => next.t - m.t + search(&next, memo),
        };
        if rest < best.0 {
            best = (rest, action);
        }
    }
    memo.insert(key, best);
    best.0
}

/// Runs `inst` under `policy`.
pub fn run(inst: &Instance, policy: ModelPolicy) -> Result<Outcome, ConfigError> {
    let mut memo = Memo::new();
    if policy == ModelPolicy::Opt {
        let states = inst.search_states();
        if states > OPT_LIMIT {
            return Err(ConfigError::new(
                "--policy",
                format!(
                    "opt searches exhaustively, and this instance ({} references, {} distinct blocks, K={}, F={}) \
                     has up to {states} states, more than the limit of {OPT_LIMIT}; use fewer references, \
                     blocks or a smaller F",
                    inst.refs.len(),
                    inst.names.len(),
                    inst.k,
                    inst.f
                ),
            ));
        }
        search(&Machine::new(inst, false), &mut memo);
    }
    let mut m = Machine::new(inst, true);
    loop {
        let key = m.key();
        let (sit, starting) = m.begin();
        let action = match (&sit, policy) {
            (None, _) => Action::Wait,
            (Some(s), ModelPolicy::None) => m.decide(s, false),
            (Some(s), ModelPolicy::Ca) => m.decide(s, true),
            (Some(_), ModelPolicy::Opt) => memo[&key].1,
        };
        if let Some(total) = m.advance(action, starting) {
            return Ok(m.outcome(policy, total));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn total(refs: &str, init: &str, k: usize, f: u64, p: ModelPolicy) -> u64 {
        run(&Instance::parse(refs, init, k, f).unwrap(), p).unwrap().total
    }

    #[test]
    fn figure1_abca_and_abcb() {
        // D-F1: ABCA gives 8 without prefetching and 10 with; the optimum is 8.
        assert_eq!(total("ABCA", "AB", 2, 4, ModelPolicy::None), 8);
        assert_eq!(total("ABCA", "AB", 2, 4, ModelPolicy::Ca), 10);
        assert_eq!(total("ABCA", "AB", 2, 4, ModelPolicy::Opt), 8);
        // ABCB: prefetching wins, 7 against 8.
        assert_eq!(total("ABCB", "AB", 2, 4, ModelPolicy::None), 8);
        assert_eq!(total("ABCB", "AB", 2, 4, ModelPolicy::Ca), 7);
        assert_eq!(total("ABCB", "AB", 2, 4, ModelPolicy::Opt), 7);
    }

    #[test]
    fn figure1_logs() {
        let inst = Instance::parse("ABCA", "AB", 2, 4).unwrap();
        let ca = run(&inst, ModelPolicy::Ca).unwrap();
        let fetches: Vec<(u64, &str, Option<&str>)> = ca
            .log
            .iter()
            .filter_map(|e| match e {
                Event::Fetch { t, block, evict, .. } => Some((*t, block.as_str(), evict.as_deref())),
                _ => None,
            })
            .collect();
        assert_eq!(fetches, vec![(1, "C", Some("A")), (5, "A", Some("B"))]);
        assert_eq!(ca.ref_times(), vec![0, 1, 5, 9]);
        assert_eq!(ca.fetches, 2);
        // Without prefetching C misses at time 2 (the paper's "time 3", counted from 1) and
        // replaces B.
        let none = run(&inst, ModelPolicy::None).unwrap();
        assert!(none.log.contains(&Event::Fetch {
            t: 2,
            block: "C".into(),
            evict: Some("B".into()),
            kind: FetchKind::Demand,
            for_ref: 2
        }));
        assert_eq!(none.ref_times(), vec![0, 1, 6, 7]);
        assert_eq!(none.fetches, 1);
    }

    #[test]
    fn names_and_free_frames() {
        let inst = Instance::parse("x1 y2 x1 z3", "", 2, 3).unwrap();
        assert_eq!(inst.names, vec!["x1", "y2", "z3"]);
        assert_eq!(inst.refs_text(), "x1 y2 x1 z3");
        // Empty cache, K=2: demand x1 (0..3), then CA prefetches y2 into the free frame at 3.
        let ca = run(&inst, ModelPolicy::Ca).unwrap();
        assert_eq!(ca.log[0], Event::Fetch { t: 0, block: "x1".into(), evict: None, kind: FetchKind::Demand, for_ref: 0 });
        assert!(ca.total <= run(&inst, ModelPolicy::None).unwrap().total);
    }

    #[test]
    fn bad_instances() {
        assert!(Instance::parse("AB", "ABC", 2, 4).unwrap_err().to_string().contains("--init"));
        assert!(Instance::parse("AB", "AA", 2, 4).unwrap_err().to_string().contains("twice"));
        assert!(Instance::parse("", "", 2, 4).is_err());
        assert!(Instance::parse("AB", "", 0, 4).unwrap_err().to_string().contains("--k"));
        assert!(Instance::parse("AB", "", 2, 0).unwrap_err().to_string().contains("--f"));
        let big = Instance::parse("ABCDEFGHIJKLMNOPQRSTABCDEFGHIJKLMNOPQRST", "", 6, 50).unwrap();
        let e = run(&big, ModelPolicy::Opt).unwrap_err().to_string();
        assert!(e.contains("limit"), "{e}");
        // The heuristics run whatever the size.
        assert!(run(&big, ModelPolicy::Ca).is_ok());
    }

    fn instance() -> impl Strategy<Value = Instance> {
        (2usize..=3, 1u64..=5, 2usize..=5, 1usize..=8).prop_flat_map(|(k, f, d, n)| {
            let names: Vec<String> = (0..d).map(|i| ((b'A' + i as u8) as char).to_string()).collect();
            (
                proptest::collection::vec(0..d, n),
                proptest::sample::subsequence((0..d).collect::<Vec<_>>(), 0..=k.min(d)),
                Just((k, f, names)),
            )
                .prop_map(|(refs, init, (k, f, names))| {
                    let r: Vec<&str> = refs.iter().map(|&i| names[i].as_str()).collect();
                    let i: Vec<&str> = init.iter().map(|&i| names[i].as_str()).collect();
                    Instance::from_names(&r, &i, k, f).unwrap()
                })
        })
    }


    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        // D-F2: CA <= (1 + F/K) OPT, and OPT <= min(CA, none).
        #[test]
        fn ca_within_bound_of_opt(inst in instance()) {
            let none = run(&inst, ModelPolicy::None).unwrap().total;
            let ca = run(&inst, ModelPolicy::Ca).unwrap().total;
            let opt = run(&inst, ModelPolicy::Opt).unwrap();
            prop_assert!(opt.total <= ca && opt.total <= none, "opt {} ca {} none {}", opt.total, ca, none);
            prop_assert!(ca * inst.k as u64 <= (inst.k as u64 + inst.f) * opt.total, "ca {} opt {}", ca, opt.total);
            // The optimum's log replays to its total: every reference runs once, in order.
            prop_assert_eq!(opt.ref_times().len(), inst.refs.len());
            prop_assert_eq!(*opt.ref_times().last().unwrap() + 1, opt.total);
        }
    }
}
