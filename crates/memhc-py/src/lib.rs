//! # memhc-py
//!
//! The Python module `memhc`, over [`memhc_embed`]: numpy arrays in and out, one exception
//! type, nothing else to learn.
//!
//! ```python
//! import numpy as np, memhc
//! rt = memhc.Runtime(backend="host", budget="8G", policy="belady")
//! x = np.random.rand(16, 32, 32) + 1j * np.random.rand(16, 32, 32)
//! a = rt.register(x)                     # copied; a Node handle
//! c = rt.contract(a, a, "meson4x4")      # stays on the device
//! values = rt.read(c)                    # numpy complex128, shape (16, 32, 32)
//! t = rt.trace(c, a, "meson4x4")         # a Python complex
//! rt.stats()["hits"]
//! ```
//!
//! Built by maturin with the feature `python` (`python/pyproject.toml` turns it on); without
//! it this crate compiles to nothing, so that `cargo test --workspace` needs no Python.

#[cfg(feature = "python")]
mod module;
