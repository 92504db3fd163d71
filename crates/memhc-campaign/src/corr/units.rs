//! Work units of a correlator campaign: (configuration x block of time sources). The master
//! reads each configuration's file once (parsed, not checked: checking, and reading node data,
//! is the work of the rank that runs a unit), finds its time sources, cuts them into blocks,
//! and writes one [`UnitSpec`] per block. A unit is the configuration's file restricted to the
//! time pairs whose source is in its block ([`restrict`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use memhc_corr::{CorrFile, DataSource};
use serde::{Deserialize, Serialize};

use crate::corr::manifest::{ConfigurationSpec, Manifest, RunSettings};
use crate::error::{CampaignError, Result};
use crate::job::Unit;

/// What a rank needs to run one unit; crosses the network as JSON.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnitSpec {
    /// The configuration's id.
    pub configuration: String,
    /// Its correlator file (resolved against the manifest's directory).
    pub file: PathBuf,
    /// The seed shift of its seeded nodes, if any.
    pub seed: Option<u64>,
    /// The time sources of this unit, ascending.
    pub sources: Vec<u32>,
    /// How to plan and run it.
    pub run: RunSettings,
    /// The backend it runs on (`host`, `cuda`, `rocm`).
    pub backend: String,
}

/// The correlators and time pairs of one configuration that the campaign computes, in file
/// order: how the units' results are put back together.
#[derive(Clone, Debug, PartialEq)]
pub struct Skeleton {
    /// The configuration's id.
    pub id: String,
    /// `(correlator name, [(source, sink), ...])`, in file order, restricted to the sources.
    pub correlators: Vec<(String, Vec<(u32, u32)>)>,
}

/// The units of a campaign, the configuration each belongs to, and the skeletons.
#[derive(Clone, Debug, PartialEq)]
pub struct Units {
    /// The units, configuration by configuration, blocks in source order.
    pub units: Vec<Unit>,
    /// `of[i]`: the index (in [`Units::skeletons`]) of unit `i`'s configuration.
    pub of: Vec<usize>,
    /// One per configuration, in manifest order.
    pub skeletons: Vec<Skeleton>,
}

/// The units of `manifest` (read from `dir`), to run on `backend`. A configuration file that
/// cannot be read or parsed, or that has none of the manifest's sources, is an error naming
/// the configuration.
pub fn units(manifest: &Manifest, dir: &Path, backend: &str) -> Result<Units> {
    let mut out = Units {
        units: Vec::new(),
        of: Vec::new(),
        skeletons: Vec::new(),
    };
    for (c, conf) in manifest.configurations.iter().enumerate() {
        let file_path = dir.join(&conf.file);
        let place = |m: String| CampaignError::Usage(format!("configuration {}: {m}", conf.id));
        let text = hadron::admission::read_text_bounded(
            &file_path,
            hadron::admission::MAX_TEXT_FILE_BYTES,
        )
        .map_err(|e| place(format!("{}: {e}", file_path.display())))?;
        let file = memhc_corr::io::parse_file(&text, &file_path.display().to_string())
            .map_err(|e| place(e.to_string()))?;
        let all: BTreeSet<u32> = file
            .correlators
            .iter()
            .flat_map(|c| c.times.iter().map(|t| t.source))
            .collect();
        let sources: Vec<u32> = match &manifest.sources {
            Some(wanted) => {
                let wanted: BTreeSet<u32> = wanted.iter().copied().collect();
                all.intersection(&wanted).copied().collect()
            }
            None => all.into_iter().collect(),
        };
        if sources.is_empty() {
            return Err(place(format!(
                "{}: none of the campaign's time sources is in the file",
                file_path.display()
            )));
        }
        let block = manifest.source_block.unwrap_or(sources.len()).max(1);
        for (b, chunk) in sources.chunks(block).enumerate() {
            let spec = UnitSpec {
                configuration: conf.id.clone(),
                file: file_path.clone(),
                seed: conf.seed,
                sources: chunk.to_vec(),
                run: manifest.run.clone(),
                backend: backend.to_owned(),
            };
            out.units.push(Unit {
                key: format!("{}.b{b:04}", conf.id),
                spec: serde_json::to_string(&spec).map_err(|e| place(e.to_string()))?,
                cost: cost(&file, chunk),
            });
            out.of.push(c);
        }
        out.skeletons.push(skeleton(conf, &file, &sources));
    }
    Ok(out)
}

