//! The correlators of a checked file computed by the independent reference,
//! [`hadron::dense`]: graph by graph, loop by loop, as plain dense products and traces (every
//! node through its view), with no sharing, no cache, no planner and no runtime.
//!
//! Graphs are independent of each other, so they are evaluated on every core the process may
//! use (scoped threads over contiguous shares of the used graphs); each graph's value is the
//! same whichever thread computes it, so the result does not depend on the number of threads.

use std::num::NonZeroUsize;
use std::thread;

use hadron::HadronNode;
use hadron::dense::{Factor, LoopSpins, graph_value_with_views};
use num_complex::Complex64;

use crate::checked::{CheckedFile, LoopKind};
use crate::error::Result;
use crate::output::Correlators;

/// Every used graph of `checked` evaluated on its own by [`hadron::dense`], summed into the
/// correlators.
pub fn correlators(checked: &CheckedFile) -> Result<Correlators> {
    let used = checked.used_graphs();
    let mut values: Vec<Option<HadronNode>> = vec![None; checked.nodes.len()];
    for &g in &used {
        for lp in &checked.graphs[g].loops {
            for &n in &lp.nodes {
                if values[n].is_none() {
                    values[n] = Some(checked.nodes[n].values()?);
                }
            }
        }
    }
    let threads = thread::available_parallelism().map_or(1, NonZeroUsize::get);
    let share = used.len().div_ceil(threads).max(1);
    let values = &values;
    let shares: Vec<Result<Vec<(usize, Complex64)>>> = thread::scope(|s| {
        let workers: Vec<_> = used
            .chunks(share)
            .map(|graphs| {
                s.spawn(move || {
                    graphs
                        .iter()
                        .map(|&g| Ok((g, graph_value(checked, values, g)?)))
                        .collect()
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| {
                w.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });
    let mut graph_values = vec![Complex64::new(0.0, 0.0); checked.graphs.len()];
    for share in shares {
        for (g, v) in share? {
            graph_values[g] = v;
        }
    }
    Ok(Correlators::from_graph_values(checked, &graph_values))
}

/// The value of graph `g`, its nodes' values taken from `values` (every node of a used graph
/// is there).
fn graph_value(
    checked: &CheckedFile,
    values: &[Option<HadronNode>],
    g: usize,
) -> Result<Complex64> {
    let graph = &checked.graphs[g];
    let mut mapping_refs = Vec::new();
    for lp in &graph.loops {
        if let LoopKind::Explicit { mappings, .. } = &lp.kind {
            mapping_refs.push(mappings.iter().map(|m| m.as_ref()).collect::<Vec<_>>());
        } else {
            mapping_refs.push(Vec::new());
        }
    }
    let mut loops = Vec::with_capacity(graph.loops.len());
    for (lp, refs) in graph.loops.iter().zip(&mapping_refs) {
        let nodes: Vec<Factor<'_>> = lp
            .nodes
            .iter()
            .zip(&lp.views)
            .filter_map(|(&n, &v)| values[n].as_ref().map(|x| (x, v)))
            .collect();
        let spins = match &lp.kind {
            LoopKind::Meson => LoopSpins::Meson,
            LoopKind::Explicit { trace, .. } => LoopSpins::Explicit {
                mappings: refs,
                trace,
            },
        };
        loops.push((nodes, spins));
    }
    Ok(graph_value_with_views(graph.coefficient, &loops)?)
}
