//! Spin mappings and runtime options from Python arguments (`Runtime` and
//! `run_correlators` share them), and statistics as a dict.

use std::sync::Arc;

use super::MemhcError;
use super::args::{count, err, int_in, tuples};
use memhc_embed::hadron::{SpinMapping, Term};
use memhc_embed::{Options, Session};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

/// A spin mapping: `"meson4x4"`, or a list of `(out, a, b)` terms.
pub(super) fn mapping(
    spec: &Bound<'_, PyAny>,
    out_spins: Option<usize>,
) -> PyResult<Arc<SpinMapping>> {
    if let Ok(name) = spec.extract::<String>() {
        return match name.as_str() {
            "meson4x4" => Ok(Arc::new(SpinMapping::meson4x4())),
            other => Err(PyValueError::new_err(format!(
                "unknown mapping '{other}': give \"meson4x4\" or a list of (out, a, b) terms"
            ))),
        };
    }
    let terms = tuples::<3>("mapping", "(out, a, b)", spec)?
        .into_iter()
        .map(|[o, a, b]| Term::new(o, a, b))
        .collect();
    let m = match out_spins {
        Some(s) => SpinMapping::new(s, terms),
        None => SpinMapping::from_terms(terms),
    };
    m.map(Arc::new).map_err(|e| err(e.into()))
}

/// Runtime options from the keywords `Runtime` and `run_correlators` share; `budget` is bytes
/// (an int), a string such as `"8G"`, or `None`.
pub(super) fn options(
    backend: &str,
    budget: Option<&Bound<'_, PyAny>>,
    policy: &str,
    mode: &str,
    streams: Option<&Bound<'_, PyAny>>,
    seed: Option<&Bound<'_, PyAny>>,
) -> PyResult<Options> {
    let mut o = Options::from_names(Some(backend), None, Some(policy), Some(mode)).map_err(err)?;
    if let Some(b) = budget.filter(|b| !b.is_none()) {
        o.budget = Some(if b.is_instance_of::<PyString>() {
            memhc_embed::parse_bytes_usize(&b.extract::<String>()?).map_err(|e| err(e.into()))?
        } else {
            count("budget", b, 1).map_err(|_| {
                PyValueError::new_err(format!(
                    "budget must be a positive number of bytes (an int, or a string such as \
                     \"8G\") or None, got {}",
                    b.repr().map(|r| r.to_string()).unwrap_or_default()
                ))
            })?
        });
    }
    // Not given: 4 streams, seed 0.
    o.streams = streams.map_or(Ok(4), |s| count("streams", s, 1))?;
    o.seed = seed.map_or(Ok(0), |s| int_in("seed", s, 0, u64::MAX))?;
    Ok(o)
}

/// Every statistic of a session as a dict (`Runtime.stats`).
pub(super) fn stats<'py>(py: Python<'py>, s: &Session) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    // Every field of memhc's Stats, by name, as serde sees it.
    let value = serde_json::to_value(s.stats())
        .map_err(|e| MemhcError::new_err(format!("statistics could not be listed: {e}")))?;
    let serde_json::Value::Object(fields) = value else {
        return Err(MemhcError::new_err("statistics are not a record"));
    };
    for (k, v) in fields {
        if let Some(n) = v.as_u64() {
            d.set_item(k, n)?;
        } else if let Some(x) = v.as_f64() {
            d.set_item(k, x)?;
        } else {
            return Err(MemhcError::new_err(format!(
                "statistic {k} is not a number"
            )));
        }
    }
    d.set_item("objects", s.object_count())?;
    d.set_item("budget_bytes", s.budget())?;
    d.set_item("streams", s.streams())?;
    Ok(d)
}
