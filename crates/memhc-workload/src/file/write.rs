//! Writing a workload file (and its `.npy` node data), and a run's results.

use std::io::{self, Write};
use std::path::Path;
use std::sync::Arc;

use hadron::{HadronNode, MatrixView, SpinMapping, TracePairs};
use ndarray_npy::WriteNpyError;
use num_complex::Complex64;
use serde::Serialize;

use crate::error::{Error, Result, WorkloadError};
use crate::workload::{NodeData, Workload};

use super::raw::*;
use super::*;

/// Writes `workload` to `path` as a `memhc-workload/1` file (see the
/// [module documentation](mod@crate::file)), creating its directory if needed.
///
/// Nodes with [`NodeData::Random`] are written as their seed unless `npy` is set; with `npy`,
/// and always for [`NodeData::Values`], a node's values go to `<id>.npy` beside the file.
/// Mappings and pairs equal to the meson ones are written as `"meson4x4"`, others as lists;
/// views only when not the default. Ids must be usable as file names (ASCII letters, digits,
/// `_`, `-`, `.`, not starting with `.`), as [`load`] requires.
pub fn save(workload: &Workload, path: &Path, npy: bool) -> Result<()> {
    let file = path.display().to_string();
    let dir = path.parent().unwrap_or(Path::new(""));
    if !dir.as_os_str().is_empty() {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    let meson = SpinMapping::meson4x4();
    let meson_pairs = TracePairs::meson4x4();

    let mut nodes = Vec::with_capacity(workload.nodes.len());
    for (i, n) in workload.nodes.iter().enumerate() {
        check_id(format!("nodes[{i}].id"), &n.id).map_err(|e| e.within(&file))?;
        let data = match (&n.data, npy) {
            (NodeData::Random { seed }, false) => RawData {
                npy: None,
                random: Some(RawSeed { seed: *seed }),
            },
            (data, _) => {
                let values = match data {
                    NodeData::Values(v) => v.clone(),
                    NodeData::Random { .. } => {
                        let bytes = n.shape.layout().map_err(Error::from)?.bytes() as u64;
                        hadron::admission::admit_host(&format!("node {}'s values", n.id), bytes)
                            .map_err(Error::from)?;
                        Arc::new(data.materialise(&n.shape))
                    }
                };
                if values.shape() != n.shape {
                    return Err(WorkloadError::at(
                        format!("{file}: nodes[{i}] ({})", n.id),
                        format!(
                            "its values have shape {}, its shape is {}",
                            shape_text(&values.shape().array_shape()),
                            shape_text(&n.shape.array_shape())
                        ),
                    )
                    .into());
                }
                let name = format!("{}.npy", n.id);
                write_node_npy(&dir.join(&name), &values)?;
                RawData {
                    npy: Some(name),
                    random: None,
                }
            }
        };
        nodes.push(RawNode {
            id: n.id.clone(),
            spins: n.shape.spins(),
            dims: n.shape.dims().to_vec(),
            data,
        });
    }

    let view = |v: MatrixView| (v != MatrixView::default()).then_some(v.split);
    let mut vectors = Vec::with_capacity(workload.vectors.len());
    for (v, vector) in workload.vectors.iter().enumerate() {
        let mut raw = Vec::with_capacity(vector.len());
        for (c, spec) in vector.iter().enumerate() {
            check_id(format!("vectors[{v}][{c}].out"), &spec.out).map_err(|e| e.within(&file))?;
            let (terms, out_spins) = if *spec.mapping == meson {
                (Indices::Named(MESON4X4.into()), None)
            } else {
                let list = spec
                    .mapping
                    .terms()
                    .iter()
                    .map(|t| [t.out, t.a, t.b])
                    .collect();
                (Indices::List(list), Some(spec.mapping.out_spins()))
            };
            raw.push(RawContraction {
                a: spec.a.clone(),
                b: spec.b.clone(),
                out: spec.out.clone(),
                terms,
                out_spins,
                a_view: view(spec.a_view),
                b_view: view(spec.b_view),
            });
        }
        vectors.push(raw);
    }

    let traces = workload
        .traces
        .iter()
        .map(|t| RawTrace {
            a: t.a.clone(),
            b: t.b.clone(),
            pairs: if *t.pairs == meson_pairs {
                Indices::Named(MESON4X4.into())
            } else {
                Indices::List(t.pairs.pairs().iter().map(|&(a, b)| [a, b]).collect())
            },
        })
        .collect();

    let raw = RawFile {
        format: FORMAT.into(),
        nodes,
        vectors,
        traces,
        results: workload.results.clone(),
    };
    let text = layout(&raw).map_err(|e| Error::io(path, e))?;
    std::fs::write(path, text).map_err(|e| Error::io(path, e))
}

/// Writes a node's array as complex128 in C order.
pub(super) fn write_node_npy(path: &Path, node: &HadronNode) -> Result<()> {
    ndarray_npy::write_npy(path, node.array()).map_err(|e| match e {
        WriteNpyError::Io(io) => Error::io(path, io),
        other => Error::io(path, io::Error::other(other.to_string())),
    })
}

/// Compact JSON with a space after `:` and `,`: `{"a": "n0", "dims": [4, 4]}`.
pub(super) struct Spaced;

impl serde_json::ser::Formatter for Spaced {
    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }
}

