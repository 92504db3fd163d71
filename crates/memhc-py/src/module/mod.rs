//! The pyo3 module: `Runtime`, `Node`, `MemhcError`, and the correlator functions
//! `run_correlators`, `plan_correlators`, `reference_correlators`.
//!
//! Every method and function body runs inside [`guard`], which turns a Rust panic (a bug in
//! memhc) into `MemhcError` instead of pyo3's `PanicException`. Integer arguments arrive as
//! Python objects and are converted by [`count`] and [`index`], so that a negative, too large
//! or non-integer value is a `ValueError` naming the argument rather than pyo3's
//! `OverflowError` or `TypeError`. The docstrings below are what `help()` shows; keep them
//! and `python/memhc.pyi` in step.

mod args;
mod corr;
mod host;
mod node;
mod runtime;
mod spec;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

use corr::{_panic_selftest, plan_correlators, reference_correlators, run_correlators};
use host::HostBuffer;
use node::Node;
use runtime::Runtime;

pyo3::create_exception!(
    memhc,
    MemhcError,
    PyRuntimeError,
    "A memhc failure that is not a bad argument: a released node, a backend that cannot run \
     here (no GPU, driver or library: the message says which), a working set that does not \
     fit the device budget, a device error, or an internal error of memhc (a bug, reported \
     instead of crashing). A subclass of RuntimeError."
);

/// memhc: a GPU memory runtime for batched complex-double hadron contractions (lattice QCD).
///
/// A Runtime owns device memory on one backend (``"host"``: the CPU plays the device;
/// ``"cuda"``; ``"rocm"``) within a byte budget. Nodes (spin components of complex
/// tensors) are registered from numpy arrays, contracted on the device, and read back only
/// when asked:
///
///     import numpy as np, memhc
///     rt = memhc.Runtime(backend="host", budget="8G", policy="belady")
///     x = np.random.rand(16, 32, 32) + 1j * np.random.rand(16, 32, 32)
///     a = rt.register(x)                  # copied; a Node, a.shape == (16, 32, 32)
///     c = rt.contract(a, a, "meson4x4")   # stays on the device
///     values = rt.read(c)                 # complex128, shape (16, 32, 32)
///     t = rt.trace(c, a)                  # a Python complex
///     rt.stats()["hits"]
///
/// A correlator file (``memhc-corr/1``) runs in one call:
///
///     corr = memhc.run_correlators("examples/data/pion.corr.json", policy="belady")
///     times, values = corr["C_pi_pi"]     # int64 (n, 2) of (source, sink); complex128 (n,)
///
/// Arrays: inputs are converted to C-ordered complex128 (a copy only when they are not
/// already) and copied into the runtime; outputs are new C-contiguous complex128 arrays
/// (``Runtime.read(node, out=array)`` fills an array in place). Shapes are tuples, spin
/// components first: ``(spins, d0, d1, ...)``.
///
/// Errors: a bad argument value (a negative size, an unknown name, a spin out of range, an
/// invalid correlator file) raises ValueError; an argument of the wrong type (a string where
/// a Node is expected) raises TypeError; a file that cannot be read OSError; everything
/// else (a released node, a backend that cannot open, a working set that does not fit, an
/// internal error) raises MemhcError, a RuntimeError. No call crashes the interpreter on a
/// memhc bug: panics become MemhcError.
///
/// Page-locked buffers: ``buf = rt.alloc_host((16, N, N))`` is the backend's host memory
/// (page-locked on a GPU); ``numpy.asarray(buf)`` is a writeable array over it, filled in
/// place; ``rt.register_host(buf)`` makes it a node without a copy (delete the arrays over it
/// first: BufferError otherwise). ``rt.take_host(node)`` hands a result out as a HostBuffer,
/// without a copy in a ``Runtime(host_memory="pinned")``; arrays over it keep it alive.
///
/// Contents: Runtime, Node, HostBuffer, MemhcError, run_correlators, plan_correlators,
/// reference_correlators, __version__.
#[pymodule]
#[pyo3(name = "memhc")]
fn memhc_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Runtime>()?;
    m.add_class::<Node>()?;
    m.add_class::<HostBuffer>()?;
    m.add_function(wrap_pyfunction!(run_correlators, m)?)?;
    m.add_function(wrap_pyfunction!(plan_correlators, m)?)?;
    m.add_function(wrap_pyfunction!(reference_correlators, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_selftest, m)?)?;
    m.add("MemhcError", m.py().get_type::<MemhcError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
