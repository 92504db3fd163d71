//! Workload files (`memhc-workload/1`): a workload as JSON, its node data inline as seeds or
//! beside it as `.npy` files; and the results of a run as `.npy` files plus `traces.json`.
//!
//! ```json
//! {
//!   "format": "memhc-workload/1",
//!   "nodes": [
//!     {"id": "n0", "spins": 16, "dims": [64, 64], "data": {"npy": "n0.npy"}},
//!     {"id": "n1", "spins": 16, "dims": [64, 64], "data": {"random": {"seed": 7}}}
//!   ],
//!   "vectors": [
//!     [{"a": "n0", "b": "n1", "out": "t0", "terms": "meson4x4"}]
//!   ],
//!   "traces": [{"a": "t0", "b": "n1", "pairs": "meson4x4"}],
//!   "results": ["t0"]
//! }
//! ```
//!
//! * `nodes`: the initial nodes; `.npy` data is complex128 in C order, of shape
//!   `(spins, dims...)`, at a path relative to the JSON file's directory.
//! * `vectors`: the queue; a contraction's `terms` are `"meson4x4"` or a list of
//!   `[out, a, b]` (with an optional `out_spins`), and `a_view`/`b_view` give the
//!   [`MatrixView`] split of rank-3 components (default 1).
//! * `traces` (optional): `pairs` are `"meson4x4"` or a list of `[a, b]`.
//! * `results` (optional): ids whose final values are wanted.
//!
//! Every problem is one line that names its place: `work.json: line 3 column 7: ...` for
//! JSON that does not parse into the form above, `work.json: vectors[2][0].b: unknown id "t9"`
//! for a semantic error, `work.json: nodes[3] (n3): n3.npy: ...` for node data. The complete
//! format, with its versioning rule, is in `docs/workload-format.md`.

use std::collections::HashMap;
use std::fmt;
use std::fs::File;
use std::io::{self, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use hadron::{HadronNode, MatrixView, NodeShape, SpinMapping, Term, TracePairs};
use ndarray_npy::npy::header::Header;
use ndarray_npy::{ReadableElement, WriteNpyError};
use num_complex::Complex64;
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};

use crate::error::{Result, SynthError, WorkloadError};
use crate::workload::{ContractionSpec, NodeData, NodeSpec, TraceSpec, Workload};

/// The format this module reads and writes (the value of the top-level `"format"` key).
pub const FORMAT: &str = "memhc-workload/1";

/// The name of the named mapping and pairing.
const MESON4X4: &str = "meson4x4";

// ---------------------------------------------------------------------------------------------
// The raw file form.

/// Just the format key, read first so that a file of another version is reported as such
/// rather than by whatever field it has that this version does not know.
#[derive(Deserialize)]
struct Probe {
    #[serde(default)]
    format: Option<String>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    format: String,
    nodes: Vec<RawNode>,
    vectors: Vec<Vec<RawContraction>>,
    #[serde(default)]
    traces: Vec<RawTrace>,
    #[serde(default)]
    results: Vec<String>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNode {
    id: String,
    spins: usize,
    dims: Vec<usize>,
    data: RawData,
}

/// Exactly one of the two must be given (checked after parsing, with a JSON path).
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawData {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    npy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    random: Option<RawSeed>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSeed {
    seed: u64,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawContraction {
    a: String,
    b: String,
    out: String,
    terms: Indices<3>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    out_spins: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    a_view: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    b_view: Option<usize>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTrace {
    a: String,
    b: String,
    pairs: Indices<2>,
}

/// Terms (`N = 3`: `[out, a, b]`) or pairs (`N = 2`: `[a, b]`): a name or an explicit list.
enum Indices<const N: usize> {
    Named(String),
    List(Vec<[usize; N]>),
}

impl<const N: usize> Serialize for Indices<N> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Indices::Named(name) => s.serialize_str(name),
            Indices::List(list) => s.collect_seq(list.iter().map(|e| e.as_slice())),
        }
    }
}

impl<'de, const N: usize> Deserialize<'de> for Indices<N> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct IndicesVisitor<const N: usize>;

        impl<const N: usize> IndicesVisitor<N> {
            fn entry() -> &'static str {
                if N == 3 { "[out, a, b]" } else { "[a, b]" }
            }
        }

        impl<'de, const N: usize> Visitor<'de> for IndicesVisitor<N> {
            type Value = Indices<N>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "\"{MESON4X4}\" or a list of {}", Self::entry())
            }

            fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
                Ok(Indices::Named(s.to_owned()))
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut list = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some(entry) = seq.next_element::<Vec<usize>>()? {
                    let entry: [usize; N] = entry.try_into().map_err(|e: Vec<usize>| {
                        de::Error::invalid_length(e.len(), &Self::entry())
                    })?;
                    list.push(entry);
                }
                Ok(Indices::List(list))
            }
        }

        d.deserialize_any(IndicesVisitor::<N>)
    }
}