/// The work of a unit, roughly: the graph terms summed at its time pairs.
fn cost(file: &CorrFile, sources: &[u32]) -> f64 {
    let keep: BTreeSet<u32> = sources.iter().copied().collect();
    file.correlators
        .iter()
        .flat_map(|c| &c.times)
        .filter(|t| keep.contains(&t.source))
        .map(|t| t.graphs.len() as f64)
        .sum()
}

fn skeleton(conf: &ConfigurationSpec, file: &CorrFile, sources: &[u32]) -> Skeleton {
    let keep: BTreeSet<u32> = sources.iter().copied().collect();
    Skeleton {
        id: conf.id.clone(),
        correlators: file
            .correlators
            .iter()
            .map(|c| {
                let pairs: Vec<(u32, u32)> = c
                    .times
                    .iter()
                    .filter(|t| keep.contains(&t.source))
                    .map(|t| (t.source, t.sink))
                    .collect();
                (c.name.clone(), pairs)
            })
            .filter(|(_, pairs)| !pairs.is_empty())
            .collect(),
    }
}

/// `file` restricted to the time pairs whose source is in `sources`: correlators left with no
/// time pair are dropped, and so are the graphs no kept time pair sums and the nodes no kept
/// graph uses (everything else keeps its order and content).
pub fn restrict(file: &CorrFile, sources: &[u32]) -> CorrFile {
    let keep: BTreeSet<u32> = sources.iter().copied().collect();
    let mut out = CorrFile {
        format: file.format.clone(),
        nodes: Vec::new(),
        graphs: Vec::new(),
        correlators: Vec::new(),
    };
    for c in &file.correlators {
        let times: Vec<_> = c
            .times
            .iter()
            .filter(|t| keep.contains(&t.source))
            .cloned()
            .collect();
        if !times.is_empty() {
            let mut c = c.clone();
            c.times = times;
            out.correlators.push(c);
        }
    }
    let graphs: BTreeSet<&str> = out
        .correlators
        .iter()
        .flat_map(|c| &c.times)
        .flat_map(|t| t.graphs.iter().map(String::as_str))
        .collect();
    out.graphs = file
        .graphs
        .iter()
        .filter(|g| graphs.contains(g.id.as_str()))
        .cloned()
        .collect();
    let nodes: BTreeSet<&str> = out
        .graphs
        .iter()
        .flat_map(|g| &g.loops)
        .flat_map(|l| l.nodes.iter().map(String::as_str))
        .collect();
    out.nodes = file
        .nodes
        .iter()
        .filter(|n| nodes.contains(n.id.as_str()))
        .cloned()
        .collect();
    out
}

/// Shifts the seed of every seeded node of `file`: `S` becomes `S + seed * 2^32` (mod 2^64).
pub fn reseed(file: &mut CorrFile, seed: u64) {
    for n in &mut file.nodes {
        if let DataSource::Seed(s) = &mut n.data {
            *s = s.wrapping_add(seed.wrapping_shl(32));
        }
    }
}

