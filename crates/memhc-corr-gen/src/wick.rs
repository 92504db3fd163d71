//! Wick's theorem for products of meson bilinears: every way of joining each quark field to an
//! antiquark field of the same flavour, each a permutation of the mesons, whose cycles are the
//! closed quark loops of a graph.
//!
//! A meson bilinear `q̄_a Γ q_b` has an antiquark of flavour `a` and a quark of flavour `b`. A
//! correlator `⟨O_snk(t) O_src(t₀)†⟩` multiplies the sink operator's bilinears by the *daggered*
//! source operator's, `(q̄_a Γ q_b)† = q̄_b Γ' q_a` (anti and quark flavours swap; the sign of
//! `Γ'` is part of the node). Wick's theorem sums over the permutations `σ` of the mesons that
//! join the quark of meson `i` to the antiquark of meson `σ(i)` (same flavour); the quark line
//! runs around each cycle of `σ`, so each cycle is a loop `tr(M_i M_σ(i) M_σ²(i) ...)` with the
//! propagators folded into the nodes, and each closed loop contributes a factor `-1` (Fermi
//! statistics): a graph with `L` loops has the sign `(-1)^L`.
//!
//! With `u` and `d` degenerate (the isospin limit), every propagator of a light quark is the
//! same, so the value of a graph depends only on which meson slots its loops visit, not on the
//! flavours: [`contract`] adds the coefficients of equal graphs and drops those that cancel
//! (an isovector operator has no vacuum graphs, for instance).

use std::collections::BTreeMap;

/// A quark flavour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Flavour {
    /// The up quark.
    Up,
    /// The down quark (degenerate with up).
    Down,
    /// The strange quark.
    Strange,
}

/// A bilinear `q̄_anti Γ q_quark`: one meson's flavour content in one component of an operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bilinear {
    /// The antiquark's flavour.
    pub anti: Flavour,
    /// The quark's flavour.
    pub quark: Flavour,
}

impl Bilinear {
    /// `q̄_anti Γ q_quark`.
    pub const fn new(anti: Flavour, quark: Flavour) -> Self {
        Bilinear { anti, quark }
    }

    /// The hermitian conjugate's flavours: anti and quark swapped.
    pub const fn dagger(self) -> Self {
        Bilinear {
            anti: self.quark,
            quark: self.anti,
        }
    }
}

/// One term of an operator's flavour wave function: a coefficient times one bilinear per meson
/// slot (slot `k` of every component is the same meson: same gamma, momentum, displacement).
#[derive(Clone, Debug, PartialEq)]
pub struct Component {
    /// The real coefficient (isospin Clebsch-Gordan coefficients are real).
    pub coeff: f64,
    /// One bilinear per meson slot.
    pub bilinears: Vec<Bilinear>,
}

/// An operator's flavour structure: a sum of components, all with the same number of slots.
#[derive(Clone, Debug, PartialEq)]
pub struct FlavourOp {
    /// The components.
    pub components: Vec<Component>,
}

impl FlavourOp {
    /// The number of meson slots (that of the first component; 0 when there is none).
    pub fn slots(&self) -> usize {
        self.components.first().map_or(0, |c| c.bilinears.len())
    }

    /// The hermitian conjugate: every bilinear daggered (coefficients are real).
    pub fn dagger(&self) -> FlavourOp {
        FlavourOp {
            components: self
                .components
                .iter()
                .map(|c| Component {
                    coeff: c.coeff,
                    bilinears: c.bilinears.iter().map(|b| b.dagger()).collect(),
                })
                .collect(),
        }
    }
}

/// Where a meson of a correlator sits: at the sink or at the source, and which slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Slot {
    /// Slot `k` of the sink operator.
    Sink(usize),
    /// Slot `k` of the (daggered) source operator.
    Source(usize),
}

impl Slot {
    /// Whether the slot is at the sink.
    pub fn at_sink(self) -> bool {
        matches!(self, Slot::Sink(_))
    }
}

/// A graph of a correlator: a coefficient (sign and flavour factors) times a product of loops,
/// each a cyclic sequence of slots in the order the quark line visits them, rotated to start
/// at its least slot; loops sorted.
#[derive(Clone, Debug, PartialEq)]
pub struct Diagram {
    /// The coefficient.
    pub coeff: f64,
    /// The loops.
    pub loops: Vec<Vec<Slot>>,
}

/// The topology of a graph, by where its loops run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Topology {
    /// One loop through one sink and one source meson: the connected two-point graph.
    Connected,
    /// Several loops, each through one sink and one source meson: the direct graph
    /// (disconnected: a product of traces).
    Direct,
    /// One loop of three mesons, one at one end and two at the other.
    Triangle,
    /// One loop of four mesons alternating between sink and source.
    Crossed,
    /// One loop of four mesons that passes between the two ends only twice (two propagators
    /// within a time slice): the box (rectangle) graph.
    Box,
    /// A loop within one time slice (a vacuum or tadpole factor): disconnected from the other
    /// end, it is present only when the operators can mix with the vacuum (isoscalars).
    Vacuum,
    /// Any other shape (more than two mesons at an end).
    Other,
}

