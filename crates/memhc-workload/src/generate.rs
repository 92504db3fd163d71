//! The generator (the MemHC paper's section 6.1, made precise in `docs/architecture.md`,
//! "Workloads and metrics").
//!
//! A run is `vectors` vectors of `vector_size` contractions. Contraction `i` of a vector pairs
//! slot `i` of its left input list with slot `i` of its right list (meson4x4 mapping) and
//! produces a new node. Of the `2 vector_size` input slots of every vector, exactly
//! `round(repeat * 2 vector_size)` take a node that appeared earlier (an initial node or an
//! earlier output) and the rest take new initial nodes; no node appears twice in one vector.
//! Which slots repeat is drawn at random; which earlier node fills one is drawn
//!
//! * **uniform** over all earlier nodes,
//! * **gaussian** over their order of first appearance, centred in the middle of the history
//!   (standard deviation a sixth of its length, clamped to it), or
//! * **recent:K** uniformly over the nodes that first appeared in the last `K` vectors (their
//!   new inputs and their outputs; while fewer than `K` vectors have run, the initial nodes
//!   too), widened back through the history when that window holds fewer nodes than the
//!   vector repeats,
//!
//! redrawing a node already taken in the vector. Before the first vector, the history holds
//! just enough initial nodes (`round(repeat * 2 vector_size)`) for its repeated slots. Outputs
//! join the history after their vector. Everything comes from one seed, so runs repeat.
//!
//! The results are the outputs never used again (the final outputs); they are read back at the
//! end. Every other node is released after its last use.

use std::collections::HashSet;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use hadron::{MatrixView, NodeShape, SpinMapping};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};

use crate::error::{Error, Result, WorkloadError};
use crate::workload::{ContractionSpec, NodeData, NodeSpec, Workload};

/// How a repeated slot picks its earlier node. Written and parsed as `uniform`, `gaussian`
/// and `recent:K` (`recent` alone is `recent:1`); serialised as the same string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dist {
    /// Uniformly over all earlier nodes.
    Uniform,
    /// Normally over their order of first appearance, centred in the middle.
    Gaussian,
    /// Uniformly over the nodes that first appeared in the last `K` vectors (`K >= 1`): reuse
    /// at a short, bounded distance, the regime of the paper's Fig. 6 (`K = 1`: the previous
    /// vector).
    Recent(usize),
}

impl Dist {
    /// The window of `recent` when `recent` is given without `:K`.
    pub const DEFAULT_RECENT: usize = 1;
}

impl fmt::Display for Dist {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dist::Uniform => f.write_str("uniform"),
            Dist::Gaussian => f.write_str("gaussian"),
            Dist::Recent(k) => write!(f, "recent:{k}"),
        }
    }
}

impl serde::Serialize for Dist {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl FromStr for Dist {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let unknown = || {
            Error::Usage(format!(
                "unknown distribution '{s}' (uniform, gaussian, recent or recent:K)"
            ))
        };
        match s.split_once(':') {
            None => match s {
                "uniform" => Ok(Dist::Uniform),
                "gaussian" => Ok(Dist::Gaussian),
                "recent" => Ok(Dist::Recent(Self::DEFAULT_RECENT)),
                _ => Err(unknown()),
            },
            Some(("recent", k)) => match k.parse::<usize>() {
                Ok(k) if k >= 1 => Ok(Dist::Recent(k)),
                _ => Err(Error::Usage(format!(
                    "unknown distribution '{s}': K in recent:K is a number of vectors, at least 1"
                ))),
            },
            Some(_) => Err(unknown()),
        }
    }
}

/// The generator's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct SynthParams {
    /// `N`: meson components are `N x N`.
    pub tensor_size: usize,
    /// Contractions per vector.
    pub vector_size: usize,
    /// Number of vectors.
    pub vectors: usize,
    /// Repeated rate, in `[0, 1]`.
    pub repeat: f64,
    /// How repeated nodes are chosen.
    pub dist: Dist,
    /// Seed of everything random.
    pub seed: u64,
}