/// `value` as JSON on one line.
pub(super) fn one_line<T: Serialize>(value: &T) -> io::Result<String> {
    let mut buf = Vec::new();
    value.serialize(&mut serde_json::Serializer::with_formatter(
        &mut buf, Spaced,
    ))?;
    String::from_utf8(buf).map_err(io::Error::other)
}

/// `items` (JSON texts) as a JSON list, one item per line, indented by `indent`.
pub(super) fn list(indent: &str, items: &[String]) -> String {
    if items.is_empty() {
        return "[]".into();
    }
    let inner = format!("{indent}  ");
    let body: Vec<String> = items.iter().map(|i| format!("{inner}{i}")).collect();
    format!("[\n{}\n{indent}]", body.join(",\n"))
}

/// The file's text: pretty, with one node, contraction or trace per line.
pub(super) fn layout(raw: &RawFile) -> io::Result<String> {
    let nodes = raw
        .nodes
        .iter()
        .map(one_line)
        .collect::<io::Result<Vec<_>>>()?;
    let vectors = raw
        .vectors
        .iter()
        .map(|v| {
            let items = v.iter().map(one_line).collect::<io::Result<Vec<_>>>()?;
            Ok(list("    ", &items))
        })
        .collect::<io::Result<Vec<_>>>()?;
    let mut fields = vec![
        format!("  \"format\": {}", one_line(&raw.format)?),
        format!("  \"nodes\": {}", list("  ", &nodes)),
        format!("  \"vectors\": {}", list("  ", &vectors)),
    ];
    if !raw.traces.is_empty() {
        let traces = raw
            .traces
            .iter()
            .map(one_line)
            .collect::<io::Result<Vec<_>>>()?;
        fields.push(format!("  \"traces\": {}", list("  ", &traces)));
    }
    if !raw.results.is_empty() {
        // Several ids a line.
        let mut lines: Vec<String> = Vec::new();
        let mut line = String::new();
        for id in &raw.results {
            let id = one_line(id)?;
            if !line.is_empty() && line.len() + id.len() + 2 > 92 {
                lines.push(std::mem::take(&mut line));
            }
            if !line.is_empty() {
                line.push_str(", ");
            }
            line.push_str(&id);
        }
        lines.push(line);
        fields.push(format!("  \"results\": {}", list("  ", &lines)));
    }
    Ok(format!("{{\n{}\n}}\n", fields.join(",\n")))
}

// ---------------------------------------------------------------------------------------------
// Results.

/// One entry of `traces.json`.
#[derive(Serialize)]
pub(super) struct TraceValue<'a> {
    a: &'a str,
    b: &'a str,
    re: f64,
    im: f64,
}

/// Writes each result as `DIR/<id>.npy` (complex128, C order, shape `(spins, rows, cols)`:
/// the node's array) and the traces, in order, as `DIR/traces.json`:
/// `[{"a": "t3", "b": "t4", "re": 1.5, "im": -0.25}, ...]` (a value that is not finite is
/// written as `null`). Creates `DIR` if needed.
pub fn dump_results(
    dir: &Path,
    results: &[(String, HadronNode)],
    traces: &[(String, String, Complex64)],
) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    for (i, (id, node)) in results.iter().enumerate() {
        check_id(format!("results[{i}]"), id).map_err(|e| e.within(&dir.display().to_string()))?;
        write_node_npy(&dir.join(format!("{id}.npy")), node)?;
    }
    let values: Vec<TraceValue<'_>> = traces
        .iter()
        .map(|(a, b, v)| TraceValue {
            a,
            b,
            re: v.re,
            im: v.im,
        })
        .collect();
    let path = dir.join("traces.json");
    let mut text =
        serde_json::to_string_pretty(&values).map_err(|e| Error::io(&path, io::Error::other(e)))?;
    text.push('\n');
    std::fs::write(&path, text).map_err(|e| Error::io(&path, e))
}
