//! The planner's order of the traces: memory-aware list schedules (after register-pressure
//! scheduling), which keep the peak of live bytes low.
//!
//! **Groups.** The traces are taken one `(source, sink)` time pair at a time, in the order the
//! file first uses each pair (a trace shared by several pairs goes with the first): a time
//! pair's sink nodes, and most of its source nodes and products, belong to it alone, so
//! finishing one pair before opening the next keeps only what pairs share alive across them.
//!
//! **Steps.** Within a group, every remaining trace is a candidate *step*: the trace and the
//! products it still needs, in dependency order. A step is scored by simulating it exactly,
//! job by job, against the live objects (an object is released when every job that reads it
//! has run): the bytes it holds at its highest point and the bytes alive after it. The next
//! step is the one that
//!
//! 1. raises the schedule's peak the least (most often: not at all),
//! 2. then leaves the fewest bytes alive (a step that completes objects frees them),
//! 3. then finishes the most of what is alive (reads of live objects, each weighted by one
//!    over the uses it has left),
//! 4. then comes first in the file.
//!
//! [`Heuristic::Steps`] applies this to all the group's traces: work on what is alive runs
//! before work that opens new objects, and what must come in is what raises memory least.
//! Scores depend only on the objects a step reads, so they are cached and recomputed only for
//! the traces that read an object whose state changed.
//!
//! [`Heuristic::Focus`] finishes one object at a time: it picks the object whose remaining
//! traces need the fewest bytes not yet alive (a live one on ties), runs all those traces (in
//! the order above), and so releases it; then the next. Where many objects are each used by
//! many traces (a correlator matrix is a complete bipartite graph of sink and source nodes),
//! this keeps one side resident and streams the other through, where [`Heuristic::Steps`] can
//! leave many objects half finished.
//!
//! Neither is best everywhere, so the planner runs both and keeps the lower peak.

use std::cmp::Ordering;

use super::order::{Job, Work, readers};

/// Which list schedule. See the [module documentation](self).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Heuristic {
    /// The best next step among all the group's traces.
    Steps,
    /// One object's remaining traces at a time.
    Focus,
}

/// What a candidate step does to memory.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Score {
    /// The bytes the step holds at its highest point above those alive before it.
    rise: u64,
    /// Bytes alive after the step minus before it.
    net: i64,
    /// Minus the progress the step makes towards releasing what is alive.
    progress: f64,
}

/// A step's rank: the schedule's peak after it, then `net`, then `progress`; lower first.
type Key = (u64, i64, f64);

fn less(a: &Key, b: &Key) -> bool {
    a.partial_cmp(b) == Some(Ordering::Less)
}

/// The state of a schedule being built.
struct State<'w, 'a> {
    work: &'w Work<'a>,
    computed: Vec<bool>,
    alive: Vec<bool>,
    /// Jobs still to run that read each object.
    pending: Vec<u32>,
    held: u64,
    peak: u64,
    done: Vec<bool>,
    order: Vec<usize>,
    // Scratch of one step's simulation.
    seen: Vec<u32>,
    stamp: u32,
    local: Vec<u32>,
    local_stamp: Vec<u32>,
    step: Vec<Job>,
    missing: Vec<usize>,
    changed: Vec<usize>,
}

impl<'w, 'a> State<'w, 'a> {
    fn new(work: &'w Work<'a>) -> Self {
        let objects = work.objects();
        State {
            work,
            computed: vec![false; work.products.len()],
            alive: vec![false; objects],
            pending: work.consumers(),
            held: 0,
            peak: 0,
            done: vec![false; work.traces.len()],
            order: Vec::with_capacity(work.traces.len()),
            seen: vec![0; work.products.len()],
            stamp: 0,
            local: vec![0; objects],
            local_stamp: vec![0; objects],
            step: Vec::new(),
            missing: Vec::new(),
            changed: Vec::new(),
        }
    }

