//! The correlators of a model computed by the independent reference,
//! [`hadron::dense`]: graph by graph, loop by loop, as plain dense products and traces (every
//! node through its view), with no sharing, no cache, no planner and no runtime.

use hadron::HadronNode;
use hadron::dense::{Factor, LoopSpins, graph_value_with_views};
use num_complex::Complex64;

use crate::error::Result;
use crate::model::{LoopKind, Model};
use crate::output::Correlators;

/// Every used graph of `model` evaluated on its own by [`hadron::dense`], summed into the
/// correlators.
pub fn correlators(model: &Model) -> Result<Correlators> {
    let mut values: Vec<Option<HadronNode>> = vec![None; model.nodes.len()];
    let mut graph_values = vec![Complex64::new(0.0, 0.0); model.graphs.len()];
    for g in model.used_graphs() {
        let graph = &model.graphs[g];
        for lp in &graph.loops {
            for &n in &lp.nodes {
                if values[n].is_none() {
                    values[n] = Some(model.nodes[n].values()?);
                }
            }
        }
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
        graph_values[g] = graph_value_with_views(graph.coefficient, &loops)?;
    }
    Ok(Correlators::from_graph_values(model, &graph_values))
}
