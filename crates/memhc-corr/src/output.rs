//! Correlator values and their files: JSON (`memhc-corr-values/1`), CSV, and HDF5 (feature
//! `hdf5`: one dataset per correlator, time pairs as the axis, key fields as attributes).
//! The layouts are given in `docs/correlator-format.md`, section Results.

use std::collections::BTreeMap;
use std::path::Path;

use num_complex::Complex64;
use serde::{Deserialize, Serialize};

use crate::checked::CheckedFile;
use crate::error::{CorrError, Result};
use crate::plan::Plan;

/// The value of a correlator at one time pair.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Value {
    /// The source time slice.
    pub source: u32,
    /// The sink time slice.
    pub sink: u32,
    /// Real part.
    pub re: f64,
    /// Imaginary part.
    pub im: f64,
}

impl Value {
    /// The complex value.
    pub fn complex(&self) -> Complex64 {
        Complex64::new(self.re, self.im)
    }
}

/// One correlator's metadata and values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CorrelatorValues {
    /// The name.
    pub name: String,
    /// The source operator.
    pub source_operator: String,
    /// The sink operator.
    pub sink_operator: String,
    /// The momentum.
    pub momentum: [i64; 3],
    /// Further key fields.
    pub keys: BTreeMap<String, String>,
    /// The values, in the file's order of time pairs.
    pub values: Vec<Value>,
}

/// All correlators of a file, computed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Correlators {
    /// Always `"memhc-corr-values/1"`.
    pub format: String,
    /// The correlators, in file order.
    pub correlators: Vec<CorrelatorValues>,
}

/// The format name of the JSON output.
pub const VALUES_FORMAT: &str = "memhc-corr-values/1";

impl Correlators {
    /// The correlators of `checked` from the values of its graphs (`graph_values[g]`, used
    /// graphs only are read).
    pub fn from_graph_values(checked: &CheckedFile, graph_values: &[Complex64]) -> Self {
        let correlators = checked
            .correlators
            .iter()
            .zip(&checked.file.correlators)
            .map(|(c, spec)| CorrelatorValues {
                name: c.name.clone(),
                source_operator: spec.source_operator.clone(),
                sink_operator: spec.sink_operator.clone(),
                momentum: spec.momentum,
                keys: spec.keys.clone(),
                values: c
                    .times
                    .iter()
                    .map(|t| {
                        let v: Complex64 = t.graphs.iter().map(|&g| graph_values[g]).sum();
                        Value {
                            source: t.source,
                            sink: t.sink,
                            re: v.re,
                            im: v.im,
                        }
                    })
                    .collect(),
            })
            .collect();
        Correlators {
            format: VALUES_FORMAT.to_owned(),
            correlators,
        }
    }

    /// The correlators of a plan from its traces' values.
    pub fn assemble(plan: &Plan, trace_values: &[Complex64]) -> Self {
        let graph_values: Vec<Complex64> = plan
            .checked
            .graphs
            .iter()
            .zip(&plan.graph_traces)
            .map(|(g, traces)| {
                traces
                    .iter()
                    .fold(g.coefficient, |acc, &t| acc * trace_values[t])
            })
            .collect();
        Self::from_graph_values(&plan.checked, &graph_values)
    }

    /// The largest `|x − y| / |y|` over all values (`|x − y|` where `y` is 0), against
    /// `reference`; infinite if the two do not have the same correlators and time pairs.
    pub fn max_relative_error(&self, reference: &Correlators) -> f64 {
        let mut worst = 0.0f64;
        if self.correlators.len() != reference.correlators.len() {
            return f64::INFINITY;
        }
        for (a, b) in self.correlators.iter().zip(&reference.correlators) {
            if a.name != b.name || a.values.len() != b.values.len() {
                return f64::INFINITY;
            }
            for (x, y) in a.values.iter().zip(&b.values) {
                if (x.source, x.sink) != (y.source, y.sink) {
                    return f64::INFINITY;
                }
                let d = (x.complex() - y.complex()).norm();
                let n = y.complex().norm();
                let e = if n == 0.0 { d } else { d / n };
                worst = if e.is_nan() {
                    f64::INFINITY
                } else {
                    worst.max(e)
                };
            }
        }
        worst
    }

    /// Writes the form `path`'s extension names ([`OutputForm::of`]).
    pub fn write(&self, path: &Path) -> Result<()> {
        match OutputForm::of(path)? {
            OutputForm::Json => self.write_json(path),
            OutputForm::Csv => self.write_csv(path),
            #[cfg(feature = "hdf5")]
            OutputForm::Hdf5 => self.write_hdf5(path),
            #[cfg(not(feature = "hdf5"))]
            OutputForm::Hdf5 => Err(OutputForm::no_hdf5(path)),
        }
    }

    /// Writes the JSON form.
    pub fn write_json(&self, path: &Path) -> Result<()> {
        let text = serde_json::to_string_pretty(self).map_err(|e| CorrError::io(path, e))?;
        std::fs::write(path, text + "\n").map_err(|e| CorrError::io(path, e))
    }

    /// Writes the CSV form: `correlator,source,sink,re,im`.
    pub fn write_csv(&self, path: &Path) -> Result<()> {
        let mut w = csv::Writer::from_path(path).map_err(|e| CorrError::io(path, e))?;
        let io = |e: csv::Error| CorrError::io(path, e);
        w.write_record(["correlator", "source", "sink", "re", "im"])
            .map_err(io)?;
        for c in &self.correlators {
            for v in &c.values {
                w.write_record([
                    c.name.clone(),
                    v.source.to_string(),
                    v.sink.to_string(),
                    v.re.to_string(),
                    v.im.to_string(),
                ])
                .map_err(io)?;
            }
        }
        w.flush().map_err(|e| CorrError::io(path, e))
    }
}

/// The forms correlators are written in, named by a file's extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputForm {
    /// `.json`: `memhc-corr-values/1`.
    Json,
    /// `.csv`: `correlator,source,sink,re,im`.
    Csv,
    /// `.h5` or `.hdf5`: one dataset per correlator (feature `hdf5`).
    Hdf5,
}

impl OutputForm {
    /// The form `path`'s extension names, checked against this build before anything runs:
    /// an unknown extension is [`CorrError::Usage`], and HDF5 in a build without the feature
    /// `hdf5` is [`CorrError::Unavailable`].
    pub fn of(path: &Path) -> Result<Self> {
        match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
            "json" => Ok(OutputForm::Json),
            "csv" => Ok(OutputForm::Csv),
            "h5" | "hdf5" if cfg!(feature = "hdf5") => Ok(OutputForm::Hdf5),
            "h5" | "hdf5" => Err(Self::no_hdf5(path)),
            other => Err(CorrError::Usage(format!(
                "{}: unknown extension '{other}' (json, csv or h5)",
                path.display()
            ))),
        }
    }

    fn no_hdf5(path: &Path) -> CorrError {
        CorrError::Unavailable(format!(
            "{}: this build of memhc has no HDF5 output (the feature `hdf5`, which needs \
             libhdf5); write .json or .csv",
            path.display()
        ))
    }
}