    /// The jobs of trace `t`'s step, into `self.step`.
    fn fill_step(&mut self, t: usize) {
        self.stamp += 1;
        self.missing.clear();
        let (work, stamp) = (self.work, self.stamp);
        let tr = &work.traces[t];
        for op in [tr.a, tr.b] {
            work.missing(op, &self.computed, &mut self.seen, stamp, &mut self.missing);
        }
        self.step.clear();
        self.step
            .extend(self.missing.iter().map(|&p| Job::Contract(p)));
        self.step.push(Job::Trace(t));
    }

    /// Whether trace `t`'s step reads object `x` (fills `self.step`).
    fn step_reads(&mut self, t: usize, x: usize) -> bool {
        self.fill_step(t);
        let work = self.work;
        self.step.iter().any(|&j| {
            let (r, n) = work.reads(j);
            r[..n].contains(&x)
        })
    }

    /// Simulates trace `t`'s step against the current state, changing nothing.
    fn score(&mut self, t: usize) -> Score {
        self.fill_step(t);
        let (work, stamp) = (self.work, self.stamp);
        let (mut held, mut top) = (self.held as i64, self.held as i64);
        let mut progress = 0.0;
        // `local[o]`, where `local_stamp[o]` is this step's stamp, is o's pending count in
        // the simulation; an object with no stamp yet has not been touched by it.
        for i in 0..self.step.len() {
            let job = self.step[i];
            let (r, n) = work.reads(job);
            for &o in &r[..n] {
                let fresh = self.local_stamp[o] != stamp;
                if fresh && !self.alive[o] {
                    held += work.bytes[o] as i64;
                }
                if fresh && self.alive[o] {
                    progress += 1.0 / f64::from(self.pending[o].max(1));
                }
                let left = if fresh {
                    self.pending[o]
                } else {
                    self.local[o]
                };
                self.local[o] = left.saturating_sub(1);
                self.local_stamp[o] = stamp;
            }
            if let Some(w) = work.writes(job) {
                held += work.bytes[w] as i64;
                self.local[w] = self.pending[w];
                self.local_stamp[w] = stamp;
            }
            top = top.max(held + work.scratch(job) as i64);
            for &o in &r[..n] {
                if self.local[o] == 0 {
                    held -= work.bytes[o] as i64;
                }
            }
        }
        Score {
            rise: (top - self.held as i64).max(0) as u64,
            net: held - self.held as i64,
            progress: -progress,
        }
    }

    fn key(&self, s: Score) -> Key {
        ((self.held + s.rise).max(self.peak), s.net, s.progress)
    }

    /// Runs trace `t`'s step: the state moves on, `self.changed` lists the objects whose
    /// state changed.
    fn run(&mut self, t: usize) {
        let s = self.score(t);
        self.peak = self.peak.max(self.held + s.rise);
        self.fill_step(t);
        let work = self.work;
        self.changed.clear();
        for i in 0..self.step.len() {
            let job = self.step[i];
            let (r, n) = work.reads(job);
            for &o in &r[..n] {
                if !self.alive[o] {
                    self.alive[o] = true;
                    self.held += work.bytes[o];
                }
                self.pending[o] = self.pending[o].saturating_sub(1);
                self.changed.push(o);
            }
            if let Some(w) = work.writes(job) {
                if let Job::Contract(p) = job {
                    self.computed[p] = true;
                }
                self.alive[w] = true;
                self.held += work.bytes[w];
                self.changed.push(w);
            }
            for &o in &r[..n] {
                if self.pending[o] == 0 && self.alive[o] {
                    self.alive[o] = false;
                    self.held -= work.bytes[o];
                }
            }
        }
        self.done[t] = true;
        self.order.push(t);
    }

    /// Runs the traces of `set` (all not done), each next the best step.
    fn run_best_of(&mut self, set: &mut Vec<usize>) {
        while !set.is_empty() {
            let mut best: Option<(Key, usize)> = None;
            for (i, &t) in set.iter().enumerate() {
                let s = self.score(t);
                let key = self.key(s);
                if best.is_none_or(|(b, _)| less(&key, &b)) {
                    best = Some((key, i));
                }
            }
            let Some((_, i)) = best else { return };
            let t = set.remove(i);
            self.run(t);
        }
    }