impl Default for SynthParams {
    /// The paper's defaults where it has them: 100 vectors of 16, repeated rate 1/2, uniform.
    fn default() -> Self {
        SynthParams {
            tensor_size: 64,
            vector_size: 16,
            vectors: 100,
            repeat: 0.5,
            dist: Dist::Uniform,
            seed: 1,
        }
    }
}

impl SynthParams {
    /// Input slots of one vector that take an earlier node.
    pub fn repeated_slots(&self) -> usize {
        (self.repeat * 2.0 * self.vector_size as f64).round() as usize
    }

    fn validate(&self) -> Result<()> {
        let bad =
            |field: &str, why: String| Err(WorkloadError::at(format!("--{field}"), why).into());
        if self.tensor_size == 0 {
            return bad("tensor-size", "must be at least 1".into());
        }
        if self.vector_size == 0 {
            return bad("vector-size", "must be at least 1".into());
        }
        if !(0.0..=1.0).contains(&self.repeat) {
            return bad("repeat", format!("{} is not in [0, 1]", self.repeat));
        }
        if self.dist == Dist::Recent(0) {
            return bad("dist", "recent needs a window of at least 1 vector".into());
        }
        Ok(())
    }
}

/// Picks `count` distinct nodes from `history` (ids in order of first appearance). `starts[j]`
/// is the length the history had when vector `j` began (`recent` uses it); `history` holds at
/// least `count` nodes.
fn pick_earlier(
    rng: &mut ChaCha8Rng,
    history: &[String],
    starts: &[usize],
    count: usize,
    dist: Dist,
) -> Vec<String> {
    if let Dist::Recent(k) = dist {
        // The nodes new in the last `k` vectors, widened back to hold at least `count`.
        let from = starts
            .len()
            .checked_sub(k)
            .and_then(|j| starts.get(j))
            .copied()
            .unwrap_or(0)
            .min(history.len().saturating_sub(count));
        return pick_earlier(rng, &history[from..], &[], count, Dist::Uniform);
    }
    let len = history.len();
    let normal = Normal::new(len as f64 / 2.0, (len as f64 / 6.0).max(0.5)).ok();
    let mut taken = HashSet::with_capacity(count);
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        let i = match (dist, &normal) {
            (Dist::Gaussian, Some(n)) => {
                n.sample(rng).round().clamp(0.0, (len - 1) as f64) as usize
            }
            _ => rng.random_range(0..len),
        };
        if taken.insert(i) {
            out.push(history[i].clone());
        }
    }
    out
}

