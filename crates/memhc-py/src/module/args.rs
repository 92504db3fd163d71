//! Arguments and errors: a memhc error as the Python exception it is, the guard that turns a
//! panic into `MemhcError`, and the conversions that make a bad integer a `ValueError` naming
//! its argument.

use std::panic::{AssertUnwindSafe, catch_unwind};

use super::MemhcError;
use memhc_embed::{EmbedError, ErrorKind};
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyString};

pub(super) fn err(e: EmbedError) -> PyErr {
    match e.kind() {
        ErrorKind::InvalidArgument
        | ErrorKind::SizeMismatch
        | ErrorKind::UnknownName
        | ErrorKind::InvalidFile => PyValueError::new_err(e.to_string()),
        ErrorKind::Io => PyOSError::new_err(e.to_string()),
        _ => MemhcError::new_err(e.to_string()),
    }
}

/// Runs a method's body, turning a Rust panic (a bug in memhc) into `MemhcError`.
pub(super) fn guard<T>(what: &str, body: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(result) => result,
        Err(panic) => {
            let msg = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "no message".to_owned());
            Err(MemhcError::new_err(format!(
                "internal error in memhc during {what} (a bug; please report it): {msg}"
            )))
        }
    }
}

/// A Python int in `min..=max`, or `ValueError` naming the argument.
pub(super) fn int_in(name: &str, value: &Bound<'_, PyAny>, min: u64, max: u64) -> PyResult<u64> {
    let bad = || {
        let shown = value
            .repr()
            .map(|r| r.to_string())
            .unwrap_or_else(|_| "?".to_owned());
        PyValueError::new_err(format!(
            "{name} must be an int from {min} to {max}, got {shown}"
        ))
    };
    if value.is_instance_of::<PyBool>() {
        return Err(bad());
    }
    // `__index__` (int, numpy integers), then range; anything else is refused the same way.
    let n: i128 = value.extract().map_err(|_| bad())?;
    if n < i128::from(min) || n > i128::from(max) {
        return Err(bad());
    }
    u64::try_from(n).map_err(|_| bad())
}

/// A count or index argument: a Python int from `min` to the largest `usize`.
pub(super) fn count(name: &str, value: &Bound<'_, PyAny>, min: usize) -> PyResult<usize> {
    let n = int_in(name, value, min as u64, usize::MAX as u64)?;
    usize::try_from(n).map_err(|_| PyValueError::new_err(format!("{name} is too large")))
}

/// A sequence of counts of at least 1 (a shape), or `ValueError` naming the argument.
pub(super) fn counts(name: &str, values: &[Bound<'_, PyAny>]) -> PyResult<Vec<usize>> {
    values.iter().map(|v| count(name, v, 1)).collect()
}

/// An optional count argument (`None` stays `None`).
pub(super) fn opt_count(
    name: &str,
    value: Option<&Bound<'_, PyAny>>,
    min: usize,
) -> PyResult<Option<usize>> {
    match value {
        Some(v) if !v.is_none() => count(name, v, min).map(Some),
        _ => Ok(None),
    }
}

/// A list of integer tuples of length `N` (terms, pairs), or `ValueError` naming the argument.
pub(super) fn tuples<const N: usize>(
    name: &str,
    what: &str,
    spec: &Bound<'_, PyAny>,
) -> PyResult<Vec<[usize; N]>> {
    let bad = |detail: String| {
        PyValueError::new_err(format!(
            "{name} must be a list of {what} tuples of non-negative ints: {detail}"
        ))
    };
    if spec.is_instance_of::<PyString>() {
        return Err(bad(format!("got the string {spec}")));
    }
    let mut out = Vec::new();
    for item in spec.try_iter().map_err(|e| bad(e.to_string()))? {
        let item = item?;
        let parts: Vec<Bound<'_, PyAny>> = item.extract().map_err(|_| bad(format!("{item}")))?;
        if parts.len() != N {
            return Err(bad(format!("{item} has {} entries, not {N}", parts.len())));
        }
        let mut t = [0usize; N];
        for (slot, p) in t.iter_mut().zip(&parts) {
            *slot = count(name, p, 0)?;
        }
        out.push(t);
    }
    Ok(out)
}