    /// [`Heuristic::Steps`] over the traces `members`, with `readers` for them.
    fn steps(&mut self, members: &[usize], readers: &[Vec<usize>]) {
        let mut scores: Vec<Option<Score>> = vec![None; self.work.traces.len()];
        let mut stale = vec![0usize; self.work.traces.len()];
        for round in 1..=members.len() {
            let mut best: Option<(Key, usize)> = None;
            for &t in members {
                if self.done[t] {
                    continue;
                }
                let s = match scores[t] {
                    Some(s) => s,
                    None => {
                        let s = self.score(t);
                        scores[t] = Some(s);
                        s
                    }
                };
                let key = self.key(s);
                if best.is_none_or(|(b, _)| less(&key, &b)) {
                    best = Some((key, t));
                }
            }
            let Some((_, t)) = best else { return };
            self.run(t);
            for i in 0..self.changed.len() {
                for &r in &readers[self.changed[i]] {
                    if stale[r] != round {
                        stale[r] = round;
                        scores[r] = None;
                    }
                }
            }
        }
    }

    /// [`Heuristic::Focus`] over the traces `members`, with `readers` for them.
    fn focus(&mut self, members: &[usize], readers: &[Vec<usize>]) {
        let work = self.work;
        let objects: Vec<usize> = (0..work.objects())
            .filter(|&o| !readers[o].is_empty())
            .collect();
        let mut mark = vec![0u32; work.objects()];
        let mut mark_stamp = 0u32;
        let mut left = members.iter().filter(|&&t| !self.done[t]).count();
        let mut set = Vec::new();
        while left > 0 {
            let mut best: Option<((u64, bool), usize)> = None;
            for &x in &objects {
                if self.pending[x] == 0 {
                    continue;
                }
                mark_stamp += 1;
                let (mut cost, mut any) = (0u64, false);
                for &t in &readers[x] {
                    if self.done[t] || !self.step_reads(t, x) {
                        continue;
                    }
                    any = true;
                    for i in 0..self.step.len() {
                        let job = self.step[i];
                        let (r, n) = work.reads(job);
                        for o in r[..n].iter().copied().chain(work.writes(job)) {
                            if !self.alive[o] && mark[o] != mark_stamp {
                                mark[o] = mark_stamp;
                                cost += work.bytes[o];
                            }
                        }
                    }
                }
                let key = (cost, !self.alive[x]);
                if any && best.is_none_or(|(b, _)| key < b) {
                    best = Some((key, x));
                }
            }
            set.clear();
            match best {
                Some((_, x)) => {
                    for &t in &readers[x] {
                        if !self.done[t] && self.step_reads(t, x) {
                            set.push(t);
                        }
                    }
                }
                // Cannot happen while traces are left (each reads something); to be safe,
                // run what is left.
                None => set.extend(members.iter().copied().filter(|&t| !self.done[t])),
            }
            left -= set.len();
            self.run_best_of(&mut set);
        }
    }
}

/// The traces in the order `heuristic` gives, group by group (`groups[t]`: the group of trace
/// `t`, groups numbered in the order they run). See the [module documentation](self).
pub(super) fn order(work: &Work<'_>, groups: &[usize], heuristic: Heuristic) -> Vec<usize> {
    let mut state = State::new(work);
    let count = groups.iter().max().map_or(0, |&g| g + 1);
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); count];
    for (t, &g) in groups.iter().enumerate() {
        members[g].push(t);
    }
    for (g, members) in members.iter().enumerate() {
        if members.is_empty() {
            continue;
        }
        let readers = readers(work, &|t| groups[t] == g);
        match heuristic {
            Heuristic::Steps => state.steps(members, &readers),
            Heuristic::Focus => state.focus(members, &readers),
        }
    }
    state.order
}
