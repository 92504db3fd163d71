//! How many contractions a generated workload takes when identical partial products are
//! computed once, under the reduction a physicist writes by hand: in every loop, the mesons
//! of one time slice are multiplied first (the sink's and the source's two-meson blocks), the
//! loop is then reduced pairwise until two factors are left, whose trace closes it.
//!
//! This is the count the presets are calibrated against (the MemHC paper's Table 4 counts the
//! contractions of Redstar's queue, which shares partial products); it is a fixed rule, not
//! the planner's search, so the planner can only do as well or better.

use std::collections::HashSet;

use crate::physics::Generated;

/// A factor of a loop during its reduction: a node, or the product of two factors.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Factor {
    /// A node (index into [`Generated::nodes`]).
    Node(usize),
    /// The product of two factors, in this order.
    Product(Box<Factor>, Box<Factor>),
}

/// The distinct products of every loop of `g` under the fixed rule, in first-use order.
pub fn shared_products(g: &Generated) -> Vec<Factor> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for graph in &g.graphs {
        for l in &graph.loops {
            for p in reduce(g, l) {
                if seen.insert(p.clone()) {
                    out.push(p);
                }
            }
        }
    }
    out
}

/// The number of contractions with identical partial products computed once.
pub fn shared_contractions(g: &Generated) -> usize {
    shared_products(g).len()
}

/// The products one loop takes under the fixed rule.
pub fn reduce(g: &Generated, l: &[usize]) -> Vec<Factor> {
    let k = l.len();
    if k < 3 {
        return Vec::new();
    }
    // Start at the least adjacent pair of nodes on one time slice, if there is one.
    let same_time = |i: usize| g.nodes[l[i]].time == g.nodes[l[(i + 1) % k]].time;
    let start = (0..k)
        .filter(|&i| same_time(i))
        .min_by_key(|&i| (l[i], l[(i + 1) % k]))
        .unwrap_or(0);
    let mut factors: Vec<Factor> = (0..k).map(|i| Factor::Node(l[(start + i) % k])).collect();
    let mut products = Vec::new();
    while factors.len() > 2 {
        let mut next = Vec::with_capacity(factors.len().div_ceil(2));
        let mut it = factors.into_iter();
        while let Some(a) = it.next() {
            match it.next() {
                Some(b) => {
                    let p = Factor::Product(Box::new(a), Box::new(b));
                    products.push(p.clone());
                    next.push(p);
                }
                None => next.push(a),
            }
        }
        factors = next;
        if factors.len() == 2 {
            break;
        }
    }
    products
}