// ---------------------------------------------------------------------------------------------
// Reading.

/// Reads the workload file at `path` (format `memhc-workload/1`, see the
/// [module documentation](self)), loads `.npy` node data from beside it and checks the result
/// with [`Workload::analyse`].
///
/// A file that cannot be read is [`SynthError::Io`]; anything wrong in it, in its `.npy` files
/// or in the workload it describes is [`SynthError::Workload`], one line naming the place.
pub fn load(path: &Path) -> Result<Workload> {
    read(path).map_err(|e| match e {
        SynthError::Workload(w) => {
            WorkloadError::at(single_line(&w.place), single_line(&w.message)).into()
        }
        other => other,
    })
}

/// `s` with control characters (a newline in a JSON key, say) escaped, so that every error
/// stays on one line.
fn single_line(s: &str) -> String {
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

fn read(path: &Path) -> Result<Workload> {
    let text = std::fs::read_to_string(path).map_err(|e| SynthError::io(path, e))?;
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
fn json_error(file: &str, e: &serde_json::Error) -> SynthError {
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

/// Whether `id` can be used as a file name (`<id>.npy`): ASCII letters, digits, `_`, `-` and
/// `.`, not starting with `.`.
fn is_file_safe(id: &str) -> bool {
    !id.is_empty()
        && !id.starts_with('.')
        && id
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'))
}

fn check_id(place: String, id: &str) -> Result<(), WorkloadError> {
    if is_file_safe(id) {
        Ok(())
    } else {
        Err(WorkloadError::at(
            place,
            format!(
                "id \"{}\" is not allowed: ids are ASCII letters, digits, '_', '-' and '.', not starting with '.'",
                id.escape_debug()
            ),
        ))
    }
}

/// Turns the raw form into a [`Workload`], sharing equal mappings, pairs and `.npy` data.
#[derive(Default)]
struct Converter {
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
                    None => terms.iter().map(|t| t.out + 1).max().unwrap_or(0),
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

/// A Python-style shape: `(16, 8, 8)`, `(5,)`.
fn shape_text(shape: &[usize]) -> String {
    let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
    match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    }
}

/// The numpy name of a simple type descriptor (`<f8` is float64), if it has one.
fn dtype_name(descr: &str) -> Option<String> {
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
fn read_node_npy(path: &Path, shape: &NodeShape) -> Result<HadronNode, String> {
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
    let len = shape.spins() * shape.component_elems();
    let data = Complex64::read_to_end_exact_vec(&mut reader, &header.type_descriptor, len)
        .map_err(|e| format!("unreadable data: {e}"))?;
    HadronNode::from_vec(shape, data).map_err(|e| e.to_string())
}

// ---------------------------------------------------------------------------------------------
// Writing.

/// Writes `workload` to `path` as a `memhc-workload/1` file (see the
/// [module documentation](self)), creating its directory if needed.
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
        std::fs::create_dir_all(dir).map_err(|e| SynthError::io(dir, e))?;
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
                    NodeData::Random { .. } => Arc::new(data.materialise(&n.shape)),
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
    let text = layout(&raw).map_err(|e| SynthError::io(path, e))?;
    std::fs::write(path, text).map_err(|e| SynthError::io(path, e))
}

/// Writes a node's array as complex128 in C order.
fn write_node_npy(path: &Path, node: &HadronNode) -> Result<()> {
    ndarray_npy::write_npy(path, node.array()).map_err(|e| match e {
        WriteNpyError::Io(io) => SynthError::io(path, io),
        other => SynthError::io(path, io::Error::other(other.to_string())),
    })
}

/// Compact JSON with a space after `:` and `,`: `{"a": "n0", "dims": [4, 4]}`.
struct Spaced;

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
fn one_line<T: Serialize>(value: &T) -> io::Result<String> {
    let mut buf = Vec::new();
    value.serialize(&mut serde_json::Serializer::with_formatter(
        &mut buf, Spaced,
    ))?;
    String::from_utf8(buf).map_err(io::Error::other)
}

/// `items` (JSON texts) as a JSON list, one item per line, indented by `indent`.
fn list(indent: &str, items: &[String]) -> String {
    if items.is_empty() {
        return "[]".into();
    }
    let inner = format!("{indent}  ");
    let body: Vec<String> = items.iter().map(|i| format!("{inner}{i}")).collect();
    format!("[\n{}\n{indent}]", body.join(",\n"))
}

/// The file's text: pretty, with one node, contraction or trace per line.
fn layout(raw: &RawFile) -> io::Result<String> {
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
struct TraceValue<'a> {
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
    std::fs::create_dir_all(dir).map_err(|e| SynthError::io(dir, e))?;
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
    let mut text = serde_json::to_string_pretty(&values)
        .map_err(|e| SynthError::io(&path, io::Error::other(e)))?;
    text.push('\n');
    std::fs::write(&path, text).map_err(|e| SynthError::io(&path, e))
}
