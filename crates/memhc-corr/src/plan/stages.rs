//! From a sequence of single jobs to the execution queue: stages of independent contractions
//! (a vector, run on the streams), then traces, then the releases of every object whose last
//! use has passed.
//!
//! One job per stage releases everything as early as possible: that queue's peak of live
//! bytes is the *target*. Consecutive jobs are then merged into one stage while the stage's
//! contractions stay independent (none reads another's output) and at most `vector_size`, and
//! while the merged stage holds no more than the target at its highest point (merging delays
//! the releases of its jobs to its end and runs its contractions before its traces). A merge
//! changes nothing outside its stage, so the queue's peak stays the target: vectors are as
//! wide as memory allows, never at its cost.

use std::collections::HashMap;

use super::order::{Job, Work};
use super::{Operand, Stage};

/// The state of the merge: what is alive before the open stage.
struct Merger<'w, 'a> {
    work: &'w Work<'a>,
    alive: Vec<bool>,
    held: u64,
    /// For each job index, the objects whose last use it is.
    dies_at: Vec<Vec<usize>>,
    touched: Vec<u32>,
    stamp: u32,
}

impl Merger<'_, '_> {
    /// The highest bytes `stage` holds when it starts from the current state.
    fn stage_top(&mut self, stage: &Stage) -> u64 {
        self.stamp += 1;
        let stamp = self.stamp;
        let (mut held, mut top) = (self.held, self.held);
        let jobs = stage
            .contractions
            .iter()
            .map(|&p| Job::Contract(p))
            .chain(stage.traces.iter().map(|&t| Job::Trace(t)));
        for job in jobs {
            let (r, n) = self.work.reads(job);
            let w = self.work.writes(job);
            for o in r[..n].iter().copied().chain(w) {
                if !self.alive[o] && self.touched[o] != stamp {
                    self.touched[o] = stamp;
                    held += self.work.bytes[o];
                }
            }
            top = top.max(held + self.work.scratch(job));
        }
        top
    }

    /// Closes `stage`, which ends with job `last`: its objects become alive, then those whose
    /// last use is in `first..=last` are released.
    fn close(&mut self, stage: &Stage, first: usize, last: usize) {
        let jobs = stage
            .contractions
            .iter()
            .map(|&p| Job::Contract(p))
            .chain(stage.traces.iter().map(|&t| Job::Trace(t)));
        for job in jobs {
            let (r, n) = self.work.reads(job);
            for o in r[..n].iter().copied().chain(self.work.writes(job)) {
                if !self.alive[o] {
                    self.alive[o] = true;
                    self.held += self.work.bytes[o];
                }
            }
        }
        for j in first..=last {
            for &o in &self.dies_at[j] {
                if self.alive[o] {
                    self.alive[o] = false;
                    self.held -= self.work.bytes[o];
                }
            }
        }
    }
}

/// For each job index, the objects whose last use (read or write) it is.
fn last_uses(work: &Work<'_>, jobs: &[Job]) -> Vec<Vec<usize>> {
    let mut last = vec![usize::MAX; work.objects()];
    for (j, &job) in jobs.iter().enumerate() {
        let (r, n) = work.reads(job);
        for o in r[..n].iter().copied().chain(work.writes(job)) {
            last[o] = j;
        }
    }
    let mut dies_at = vec![Vec::new(); jobs.len()];
    for (o, &j) in last.iter().enumerate() {
        if j != usize::MAX {
            dies_at[j].push(o);
        }
    }
    dies_at
}

/// One stage holding one job.
fn single(job: Job) -> Stage {
    match job {
        Job::Contract(p) => Stage {
            contractions: vec![p],
            ..Stage::default()
        },
        Job::Trace(t) => Stage {
            traces: vec![t],
            ..Stage::default()
        },
    }
}

/// The stages of `jobs`. See the [module documentation](self).
pub(super) fn stages(work: &Work<'_>, jobs: &[Job], vector_size: usize) -> Vec<Stage> {
    let singles: Vec<Stage> = jobs.iter().map(|&j| single(j)).collect();
    let mut fine = singles.clone();
    add_releases(work, &mut fine);
    let target = super::memory::peaks(work, &fine).live;

    let mut m = Merger {
        work,
        alive: vec![false; work.objects()],
        held: 0,
        dies_at: last_uses(work, jobs),
        touched: vec![0; work.objects()],
        stamp: 0,
    };
    let mut out: Vec<Stage> = Vec::new();
    let mut open: Option<(Stage, usize)> = None; // the open stage and its first job
    let mut written: Vec<usize> = Vec::new(); // products written by the open stage
    for (j, job) in jobs.iter().enumerate() {
        if let Some((stage, first)) = open.take() {
            let mut merged = stage.clone();
            let fits = match *job {
                Job::Contract(p) => {
                    let pr = &work.products[p];
                    let independent = ![pr.a, pr.b]
                        .iter()
                        .any(|op| matches!(op, Operand::Product(q) if written.contains(q)));
                    merged.contractions.push(p);
                    independent && stage.contractions.len() < vector_size.max(1)
                }
                Job::Trace(t) => {
                    merged.traces.push(t);
                    true
                }
            };
            if fits && m.stage_top(&merged) <= target {
                if let Job::Contract(p) = *job {
                    written.push(p);
                }
                open = Some((merged, first));
                continue;
            }
            m.close(&stage, first, j - 1);
            out.push(stage);
        }
        written.clear();
        if let Job::Contract(p) = *job {
            written.push(p);
        }
        open = Some((single(*job), j));
    }
    if let Some((stage, first)) = open {
        m.close(&stage, first, jobs.len().saturating_sub(1));
        out.push(stage);
    }
    add_releases(work, &mut out);
    out
}

/// Fills each stage's `release` with the objects whose last use is in it.
pub(super) fn add_releases(work: &Work<'_>, stages: &mut [Stage]) {
    let mut last: HashMap<Operand, usize> = HashMap::new();
    for (s, stage) in stages.iter().enumerate() {
        let jobs = stage
            .contractions
            .iter()
            .map(|&p| Job::Contract(p))
            .chain(stage.traces.iter().map(|&t| Job::Trace(t)));
        for job in jobs {
            let (r, n) = work.reads(job);
            for o in r[..n].iter().copied().chain(work.writes(job)) {
                last.insert(work.operand(o), s);
            }
        }
    }
    let mut by_stage: Vec<Vec<Operand>> = vec![Vec::new(); stages.len()];
    for (op, s) in last {
        by_stage[s].push(op);
    }
    for (stage, mut list) in stages.iter_mut().zip(by_stage) {
        list.sort();
        stage.release = list;
    }
}