/// Generates the workload of `p`. See the [module documentation](self).
pub fn generate(p: &SynthParams) -> Result<Workload> {
    p.validate()?;
    let shape = NodeShape::meson(p.tensor_size)?;
    let mapping = Arc::new(SpinMapping::meson4x4());
    let mut rng = ChaCha8Rng::seed_from_u64(p.seed);
    let mut w = Workload::default();
    let mut history: Vec<String> = Vec::new();
    let new_node = |w: &mut Workload, rng: &mut ChaCha8Rng| {
        let id = format!("n{}", w.nodes.len());
        w.nodes.push(NodeSpec {
            id: id.clone(),
            shape: shape.clone(),
            data: NodeData::Random { seed: rng.random() },
        });
        id
    };
    let slots = 2 * p.vector_size;
    let repeated = p.repeated_slots();
    for _ in 0..repeated {
        let id = new_node(&mut w, &mut rng);
        history.push(id);
    }
    let mut outputs = 0usize;
    // The history's length at the start of each vector, for `recent`.
    let mut starts: Vec<usize> = Vec::with_capacity(p.vectors);
    for _ in 0..p.vectors {
        // Which slots repeat: a random subset of exactly `repeated` of them.
        let mut order: Vec<usize> = (0..slots).collect();
        for i in (1..slots).rev() {
            order.swap(i, rng.random_range(0..=i));
        }
        let mut is_repeat = vec![false; slots];
        for &s in &order[..repeated] {
            is_repeat[s] = true;
        }
        let mut earlier = pick_earlier(&mut rng, &history, &starts, repeated, p.dist).into_iter();
        starts.push(history.len());
        let inputs: Vec<String> = is_repeat
            .iter()
            .map(|&rep| match rep {
                true => earlier.next().unwrap_or_default(),
                false => {
                    let id = new_node(&mut w, &mut rng);
                    history.push(id.clone());
                    id
                }
            })
            .collect();
        let vector: Vec<ContractionSpec> = (0..p.vector_size)
            .map(|i| {
                let out = format!("t{outputs}");
                outputs += 1;
                ContractionSpec {
                    a: inputs[i].clone(),
                    b: inputs[p.vector_size + i].clone(),
                    out,
                    mapping: mapping.clone(),
                    a_view: MatrixView::default(),
                    b_view: MatrixView::default(),
                }
            })
            .collect();
        history.extend(vector.iter().map(|c| c.out.clone()));
        w.vectors.push(vector);
    }
    // The results: outputs never used as an input afterwards.
    let used: HashSet<&str> = w
        .vectors
        .iter()
        .flatten()
        .flat_map(|c| [c.a.as_str(), c.b.as_str()])
        .collect();
    w.results = w
        .vectors
        .iter()
        .flatten()
        .map(|c| c.out.clone())
        .filter(|o| !used.contains(o.as_str()))
        .collect();
    Ok(w)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distributions_parse() {
        assert_eq!("gaussian".parse::<Dist>().unwrap(), Dist::Gaussian);
        assert_eq!("recent".parse::<Dist>().unwrap(), Dist::Recent(1));
        assert_eq!("recent:12".parse::<Dist>().unwrap(), Dist::Recent(12));
        for bad in [
            "poisson",
            "recent:0",
            "recent:",
            "recent:-1",
            "recent:x",
            "uniform:2",
        ] {
            assert!(bad.parse::<Dist>().is_err(), "{bad}");
        }
        for d in [Dist::Uniform, Dist::Gaussian, Dist::Recent(3)] {
            assert_eq!(d.to_string().parse::<Dist>().unwrap(), d);
            assert_eq!(serde_json::to_string(&d).unwrap(), format!("\"{d}\""));
        }
    }

    #[test]
    fn recent_draws_from_the_window_only() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let history: Vec<String> = (0..100).map(|i| i.to_string()).collect();
        // Vectors began at 0, 10, 40 and 70: the last two vectors added nodes 40..100.
        let starts = [0, 10, 40, 70];
        for _ in 0..100 {
            for id in pick_earlier(&mut rng, &history, &starts, 6, Dist::Recent(2)) {
                let i: usize = id.parse().unwrap();
                assert!((40..100).contains(&i), "{i}");
            }
            // A window smaller than the draw widens back: the last 8 nodes for 8 draws.
            let mut got: Vec<usize> =
                pick_earlier(&mut rng, &history, &[0, 97], 8, Dist::Recent(1))
                    .iter()
                    .map(|id| id.parse().unwrap())
                    .collect();
            got.sort();
            assert_eq!(got, (92..100).collect::<Vec<_>>());
            // Fewer vectors than the window: everything counts.
            let early = pick_earlier(&mut rng, &history[..10], &[0], 10, Dist::Recent(4));
            assert_eq!(early.len(), 10);
        }
    }

    #[test]
    fn gaussian_prefers_the_middle_of_the_history() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let history: Vec<String> = (0..1000).map(|i| i.to_string()).collect();
        let mut middle = 0;
        for _ in 0..200 {
            for id in pick_earlier(&mut rng, &history, &[], 5, Dist::Gaussian) {
                let i: usize = id.parse().unwrap();
                if (333..667).contains(&i) {
                    middle += 1;
                }
            }
        }
        // Within one standard deviation of the centre: about 68%, against 33% for uniform.
        assert!(middle > 600, "{middle} of 1000 in the middle third");
    }
}
