//! The order in which a run issues its contractions ([`Order`]), worked out before the run as a
//! list of [`Batch`]es: which contractions, on which streams, and what to release after each.
//!
//! * [`Order::Queue`] (the default) issues the queue as it is: vector after vector,
//!   contraction `i` of a vector on stream `i mod streams`, the nodes whose last use is in a
//!   vector released after it.
//! * [`Order::Dependency`] issues by the dependency graph, a list schedule: next, of the
//!   contractions whose producers are all issued, the one whose GEMM is estimated to start
//!   soonest. The estimate keeps two clocks, as a GPU's engines: uploads back to back in the
//!   order of a plan (`uploads`: next, the initial node whose upload lets the most contractions
//!   run that could not before, counted through the dependency graph; see that module), and
//!   GEMMs one after another, each from the later of the SMs' clock and its inputs' readiness
//!   (upload end or producer's end). Ties go to contractions whose output is a result (read
//!   back as soon as written: the read-back engine starts early), then to the queue's order.
//!   Each contraction goes to the stream whose last GEMM is estimated to end first, so that a
//!   GEMM does not queue behind an unrelated one that waits for its inputs. Consecutive
//!   independent contractions form a batch (at most as long as the longest vector), announced
//!   together like a vector; a node is released after the batch that holds its last use in
//!   this order. The runtime uploads a node at its first use in the order issued (or a
//!   prefetch window before it), so the plan's order is the device's.
//!
//! The estimate's times ([`BUS_BYTES_PER_S`] and [`UPLOAD_CALL_S`] per upload,
//! [`GEMM_FLOPS_PER_S`] and [`GEMM_CALL_S`] per GEMM) are those of the modelled H100 on the
//! direct data path (`memhc_gpu::model`'s defaults): a tiled node's upload, 16 copies from
//! page-locked memory, takes 220.6 µs at N = 192 and 786.4 µs at N = 384 there, and a
//! contraction's GEMM 93.6 and 536 µs; each pair of constants is the line through the two.
//! The order steers by them only; any order it makes is valid (every input produced before
//! use, every node released after its last use): the runtime computes the same values
//! whatever the order.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt;
use std::str::FromStr;

use hadron::ContractionSizes;

use crate::error::{Error, Result};
use crate::workload::{Analysis, Workload};

mod uploads;

/// Host-to-device bytes per second of an upload in the dependency order's estimate.
pub const BUS_BYTES_PER_S: f64 = 50e9;
/// Fixed time of one node's upload in the estimate, seconds.
pub const UPLOAD_CALL_S: f64 = 32e-6;
/// Floating-point operations per second of a contraction's GEMM in the dependency order's
/// estimate.
pub const GEMM_FLOPS_PER_S: f64 = 57.4e12;
/// Fixed time of one contraction's GEMM in the estimate, seconds.
pub const GEMM_CALL_S: f64 = 30.5e-6;

/// The order in which a run issues its contractions (see the [module documentation](self)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Order {
    /// Vector after vector, in the queue's order.
    #[default]
    Queue,
    /// By the dependency graph: a list schedule on estimated upload and GEMM times.
    Dependency,
}

impl Order {
    /// Every order, the default first.
    pub const ALL: [Order; 2] = [Order::Queue, Order::Dependency];

    /// The order's name on command lines and in records.
    pub fn name(self) -> &'static str {
        match self {
            Order::Queue => "queue",
            Order::Dependency => "dependency",
        }
    }
}

impl fmt::Display for Order {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Order {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        Order::ALL
            .into_iter()
            .find(|o| o.name() == s)
            .ok_or_else(|| Error::Usage(format!("unknown order '{s}' (queue or dependency)")))
    }
}

/// One contraction as issued: contraction `index` of vector `vector`, on `stream`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Issued {
    /// The vector of the contraction in the workload.
    pub vector: usize,
    /// Its index in the vector.
    pub index: usize,
    /// The stream it is launched on.
    pub stream: usize,
}

/// Contractions issued together, independent of one another (announced to the runtime as one
/// vector), and the nodes to release after them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Batch {
    /// The contractions, in issue order.
    pub issued: Vec<Issued>,
    /// The nodes (by index in the [`Analysis`]) whose last use is in this batch: released
    /// once it is launched.
    pub release: Vec<usize>,
    /// Progress once this batch is launched, in vectors: in the queue's order the vectors
    /// done; in the dependency order the contractions issued so far, in vectors' worth.
    pub vectors_done: usize,
}

