//! From interpolators and time pairs to nodes, graphs and correlators: every correlator of a
//! sink and a source interpolator, at every time pair, is the Wick contraction of their flavour
//! structures ([`crate::wick::contract`]) over every pair of their momentum terms, equal graphs
//! added.

use std::collections::{BTreeMap, HashMap};

use crate::physics::{Correlator, End, Generated, Graph, Interpolator, NodeKey, TimePair};
use crate::wick::{Slot, Topology, contract, rotate_to_least};

/// Coefficients smaller than this are taken as cancelled.
const CANCELLED: f64 = 1e-12;

/// Builds the workload of the correlators `⟨sink(t) source†(t₀)⟩` for each pair in
/// `correlators` (indices into `ops`), at every pair of `times`.
pub fn build(
    ops: &[Interpolator],
    correlators: &[(usize, usize)],
    times: &[TimePair],
) -> Generated {
    let mut b = Builder::default();
    for &(si, so) in correlators {
        let (sink, source) = (&ops[si], &ops[so]);
        let diagrams = contract(&sink.flavour, &source.flavour);
        let mut pairs = Vec::with_capacity(times.len());
        for &tp in times {
            // loops (canonical node indices) -> coefficient, in a fixed order.
            let mut sum: BTreeMap<Vec<Vec<usize>>, f64> = BTreeMap::new();
            for ts in &sink.terms {
                for tr in &source.terms {
                    for d in &diagrams {
                        let loops = d
                            .loops
                            .iter()
                            .map(|l| {
                                let keys = l.iter().enumerate().map(|(i, &s)| {
                                    let next = l[(i + 1) % l.len()];
                                    let (meson, end, time) = match s {
                                        Slot::Sink(k) => (&ts.mesons[k], End::Sink, tp.sink),
                                        Slot::Source(k) => (&tr.mesons[k], End::Source, tp.source),
                                    };
                                    let to = if next.at_sink() { tp.sink } else { tp.source };
                                    NodeKey {
                                        meson: meson.clone(),
                                        end,
                                        time,
                                        to,
                                    }
                                });
                                rotate_to_least(keys.map(|k| b.node(k)).collect())
                            })
                            .collect::<Vec<_>>();
                        let mut loops = loops;
                        loops.sort();
                        *sum.entry(loops).or_insert(0.0) += d.coeff * ts.coeff * tr.coeff;
                    }
                }
            }
            let graphs = sum
                .into_iter()
                .filter(|(_, c)| c.abs() > CANCELLED)
                .map(|(loops, coeff)| b.graph(loops, coeff))
                .collect();
            pairs.push((tp, graphs));
        }
        let momentum = sink.terms.first().map_or([0; 3], |t| {
            t.mesons.iter().fold([0; 3], |acc, m| {
                [
                    acc[0] + m.momentum[0],
                    acc[1] + m.momentum[1],
                    acc[2] + m.momentum[2],
                ]
            })
        });
        b.out.correlators.push(Correlator {
            name: format!("{}.x.{}", sink.name, source.name),
            sink: sink.name.clone(),
            source: source.name.clone(),
            momentum,
            pairs,
        });
    }
    b.out
}

#[derive(Default)]
struct Builder {
    out: Generated,
    index: HashMap<NodeKey, usize>,
}

impl Builder {
    fn node(&mut self, key: NodeKey) -> usize {
        if let Some(&i) = self.index.get(&key) {
            return i;
        }
        let i = self.out.nodes.len();
        self.out.nodes.push(key.clone());
        self.index.insert(key, i);
        i
    }

    fn graph(&mut self, loops: Vec<Vec<usize>>, coeff: f64) -> usize {
        let slots: Vec<Vec<Slot>> = loops
            .iter()
            .map(|l| {
                l.iter()
                    .map(|&n| match self.out.nodes[n].end {
                        End::Sink => Slot::Sink(n),
                        End::Source => Slot::Source(n),
                    })
                    .collect()
            })
            .collect();
        self.out.graphs.push(Graph {
            coeff,
            topology: Topology::of(&slots),
            loops,
        });
        self.out.graphs.len() - 1
    }
}