impl Topology {
    /// Classifies a graph's loops.
    pub fn of(loops: &[Vec<Slot>]) -> Topology {
        let one_end =
            |l: &Vec<Slot>| l.iter().all(|s| s.at_sink()) || !l.iter().any(|s| s.at_sink());
        if loops.iter().any(one_end) {
            return Topology::Vacuum;
        }
        if loops.len() > 1 {
            return if loops.iter().all(|l| l.len() == 2) {
                Topology::Direct
            } else {
                Topology::Other
            };
        }
        let Some(l) = loops.first() else {
            return Topology::Other;
        };
        // The number of times the line changes end going round the loop.
        let changes = (0..l.len())
            .filter(|&i| l[i].at_sink() != l[(i + 1) % l.len()].at_sink())
            .count();
        match (l.len(), changes) {
            (2, _) => Topology::Connected,
            (3, _) => Topology::Triangle,
            (4, 4) => Topology::Crossed,
            (4, 2) => Topology::Box,
            _ => Topology::Other,
        }
    }

    /// The name used in key fields and reports.
    pub fn name(self) -> &'static str {
        match self {
            Topology::Connected => "connected",
            Topology::Direct => "direct",
            Topology::Triangle => "triangle",
            Topology::Crossed => "crossed",
            Topology::Box => "box",
            Topology::Vacuum => "vacuum",
            Topology::Other => "other",
        }
    }
}

/// Coefficients smaller than this are taken as cancelled.
const CANCELLED: f64 = 1e-12;

/// The graphs of `⟨sink · source†⟩`: every Wick contraction of every pair of components,
/// equal graphs added, cancelled ones dropped, in a fixed order (by loops).
pub fn contract(sink: &FlavourOp, source: &FlavourOp) -> Vec<Diagram> {
    let source = source.dagger();
    let mut sum: BTreeMap<Vec<Vec<Slot>>, f64> = BTreeMap::new();
    for a in &sink.components {
        for b in &source.components {
            let slots: Vec<(Slot, Bilinear)> = (a.bilinears.iter().enumerate())
                .map(|(k, &bl)| (Slot::Sink(k), bl))
                .chain(
                    b.bilinears
                        .iter()
                        .enumerate()
                        .map(|(k, &bl)| (Slot::Source(k), bl)),
                )
                .collect();
            let coeff = a.coeff * b.coeff;
            for perm in joinings(&slots) {
                let loops = cycles(&slots, &perm);
                let sign = if loops.len().is_multiple_of(2) {
                    1.0
                } else {
                    -1.0
                };
                *sum.entry(loops).or_insert(0.0) += sign * coeff;
            }
        }
    }
    sum.into_iter()
        .filter(|(_, c)| c.abs() > CANCELLED)
        .map(|(loops, coeff)| Diagram { coeff, loops })
        .collect()
}

/// Every permutation `σ` with the quark of `i` of the flavour of the antiquark of `σ(i)`.
fn joinings(slots: &[(Slot, Bilinear)]) -> Vec<Vec<usize>> {
    fn extend(
        slots: &[(Slot, Bilinear)],
        perm: &mut Vec<usize>,
        used: &mut Vec<bool>,
        out: &mut Vec<Vec<usize>>,
    ) {
        let i = perm.len();
        if i == slots.len() {
            out.push(perm.clone());
            return;
        }
        for j in 0..slots.len() {
            if !used[j] && slots[i].1.quark == slots[j].1.anti {
                used[j] = true;
                perm.push(j);
                extend(slots, perm, used, out);
                perm.pop();
                used[j] = false;
            }
        }
    }
    let mut out = Vec::new();
    extend(
        slots,
        &mut Vec::new(),
        &mut vec![false; slots.len()],
        &mut out,
    );
    out
}

/// The cycles of `perm` as loops of slots, each rotated to start at its least slot, sorted.
fn cycles(slots: &[(Slot, Bilinear)], perm: &[usize]) -> Vec<Vec<Slot>> {
    let mut seen = vec![false; perm.len()];
    let mut loops = Vec::new();
    for start in 0..perm.len() {
        if seen[start] {
            continue;
        }
        let mut l = Vec::new();
        let mut i = start;
        while !seen[i] {
            seen[i] = true;
            l.push(slots[i].0);
            i = perm[i];
        }
        loops.push(rotate_to_least(l));
    }
    loops.sort();
    loops
}

/// A cyclic sequence rotated to start at its least element.
pub fn rotate_to_least<T: Ord + Clone>(mut l: Vec<T>) -> Vec<T> {
    if let Some(pos) = (0..l.len()).min_by_key(|&i| &l[i]) {
        l.rotate_left(pos);
    }
    l
}
