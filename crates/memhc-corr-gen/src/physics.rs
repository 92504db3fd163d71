//! The physics a generated workload is made of, before it becomes a file: mesons at a
//! momentum, interpolators (a flavour structure times a sum over momentum terms), and the
//! nodes, graphs and correlators Wick's theorem makes of them ([`crate::build`]).

use crate::wick::{FlavourOp, Topology};

/// A momentum in units of `2π/L`.
pub type Momentum = [i32; 3];

/// One meson of a term: its operator (gamma structure) name, momentum and displacement.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Meson {
    /// The operator name (`"pi"`, `"rho_z"`, `"a1_z"`, ...).
    pub operator: String,
    /// The momentum.
    pub momentum: Momentum,
    /// The displacement (`""` for a local operator, `"nabla_z"`, ...).
    pub displacement: String,
}

impl Meson {
    /// A meson.
    pub fn new(operator: &str, momentum: Momentum, displacement: &str) -> Self {
        Meson {
            operator: operator.to_owned(),
            momentum,
            displacement: displacement.to_owned(),
        }
    }
}

/// One momentum term of an interpolator: a coefficient times one meson per flavour slot.
#[derive(Clone, Debug, PartialEq)]
pub struct Term {
    /// The coefficient (momentum-projection weight).
    pub coeff: f64,
    /// One meson per slot of the interpolator's flavour structure.
    pub mesons: Vec<Meson>,
}

/// An interpolating operator: a name, a flavour structure, and a sum over momentum terms.
#[derive(Clone, Debug, PartialEq)]
pub struct Interpolator {
    /// The name (`"a1"`, `"rhopi_p1"`, ...), part of the correlators' names.
    pub name: String,
    /// The flavour structure (slot `k` of every component is meson `k` of every term).
    pub flavour: FlavourOp,
    /// The momentum terms.
    pub terms: Vec<Term>,
}

/// Which end of a correlator a node is at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum End {
    /// The sink, `O(t)`.
    Sink,
    /// The source, `O†(t₀)`: the daggered operator.
    Source,
}

/// What identifies a hadron node: a meson at one end, at a time slice, with the perambulator
/// of the quark line leaving it folded in (so the time slice the line runs to is part of it,
/// as in Redstar's hadron nodes).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeKey {
    /// The meson.
    pub meson: Meson,
    /// Sink or source (the source's operator is the daggered one).
    pub end: End,
    /// The time slice of the meson.
    pub time: u32,
    /// The time slice the quark line leaving the node runs to.
    pub to: u32,
}

impl NodeKey {
    /// The operator name as a key field: the meson's, with `^dag` at the source.
    pub fn operator_name(&self) -> String {
        match self.end {
            End::Sink => self.meson.operator.clone(),
            End::Source => format!("{}^dag", self.meson.operator),
        }
    }

    /// A readable, unique id of the file's id alphabet: `rho_z.dag.p1_0_m1.nabla_z.t0.to8`
    /// (`.dag` at the source, `m` for a minus sign, `local` for no displacement, then the time
    /// slice and the time slice the quark line runs to).
    pub fn id(&self) -> String {
        let m = |v: i32| {
            if v < 0 {
                format!("m{}", -v)
            } else {
                v.to_string()
            }
        };
        let [x, y, z] = self.meson.momentum;
        let d = if self.meson.displacement.is_empty() {
            "local"
        } else {
            &self.meson.displacement
        };
        let dag = match self.end {
            End::Sink => "",
            End::Source => ".dag",
        };
        format!(
            "{}{dag}.p{}_{}_{}.{d}.t{}.to{}",
            self.meson.operator,
            m(x),
            m(y),
            m(z),
            self.time,
            self.to
        )
    }
}

/// A graph: a coefficient times a product of loops of nodes (indices into
/// [`Generated::nodes`]), each loop in the order the quark line visits it.
#[derive(Clone, Debug, PartialEq)]
pub struct Graph {
    /// The coefficient.
    pub coeff: f64,
    /// The loops.
    pub loops: Vec<Vec<usize>>,
    /// The topology.
    pub topology: Topology,
}

/// A source and sink time slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TimePair {
    /// The source time slice `t₀`.
    pub source: u32,
    /// The sink time slice `t`.
    pub sink: u32,
}

/// A correlator `⟨O_sink(t) O_source†(t₀)⟩` at several time pairs: at each, the graphs it sums
/// (indices into [`Generated::graphs`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Correlator {
    /// `sink_name.x.source_name`.
    pub name: String,
    /// The sink interpolator's name.
    pub sink: String,
    /// The source interpolator's name.
    pub source: String,
    /// The total momentum (of the sink's first term).
    pub momentum: Momentum,
    /// At each time pair, the graphs summed.
    pub pairs: Vec<(TimePair, Vec<usize>)>,
}

/// A generated workload before it becomes a file.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Generated {
    /// The nodes, each once.
    pub nodes: Vec<NodeKey>,
    /// The graphs.
    pub graphs: Vec<Graph>,
    /// The correlators.
    pub correlators: Vec<Correlator>,
}

impl Generated {
    /// Contractions the file asks for with no sharing: a loop of `k >= 2` nodes takes `k - 2`
    /// products and one trace of the last two (as Redstar reduces a graph to two nodes).
    pub fn contractions(&self) -> usize {
        self.graphs
            .iter()
            .flat_map(|g| &g.loops)
            .map(|l| l.len().saturating_sub(2))
            .sum()
    }

    /// Traces the file asks for with no sharing: one per loop.
    pub fn traces(&self) -> usize {
        self.graphs.iter().map(|g| g.loops.len()).sum()
    }

    /// Graphs of each topology.
    pub fn topology_counts(&self) -> Vec<(Topology, usize)> {
        let mut counts = std::collections::BTreeMap::new();
        for g in &self.graphs {
            *counts.entry(g.topology).or_insert(0) += 1;
        }
        counts.into_iter().collect()
    }
}
