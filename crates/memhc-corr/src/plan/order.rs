//! The order of the work: which trace (with the products it still needs) comes next, how the
//! contractions group into vectors of independent ones, when each object is released, and
//! the peak bytes an order holds.
//!
//! **Planner order** is greedy over the traces: next comes the trace that needs the fewest
//! products not yet computed, then the one whose operands (nodes and products, transitively)
//! are most often alive already, then the earliest in the file. So loops that share a product
//! run back to back, and the product and the nodes they share are released soon after.
//! **File order** takes the traces as the file lists them. Either way a trace's missing
//! products come just before it, in dependency order.

use std::collections::HashSet;

use super::{Operand, Product, Stage, TraceJob};

/// Per trace: the products it needs (transitively, in dependency order) and its leaves.
fn closures(products: &[Product], traces: &[TraceJob]) -> Vec<(Vec<usize>, Vec<Operand>)> {
    fn visit(
        op: Operand,
        products: &[Product],
        seen: &mut HashSet<Operand>,
        list: &mut Vec<usize>,
        leaves: &mut Vec<Operand>,
    ) {
        if !seen.insert(op) {
            return;
        }
        match op {
            Operand::Product(p) => {
                visit(products[p].a, products, seen, list, leaves);
                visit(products[p].b, products, seen, list, leaves);
                list.push(p);
            }
            leaf => leaves.push(leaf),
        }
    }
    traces
        .iter()
        .map(|t| {
            let (mut seen, mut list, mut leaves) = (HashSet::new(), Vec::new(), Vec::new());
            visit(t.a, products, &mut seen, &mut list, &mut leaves);
            visit(t.b, products, &mut seen, &mut list, &mut leaves);
            (list, leaves)
        })
        .collect()
}

/// The traces in planner order (`planned`) or file order.
pub(super) fn trace_order(products: &[Product], traces: &[TraceJob], planned: bool) -> Vec<usize> {
    if !planned {
        return (0..traces.len()).collect();
    }
    let closure = closures(products, traces);
    let mut done = vec![false; products.len()];
    let mut alive: HashSet<Operand> = HashSet::new();
    let mut left: Vec<usize> = (0..traces.len()).collect();
    let mut order = Vec::with_capacity(traces.len());
    while !left.is_empty() {
        let mut best: Option<((usize, usize), usize)> = None;
        for (pos, &t) in left.iter().enumerate() {
            let (ps, leaves) = &closure[t];
            let new = ps.iter().filter(|&&p| !done[p]).count();
            let hits = leaves.iter().filter(|l| alive.contains(l)).count()
                + ps.iter()
                    .filter(|&&p| alive.contains(&Operand::Product(p)))
                    .count();
            let score = (new, usize::MAX - hits);
            if best.is_none_or(|(b, _)| score < b) {
                best = Some((score, pos));
            }
        }
        let Some((_, pos)) = best else { break };
        let t = left.remove(pos);
        let (ps, leaves) = &closure[t];
        for &p in ps {
            done[p] = true;
            alive.insert(Operand::Product(p));
        }
        alive.extend(leaves.iter().copied());
        order.push(t);
    }
    order
}

/// Groups the work of `order` into stages: each stage's contractions are independent (none
/// reads another's output) and at most `vector_size`; its traces run after them; objects are
/// released after the stage of their last use.
pub(super) fn stages(
    products: &[Product],
    traces: &[TraceJob],
    order: &[usize],
    vector_size: usize,
) -> Vec<Stage> {
    let closure = closures(products, traces);
    let mut emitted = vec![false; products.len()];
    let mut stages: Vec<Stage> = Vec::new();
    let mut current = Stage::default();
    let mut in_current: HashSet<usize> = HashSet::new();
    let flush = |current: &mut Stage, in_current: &mut HashSet<usize>, stages: &mut Vec<Stage>| {
        if !current.contractions.is_empty() || !current.traces.is_empty() {
            stages.push(std::mem::take(current));
        }
        in_current.clear();
    };
    for &t in order {
        for &p in &closure[t].0 {
            if emitted[p] {
                continue;
            }
            let depends = [products[p].a, products[p].b]
                .iter()
                .any(|op| matches!(op, Operand::Product(q) if in_current.contains(q)));
            if depends || current.contractions.len() >= vector_size.max(1) {
                flush(&mut current, &mut in_current, &mut stages);
            }
            current.contractions.push(p);
            in_current.insert(p);
            emitted[p] = true;
        }
        current.traces.push(t);
    }
    flush(&mut current, &mut in_current, &mut stages);
    add_releases(products, traces, &mut stages);
    stages
}

/// Fills each stage's `release` with the objects whose last use is in it.
fn add_releases(products: &[Product], traces: &[TraceJob], stages: &mut [Stage]) {
    let mut last: std::collections::HashMap<Operand, usize> = std::collections::HashMap::new();
    for (s, stage) in stages.iter().enumerate() {
        for &p in &stage.contractions {
            last.insert(products[p].a, s);
            last.insert(products[p].b, s);
            last.insert(Operand::Product(p), s);
        }
        for &t in &stage.traces {
            last.insert(traces[t].a, s);
            last.insert(traces[t].b, s);
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

/// The most bytes alive at once when nothing is evicted: an object is alive from its first
/// use (an input copied in, an output written) to the release after its last use; a trace's
/// scratch (`16 · pairs · rows` bytes) while it runs. `bytes` gives an operand's size.
pub(super) fn peak_bytes(
    products: &[Product],
    traces: &[TraceJob],
    stages: &[Stage],
    bytes: &dyn Fn(Operand) -> u64,
) -> u64 {
    let mut alive: HashSet<Operand> = HashSet::new();
    let (mut held, mut peak) = (0u64, 0u64);
    let touch = |op: Operand, alive: &mut HashSet<Operand>, held: &mut u64| {
        if alive.insert(op) {
            *held += bytes(op);
        }
    };
    for stage in stages {
        for &p in &stage.contractions {
            let pr = &products[p];
            touch(pr.a, &mut alive, &mut held);
            touch(pr.b, &mut alive, &mut held);
            touch(Operand::Product(p), &mut alive, &mut held);
            peak = peak.max(held);
        }
        for &t in &stage.traces {
            let tr = &traces[t];
            touch(tr.a, &mut alive, &mut held);
            touch(tr.b, &mut alive, &mut held);
            let scratch = 16 * (tr.pairs.pairs().len() * tr.rows) as u64;
            peak = peak.max(held + scratch);
        }
        for op in &stage.release {
            if alive.remove(op) {
                held -= bytes(*op);
            }
        }
    }
    peak
}
