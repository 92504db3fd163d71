//! Reading a workload file: JSON into the raw form, then every id, shape, mapping and
//! `.npy` file checked into a [`Workload`].

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, Seek};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use hadron::{HadronNode, MatrixView, NodeShape, SpinMapping, Term, TracePairs};
use ndarray_npy::npy::header::Header;

use crate::error::{Error, Result, WorkloadError};
use crate::workload::{ContractionSpec, NodeData, NodeSpec, TraceSpec, Workload};

use super::raw::*;
use super::*;

/// Reads the workload file at `path` (format `memhc-workload/1`, see the
/// [module documentation](mod@crate::file)), loads `.npy` node data from beside it and checks the result
/// with [`Workload::analyse`].
///
/// A file that cannot be read is [`Error::Io`]; anything wrong in it, in its `.npy` files
/// or in the workload it describes is [`Error::Workload`], one line naming the place.
pub fn load(path: &Path) -> Result<Workload> {
    read(path).map_err(|e| match e {
        Error::Workload(w) => {
            WorkloadError::at(single_line(&w.place), single_line(&w.message)).into()
        }
        other => other,
    })
}

/// `s` with control characters (a newline in a JSON key, say) escaped, so that every error
/// stays on one line.
pub(super) fn single_line(s: &str) -> String {
    if !s.chars().any(char::is_control) {
        return s.to_owned();
    }
    s.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

pub(super) fn read(path: &Path) -> Result<Workload> {
    let text = hadron::admission::read_text_bounded(path, hadron::admission::MAX_TEXT_FILE_BYTES)
        .map_err(|e| Error::io(path, e))?;
    let file = path.display().to_string();
    let probe: Probe = serde_json::from_str(&text).map_err(|e| json_error(&file, &e))?;
    match probe.format.as_deref() {
        Some(FORMAT) | None => {} // a missing key is reported by the full parse
        Some(other) => {
            return Err(WorkloadError::at(
                format!("{file}: format"),
                format!(
                    "unknown format \"{}\": this version reads \"{FORMAT}\"",
                    other.escape_debug()
                ),
            )
            .into());
        }
    }
    let raw: RawFile = serde_json::from_str(&text).map_err(|e| json_error(&file, &e))?;
    let dir = path.parent().unwrap_or(Path::new(""));
    let workload = Converter::default()
        .workload(raw, dir)
        .map_err(|e| e.within(&file))?;
    workload.analyse().map_err(|e| e.within(&file))?;
    Ok(workload)
}

/// A serde_json error as `FILE: line L column C: what`.
pub(super) fn json_error(file: &str, e: &serde_json::Error) -> Error {
    let text = e.to_string();
    if e.line() == 0 {
        return WorkloadError::at(file, text).into();
    }
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let message = text.strip_suffix(&suffix).unwrap_or(&text);
    WorkloadError::at(
        format!("{file}: line {} column {}", e.line(), e.column()),
        message,
    )
    .into()
}

/// Turns the raw form into a [`Workload`], sharing equal mappings, pairs and `.npy` data.
#[derive(Default)]
pub(super) struct Converter {
    meson: Option<Arc<SpinMapping>>,
    mappings: HashMap<(usize, Vec<Term>), Arc<SpinMapping>>,
    meson_pairs: Option<Arc<TracePairs>>,
    pairs: HashMap<Vec<(usize, usize)>, Arc<TracePairs>>,
    npy: HashMap<(PathBuf, NodeShape), Arc<HadronNode>>,
}

impl Converter {
    fn workload(mut self, raw: RawFile, dir: &Path) -> Result<Workload, WorkloadError> {
        let mut w = Workload::default();
        for (i, node) in raw.nodes.into_iter().enumerate() {
            w.nodes.push(self.node(i, node, dir)?);
        }
        for (v, vector) in raw.vectors.into_iter().enumerate() {
            let mut specs = Vec::with_capacity(vector.len());
            for (c, raw) in vector.into_iter().enumerate() {
                specs.push(self.contraction(&format!("vectors[{v}][{c}]"), raw)?);
            }
            w.vectors.push(specs);
        }
        for (t, raw) in raw.traces.into_iter().enumerate() {
            let place = format!("traces[{t}]");
            check_id(format!("{place}.a"), &raw.a)?;
            check_id(format!("{place}.b"), &raw.b)?;
            let pairs = self.pairs(&place, raw.pairs)?;
            w.traces.push(TraceSpec {
                a: raw.a,
                b: raw.b,
                pairs,
            });
        }
        let mut listed = HashMap::with_capacity(raw.results.len());
        for (r, id) in raw.results.iter().enumerate() {
            check_id(format!("results[{r}]"), id)?;
            if let Some(first) = listed.insert(id.as_str(), r) {
                return Err(WorkloadError::at(
                    format!("results[{r}]"),
                    format!("\"{id}\" is already listed as results[{first}]"),
                ));
            }
        }
        w.results = raw.results;
        Ok(w)
    }

    fn node(&mut self, i: usize, raw: RawNode, dir: &Path) -> Result<NodeSpec, WorkloadError> {
        check_id(format!("nodes[{i}].id"), &raw.id)?;
        let place = format!("nodes[{i}] ({})", raw.id);
        let shape = NodeShape::new(raw.spins, &raw.dims)
            .map_err(|e| WorkloadError::at(&place, e.to_string()))?;
        let data = match (raw.data.npy, raw.data.random) {
            (Some(file), None) => {
                let full = dir.join(&file);
                let key = (full, shape.clone());
                let values = match self.npy.get(&key) {
                    Some(v) => v.clone(),
                    None => {
                        let v = Arc::new(
                            read_node_npy(&key.0, &shape)
                                .map_err(|m| WorkloadError::at(&place, format!("{file}: {m}")))?,
                        );
                        self.npy.insert(key, v.clone());
                        v
                    }
                };
                NodeData::Values(values)
            }
            (None, Some(RawSeed { seed })) => NodeData::Random { seed },
            _ => {
                return Err(WorkloadError::at(
                    format!("nodes[{i}].data"),
                    "give exactly one of {\"npy\": FILE} and {\"random\": {\"seed\": N}}",
                ));
            }
        };
        Ok(NodeSpec {
            id: raw.id,
            shape,
            data,
        })
    }

    fn contraction(
        &mut self,
        place: &str,
        raw: RawContraction,
    ) -> Result<ContractionSpec, WorkloadError> {
        for (field, id) in [("a", &raw.a), ("b", &raw.b), ("out", &raw.out)] {
            check_id(format!("{place}.{field}"), id)?;
        }
        let at =
            |field: &str, message: String| WorkloadError::at(format!("{place}.{field}"), message);
        let mapping = match raw.terms {
            Indices::Named(name) if name == MESON4X4 => {
                let m = self.meson();
                if let Some(s) = raw.out_spins.filter(|&s| s != m.out_spins()) {
                    return Err(at(
                        "out_spins",
                        format!("{s}, but \"{MESON4X4}\" has {} output spins", m.out_spins()),
                    ));
                }
                m
            }
            Indices::Named(name) => {
                return Err(at(
                    "terms",
                    format!(
                        "unknown mapping \"{}\": the named mapping is \"{MESON4X4}\"; otherwise give a list of [out, a, b]",
                        name.escape_debug()
                    ),
                ));
            }
            Indices::List(list) => {
                let terms: Vec<Term> = list.iter().map(|&[o, a, b]| Term::new(o, a, b)).collect();
                let out_spins = match raw.out_spins {
                    Some(s) => s,
                    // Checked: an output index of usize::MAX has no count above it (found by
                    // the workload fuzzer: an overflow panic).
                    None => terms
                        .iter()
                        .try_fold(0usize, |m, t| t.out.checked_add(1).map(|r| m.max(r)))
                        .ok_or_else(|| {
                            at(
                                "terms",
                                format!("output spin {}: no spin count is larger", usize::MAX),
                            )
                        })?,
                };
                self.mapping(out_spins, terms)
                    .map_err(|e| at("terms", e.to_string()))?
            }
        };
        let view = |field: &str, split: Option<usize>| match split {
            None => Ok(MatrixView::default()),
            Some(0) => Err(at(field, "a view splits after at least 1 dimension".into())),
            Some(k) => Ok(MatrixView::split(k)),
        };
        Ok(ContractionSpec {
            a_view: view("a_view", raw.a_view)?,
            b_view: view("b_view", raw.b_view)?,
            a: raw.a,
            b: raw.b,
            out: raw.out,
            mapping,
        })
    }

    fn meson(&mut self) -> Arc<SpinMapping> {
        self.meson
            .get_or_insert_with(|| Arc::new(SpinMapping::meson4x4()))
            .clone()
    }

    fn mapping(
        &mut self,
        out_spins: usize,
        terms: Vec<Term>,
    ) -> Result<Arc<SpinMapping>, hadron::HadronError> {
        let key = (out_spins, terms);
        if let Some(m) = self.mappings.get(&key) {
            return Ok(m.clone());
        }
        let m = SpinMapping::new(out_spins, key.1.clone())?;
        let m = if m == SpinMapping::meson4x4() {
            self.meson()
        } else {
            Arc::new(m)
        };
        self.mappings.insert(key, m.clone());
        Ok(m)
    }

    fn pairs(&mut self, place: &str, raw: Indices<2>) -> Result<Arc<TracePairs>, WorkloadError> {
        let at = |message: String| WorkloadError::at(format!("{place}.pairs"), message);
        match raw {
            Indices::Named(name) if name == MESON4X4 => Ok(self.meson_pairs()),
            Indices::Named(name) => Err(at(format!(
                "unknown pairing \"{}\": the named pairing is \"{MESON4X4}\"; otherwise give a list of [a, b]",
                name.escape_debug()
            ))),
            Indices::List(list) => {
                let pairs: Vec<(usize, usize)> = list.iter().map(|&[a, b]| (a, b)).collect();
                if let Some(p) = self.pairs.get(&pairs) {
                    return Ok(p.clone());
                }
                let p = TracePairs::new(pairs.clone()).map_err(|e| at(e.to_string()))?;
                let p = if p == TracePairs::meson4x4() {
                    self.meson_pairs()
                } else {
                    Arc::new(p)
                };
                self.pairs.insert(pairs, p.clone());
                Ok(p)
            }
        }
    }

    fn meson_pairs(&mut self) -> Arc<TracePairs> {
        self.meson_pairs
            .get_or_insert_with(|| Arc::new(TracePairs::meson4x4()))
            .clone()
    }
}

/// The numpy name of a simple type descriptor (`<f8` is float64), if it has one.
pub(super) fn dtype_name(descr: &str) -> Option<String> {
    let body = descr.trim_start_matches(['<', '>', '=', '|']);
    let (kind, size) = body.split_at_checked(1)?;
    let bits = size.parse::<usize>().ok()? * 8;
    let base = match kind {
        "f" => "float",
        "c" => "complex",
        "i" => "int",
        "u" => "uint",
        "b" if bits == 8 => return Some("bool".into()),
        _ => return None,
    };
    Some(format!("{base}{bits}"))
}

/// Reads a node's `.npy` file; the error is the message after `FILE: `.
pub(super) fn read_node_npy(path: &Path, shape: &NodeShape) -> Result<HadronNode, String> {
    let expected = format!(
        "expected complex128 ('<c16') of shape {} in C order",
        shape_text(&shape.array_shape())
    );
    let file = File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let mut reader = BufReader::new(file);
    let header = Header::from_reader(&mut reader).map_err(|e| format!("not a .npy file: {e}"))?;
    let descr = match header.type_descriptor.as_string() {
        Some(s) => match dtype_name(s) {
            Some(name) => format!("{name} ('{s}')"),
            None => format!("'{s}'"),
        },
        None => format!("dtype {}", header.type_descriptor),
    };
    let complex128 = matches!(
        header.type_descriptor.as_string().map(String::as_str),
        Some("<c16" | ">c16")
    );
    let layout = if header.layout.is_fortran() {
        " in Fortran order"
    } else {
        ""
    };
    if !complex128 || header.shape != shape.array_shape() || header.layout.is_fortran() {
        return Err(format!(
            "{expected}, found {descr} of shape {}{layout}",
            shape_text(&header.shape)
        ));
    }
    // The shape comes from the file: its bytes are checked against what the file holds and
    // what the host has before the values are allocated.
    let layout = shape.layout().map_err(|e| e.to_string())?;
    let need = layout.bytes() as u64;
    let start = reader.stream_position().map_err(|e| e.to_string())?;
    let total = reader
        .get_ref()
        .metadata()
        .map_err(|e| e.to_string())?
        .len();
    if total.saturating_sub(start) < need {
        return Err(format!(
            "unreadable data: a short file, {} bytes of data where the shape needs {need}",
            total.saturating_sub(start)
        ));
    }
    hadron::admission::admit_host("the node's values", need).map_err(|e| e.to_string())?;
    let len = layout.elems();
    // Reserved fallibly: admission is a look at the host, not a promise of the allocator.
    let big_endian = header.type_descriptor.as_string().map(String::as_str) == Some(">c16");
    let data = hadron::admission::read_complex128(&mut reader, big_endian, len)?;
    HadronNode::from_vec(shape, data).map_err(|e| e.to_string())
}
