//! The work as a graph of objects and jobs, and an order of the traces turned into a queue of
//! single [`Job`]s: each trace with the products it still needs just before it, in dependency
//! order. After each job every object whose last use has passed can be released;
//! [`super::stages`] groups the jobs into vectors without raising the peak, and
//! [`super::greedy`] chooses the planner's order of the traces.

use super::{Operand, Product, TraceJob};

/// One job of the fine-grained queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Job {
    /// Compute [`super::Plan::products`]`[p]`.
    Contract(usize),
    /// Compute [`super::Plan::traces`]`[t]`.
    Trace(usize),
}

/// The work as a graph of objects: every operand a dense index, with its bytes.
pub(super) struct Work<'a> {
    pub products: &'a [Product],
    pub traces: &'a [TraceJob],
    nodes: usize,
    identities: usize,
    /// Bytes of each object (nodes, then identities, then products).
    pub bytes: Vec<u64>,
}

impl<'a> Work<'a> {
    /// The work of `products` and `traces`; `bytes` gives an operand's size.
    pub fn new(
        products: &'a [Product],
        traces: &'a [TraceJob],
        nodes: usize,
        identities: usize,
        bytes: &dyn Fn(Operand) -> u64,
    ) -> Self {
        let mut sizes = Vec::with_capacity(nodes + identities + products.len());
        sizes.extend((0..nodes).map(|n| bytes(Operand::Node(n))));
        sizes.extend((0..identities).map(|i| bytes(Operand::Identity(i))));
        sizes.extend((0..products.len()).map(|p| bytes(Operand::Product(p))));
        Work {
            products,
            traces,
            nodes,
            identities,
            bytes: sizes,
        }
    }

    /// Objects in all.
    pub fn objects(&self) -> usize {
        self.bytes.len()
    }

    /// The dense index of an operand.
    pub fn obj(&self, op: Operand) -> usize {
        match op {
            Operand::Node(n) => n,
            Operand::Identity(i) => self.nodes + i,
            Operand::Product(p) => self.nodes + self.identities + p,
        }
    }

    /// The operand of a dense index.
    pub fn operand(&self, o: usize) -> Operand {
        if o < self.nodes {
            Operand::Node(o)
        } else if o < self.nodes + self.identities {
            Operand::Identity(o - self.nodes)
        } else {
            Operand::Product(o - self.nodes - self.identities)
        }
    }

    /// The distinct objects a job reads (one when both operands are the same object).
    pub fn reads(&self, job: Job) -> ([usize; 2], usize) {
        let (a, b) = match job {
            Job::Contract(p) => (self.products[p].a, self.products[p].b),
            Job::Trace(t) => (self.traces[t].a, self.traces[t].b),
        };
        let (a, b) = (self.obj(a), self.obj(b));
        if a == b { ([a, a], 1) } else { ([a, b], 2) }
    }

    /// The object a job writes (none for a trace).
    pub fn writes(&self, job: Job) -> Option<usize> {
        match job {
            Job::Contract(p) => Some(self.obj(Operand::Product(p))),
            Job::Trace(_) => None,
        }
    }

    /// The scratch bytes a job holds while it runs: a trace's per-row results.
    pub fn scratch(&self, job: Job) -> u64 {
        match job {
            Job::Contract(_) => 0,
            Job::Trace(t) => scratch_bytes(&self.traces[t]),
        }
    }

    /// For each object, the number of jobs that read it (every product and every trace).
    pub fn consumers(&self) -> Vec<u32> {
        let mut pending = vec![0u32; self.objects()];
        let jobs = (0..self.products.len())
            .map(Job::Contract)
            .chain((0..self.traces.len()).map(Job::Trace));
        for job in jobs {
            let (r, n) = self.reads(job);
            for &o in &r[..n] {
                pending[o] += 1;
            }
        }
        pending
    }

    /// The products `op` needs that are not `computed` yet, in dependency order, appended to
    /// `out` (`seen` marks what this walk has visited with `stamp`).
    pub fn missing(
        &self,
        op: Operand,
        computed: &[bool],
        seen: &mut [u32],
        stamp: u32,
        out: &mut Vec<usize>,
    ) {
        let Operand::Product(p) = op else { return };
        if computed[p] || seen[p] == stamp {
            return;
        }
        seen[p] = stamp;
        self.missing(self.products[p].a, computed, seen, stamp, out);
        self.missing(self.products[p].b, computed, seen, stamp, out);
        out.push(p);
    }
}

/// The bytes of a trace's scratch object: one complex number per pair and row.
pub(super) fn scratch_bytes(t: &TraceJob) -> u64 {
    16 * (t.pairs.pairs().len() * t.rows) as u64
}

/// The jobs of the traces in `order`, each trace's missing products just before it, in
/// dependency order.
pub(super) fn jobs(work: &Work<'_>, order: &[usize]) -> Vec<Job> {
    let mut computed = vec![false; work.products.len()];
    let mut seen = vec![0u32; work.products.len()];
    let mut out = Vec::with_capacity(work.products.len() + order.len());
    let mut missing = Vec::new();
    for (i, &t) in order.iter().enumerate() {
        missing.clear();
        let stamp = i as u32 + 1;
        work.missing(work.traces[t].a, &computed, &mut seen, stamp, &mut missing);
        work.missing(work.traces[t].b, &computed, &mut seen, stamp, &mut missing);
        for &p in &missing {
            computed[p] = true;
            out.push(Job::Contract(p));
        }
        out.push(Job::Trace(t));
    }
    out
}

/// The traces in file order.
pub(super) fn file_order(work: &Work<'_>) -> Vec<usize> {
    (0..work.traces.len()).collect()
}

/// For each object, the traces (among those `keep` accepts) whose step may read it: the
/// trace's operands and, through its products, everything they are made of.
pub(super) fn readers(work: &Work<'_>, keep: &dyn Fn(usize) -> bool) -> Vec<Vec<usize>> {
    let mut readers: Vec<Vec<usize>> = vec![Vec::new(); work.objects()];
    let mut stack = Vec::new();
    let mut seen = vec![usize::MAX; work.objects()];
    for (t, tr) in work.traces.iter().enumerate().filter(|(t, _)| keep(*t)) {
        stack.clear();
        stack.extend([tr.a, tr.b]);
        while let Some(op) = stack.pop() {
            let o = work.obj(op);
            if seen[o] == t {
                continue;
            }
            seen[o] = t;
            readers[o].push(t);
            if let Operand::Product(p) = op {
                stack.extend([work.products[p].a, work.products[p].b]);
            }
        }
    }
    readers
}