/// The sources of each configuration's units, by configuration id (for reports).
pub fn blocks(units: &Units) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for &c in &units.of {
        *out.entry(units.skeletons[c].id.clone()).or_insert(0) += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use memhc_corr::{CorrelatorSpec, GraphSpec, NodeSpec, TimePairSpec};

    use super::*;

    fn file() -> CorrFile {
        let mut f = CorrFile::new();
        for (i, id) in ["a0", "b0", "a1", "b1", "unused"].iter().enumerate() {
            f.nodes.push(NodeSpec::meson(*id, 1, i as u64));
        }
        f.graphs = vec![
            GraphSpec::meson("g0", &[&["a0", "b0"]]),
            GraphSpec::meson("g1", &[&["a1", "b1"]]),
            GraphSpec::meson("g2", &[&["a0"], &["b1"]]),
        ];
        f.correlators = vec![
            CorrelatorSpec::new(
                "C",
                vec![
                    TimePairSpec::new(0, 1, &["g0"]),
                    TimePairSpec::new(1, 2, &["g1"]),
                    TimePairSpec::new(0, 2, &["g2", "g0"]),
                ],
            ),
            CorrelatorSpec::new("D", vec![TimePairSpec::new(1, 0, &["g1"])]),
        ];
        f
    }

    #[test]
    fn restriction_keeps_the_pairs_of_the_sources_and_what_they_use() {
        let f = file();
        let r = restrict(&f, &[0]);
        assert_eq!(r.correlators.len(), 1);
        let pairs: Vec<_> = r.correlators[0]
            .times
            .iter()
            .map(|t| (t.source, t.sink))
            .collect();
        assert_eq!(pairs, vec![(0, 1), (0, 2)]);
        let ids = |v: Vec<&str>| v.into_iter().map(str::to_owned).collect::<Vec<_>>();
        assert_eq!(
            r.graphs.iter().map(|g| g.id.clone()).collect::<Vec<_>>(),
            ids(vec!["g0", "g2"])
        );
        assert_eq!(
            r.nodes.iter().map(|n| n.id.clone()).collect::<Vec<_>>(),
            ids(vec!["a0", "b0", "b1"])
        );
        let both = restrict(&f, &[0, 1]);
        assert_eq!(both.correlators, f.correlators);
        assert_eq!(both.graphs, f.graphs);
        assert_eq!(both.nodes.len(), 4);
    }

    #[test]
    fn reseeding_shifts_seeded_nodes_only() {
        let mut f = file();
        f.nodes[0].data = DataSource::Npy("x.npy".into());
        reseed(&mut f, 3);
        assert_eq!(f.nodes[0].data, DataSource::Npy("x.npy".into()));
        assert_eq!(f.nodes[1].data, DataSource::Seed(1 + (3 << 32)));
        reseed(&mut f, u64::MAX);
        assert_eq!(
            f.nodes[1].data,
            DataSource::Seed((1u64 + (3 << 32)).wrapping_add(u64::MAX << 32))
        );
    }

    #[test]
    fn units_are_configurations_times_source_blocks() {
        let dir = std::env::temp_dir().join(format!("memhc-units-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        memhc_corr::save(&file(), &dir.join("f.json")).unwrap();
        let text = r#"{"format": "memhc-campaign/1", "source_block": 1,
            "configurations": [{"id": "c1", "file": "f.json"}, {"id": "c2", "file": "f.json", "seed": 9}]}"#;
        let m = Manifest::parse(text, "m.json").unwrap();
        let u = units(&m, &dir, "host").unwrap();
        let keys: Vec<_> = u.units.iter().map(|u| u.key.as_str()).collect();
        assert_eq!(keys, vec!["c1.b0000", "c1.b0001", "c2.b0000", "c2.b0001"]);
        assert_eq!(u.of, vec![0, 0, 1, 1]);
        // Source 0 sums three graph terms, source 1 two.
        assert_eq!((u.units[0].cost, u.units[1].cost), (3.0, 2.0));
        let spec: UnitSpec = serde_json::from_str(&u.units[3].spec).unwrap();
        assert_eq!((spec.sources, spec.seed), (vec![1], Some(9)));
        assert_eq!(
            u.skeletons[0].correlators[1],
            ("D".to_owned(), vec![(1, 0)])
        );
        assert_eq!(blocks(&u).get("c2"), Some(&2));

        let only = Manifest::parse(
            &text.replace("\"source_block\": 1", "\"sources\": [1, 7]"),
            "m",
        )
        .unwrap();
        let u = units(&only, &dir, "host").unwrap();
        assert_eq!(u.units.len(), 2);
        assert_eq!(u.skeletons[0].correlators[0].1, vec![(1, 2)]);
        let none = Manifest::parse(
            &text.replace("\"source_block\": 1", "\"sources\": [7]"),
            "m",
        )
        .unwrap();
        let e = units(&none, &dir, "host").unwrap_err().to_string();
        assert!(
            e.starts_with("configuration c1: ") && e.contains("none of"),
            "{e}"
        );
        let missing =
            Manifest::parse(&text.replace("\"f.json\"}, {", "\"g.json\"}, {"), "m").unwrap();
        let e = units(&missing, &dir, "host").unwrap_err().to_string();
        assert!(
            e.starts_with("configuration c1: ") && e.contains("g.json"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