/// The batches of `w` in `order` on `streams` streams (at least 1). Nodes used by traces, and
/// results, are not released here (the traces' releases follow the traces as in the queue).
pub fn schedule(w: &Workload, a: &Analysis, order: Order, streams: usize) -> Result<Vec<Batch>> {
    let streams = streams.max(1);
    match order {
        Order::Queue => Ok((0..w.vectors.len())
            .map(|v| Batch {
                issued: (0..a.vector_nodes(v).len())
                    .map(|index| Issued {
                        vector: v,
                        index,
                        stream: index % streams,
                    })
                    .collect(),
                release: a.release_after_vector(v).to_vec(),
                vectors_done: v + 1,
            })
            .collect()),
        Order::Dependency => {
            let issued = list_schedule(w, a, streams)?;
            Ok(batches(w, a, issued))
        }
    }
}

/// A time in the estimate, nanoseconds.
type Ns = u64;

fn ns(seconds: f64) -> Ns {
    // Saturating, and at least 1 for work that exists: a node or GEMM of zero estimated time
    // still takes its turn.
    (seconds * 1e9).clamp(1.0, u64::MAX as f64) as Ns
}

/// Ties between contractions that could start at the same estimated time: results first, then
/// the queue's order (`k`, the contraction's position in the queue).
type Tie = (bool, usize);

/// What the list schedule knows of one contraction.
struct Job {
    inputs: [usize; 2],
    /// Distinct inputs (1 when both operands are the same node).
    distinct: usize,
    out: usize,
    gemm: Ns,
    tie: Tie,
}

/// The list schedule of [`Order::Dependency`]: every contraction once, in issue order, with its
/// stream.
fn list_schedule(w: &Workload, a: &Analysis, streams: usize) -> Result<Vec<Issued>> {
    let nodes = a.node_count();
    let bytes = |i: usize| {
        a.shape_at(i)
            .and_then(|s| s.layout().ok())
            .map_or(0, |l| l.bytes())
    };
    let mut is_result = vec![false; nodes];
    for &r in a.result_nodes() {
        if let Some(slot) = is_result.get_mut(r) {
            *slot = true;
        }
    }
    // Every contraction, flat, in queue order.
    let mut place = Vec::new();
    let mut cs: Vec<Job> = Vec::new();
    for (v, vector) in w.vectors.iter().enumerate() {
        let vn = a.vector_nodes(v);
        if vn.len() != vector.len() {
            return Err(internal(format!("vector {v} was not analysed")));
        }
        for (i, (spec, n)) in vector.iter().zip(vn).enumerate() {
            if [n.a, n.b, n.out].iter().any(|&x| x >= nodes) {
                return Err(internal(format!("vector {v} names a node out of range")));
            }
            let shape = |x: usize| {
                a.shape_at(x)
                    .ok_or_else(|| internal(format!("node {x} has no shape")))
            };
            let sizes = ContractionSizes::new(
                shape(n.a)?,
                shape(n.b)?,
                spec.a_view,
                spec.b_view,
                &spec.mapping,
            )?;
            let flops = sizes.flops(&spec.mapping) as f64;
            let k = cs.len();
            cs.push(Job {
                inputs: [n.a, n.b],
                distinct: if n.a == n.b { 1 } else { 2 },
                out: n.out,
                gemm: ns(GEMM_CALL_S + flops / GEMM_FLOPS_PER_S),
                tie: (!is_result.get(n.out).copied().unwrap_or(false), k),
            });
            place.push((v, i));
        }
    }
    let mut producer = vec![None; nodes];
    for (k, c) in cs.iter().enumerate() {
        let slot = producer
            .get_mut(c.out)
            .ok_or_else(|| internal(format!("node {} is out of range", c.out)))?;
        *slot = Some(k);
    }
    let mut consumers: Vec<Vec<usize>> = vec![Vec::new(); nodes];
    // Inputs whose producer is not yet issued, per contraction.
    let mut waiting = vec![0usize; cs.len()];
    for (k, c) in cs.iter().enumerate() {
        for &x in &c.inputs[..c.distinct] {
            consumers[x].push(k);
            if producer[x].is_some() {
                waiting[k] += 1;
            }
        }
    }
    // The uploads, back to back in the plan's order: when each initial node is on the device.
    let mut ready: Vec<Option<Ns>> = vec![None; nodes];
    let inputs: Vec<[usize; 2]> = cs.iter().map(|c| c.inputs).collect();
    let mut h2d: Ns = 0;
    for x in uploads::upload_order(&inputs, &producer) {
        h2d = h2d.saturating_add(ns(UPLOAD_CALL_S + bytes(x) as f64 / BUS_BYTES_PER_S));
        if let Some(slot) = ready.get_mut(x) {
            *slot = Some(h2d);
        }
    }

    let mut s = State {
        ready,
        compute_free: 0,
        stream_free: vec![0; streams],
        now: BinaryHeap::new(),
        later: BinaryHeap::new(),
    };
    for (k, _) in waiting.iter().enumerate().filter(|(_, w)| **w == 0) {
        s.offer(&cs, k);
    }
    let mut out = Vec::with_capacity(cs.len());
    while out.len() < cs.len() {
        let k = s
            .pick()
            .ok_or_else(|| internal("the dependency graph has a cycle".into()))?;
        let c = &cs[k];
        let mut start = s.compute_free;
        for &x in &c.inputs[..c.distinct] {
            start = start.max(s.ready[x].unwrap_or(0));
        }
        let end = start.saturating_add(c.gemm);
        s.compute_free = end;
        s.ready[c.out] = Some(end);
        // The stream whose last GEMM ends first (the lowest on a tie).
        let stream = (0..streams)
            .min_by_key(|&st| (s.stream_free[st], st))
            .unwrap_or(0);
        s.stream_free[stream] = end;
        let (vector, index) = place[k];
        out.push(Issued {
            vector,
            index,
            stream,
        });
        for &next in &consumers[c.out] {
            waiting[next] -= 1;
            if waiting[next] == 0 {
                s.offer(&cs, next);
            }
        }
    }
    Ok(out)
}

/// The list schedule's state: the estimated clocks and the contractions that may be issued.
struct State {
    /// When each node is estimated to be on the device (initial nodes: the plan of uploads;
    /// outputs: once their producer is issued).
    ready: Vec<Option<Ns>>,
    compute_free: Ns,
    stream_free: Vec<Ns>,
    /// Contractions whose producers are issued and whose inputs are ready by `compute_free`.
    now: BinaryHeap<Reverse<Tie>>,
    /// Contractions whose producers are issued, by the time their last input is ready.
    later: BinaryHeap<Reverse<(Ns, Tie)>>,
}

impl State {
    /// Contraction `k`, whose producers are all issued, may be issued: filed by when its
    /// inputs are ready.
    fn offer(&mut self, cs: &[Job], k: usize) {
        let c = &cs[k];
        let ready = c.inputs[..c.distinct]
            .iter()
            .map(|&x| self.ready[x].unwrap_or(0))
            .max()
            .unwrap_or(0);
        if ready <= self.compute_free {
            self.now.push(Reverse(c.tie));
        } else {
            self.later.push(Reverse((ready, c.tie)));
        }
    }

    /// The contraction to issue next: the soonest estimated start, then the tie's order.
    fn pick(&mut self) -> Option<usize> {
        while let Some(&Reverse((t, tie))) = self.later.peek() {
            if t > self.compute_free {
                break;
            }
            self.later.pop();
            self.now.push(Reverse(tie));
        }
        match self.now.pop() {
            Some(Reverse((_, k))) => Some(k),
            None => self.later.pop().map(|Reverse((_, (_, k)))| k),
        }
    }
}

/// Cuts the issued contractions into batches of independent ones (at most as long as the
/// longest vector) and files each node's release after the batch of its last use.
fn batches(w: &Workload, a: &Analysis, issued: Vec<Issued>) -> Vec<Batch> {
    let longest = w.vectors.iter().map(Vec::len).max().unwrap_or(1).max(1);
    let nodes = a.node_count();
    // The batch that produced each node, and the batch of each node's last use.
    let mut made_in: Vec<Option<usize>> = vec![None; nodes];
    let mut last: Vec<Option<usize>> = vec![None; nodes];
    let mut out: Vec<Batch> = Vec::new();
    for is in issued {
        let Some(n) = a.vector_nodes(is.vector).get(is.index).copied() else {
            continue;
        };
        let current = out.len().checked_sub(1);
        let depends = [n.a, n.b].iter().any(|&x| {
            made_in
                .get(x)
                .copied()
                .flatten()
                .is_some_and(|b| Some(b) == current)
        });
        let full = out.last().is_none_or(|b| b.issued.len() >= longest);
        if depends || full {
            out.push(Batch::default());
        }
        let b = out.len() - 1;
        for x in [n.a, n.b, n.out] {
            if let Some(slot) = last.get_mut(x) {
                *slot = Some(b);
            }
        }
        if let Some(slot) = made_in.get_mut(n.out) {
            *slot = Some(b);
        }
        if let Some(batch) = out.last_mut() {
            batch.issued.push(is);
        }
    }
    // What the queue releases after its vectors, released after its last use in this order.
    let total: usize = w.vectors.iter().map(Vec::len).sum();
    let mut issued_so_far = 0;
    for batch in &mut out {
        issued_so_far += batch.issued.len();
        batch.vectors_done = issued_so_far * w.vectors.len() / total.max(1);
    }
    let mut release: Vec<usize> = (0..w.vectors.len())
        .flat_map(|v| a.release_after_vector(v).iter().copied())
        .collect();
    release.sort_unstable();
    for node in release {
        if let Some(batch) = last
            .get(node)
            .copied()
            .flatten()
            .and_then(|b| out.get_mut(b))
        {
            batch.release.push(node);
        }
    }
    out
}

/// An error that means the analysis does not belong to the workload.
pub(crate) fn internal(what: String) -> Error {
    Error::Usage(format!(
        "internal: {what} (is the analysis of another workload?)"
    ))
}
