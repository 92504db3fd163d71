//! # memhc-py
//!
//! The Python module `memhc`, over [`memhc_embed`]: numpy arrays in and out, one exception
//! type, nothing else to learn.
//!
//! ```python
//! import numpy as np, memhc
//! rt = memhc.Runtime(backend="host", budget="8G", policy="belady")
//! x = np.random.rand(16, 32, 32) + 1j * np.random.rand(16, 32, 32)
//! a = rt.register(x)                     # copied; a Node, a.shape == (16, 32, 32)
//! c = rt.contract(a, a, "meson4x4")      # stays on the device
//! values = rt.read(c)                    # numpy complex128, shape (16, 32, 32)
//! t = rt.trace(c, a, "meson4x4")         # a Python complex
//! rt.stats()["hits"]
//!
//! plan = memhc.plan_correlators("pion.corr.json")        # the planner's report, a dict
//! corr = memhc.run_correlators("pion.corr.json", policy="belady")
//! times, values = corr["C_pi_pi"]        # int64 (n, 2) of (source, sink); complex128 (n,)
//! ref = memhc.reference_correlators("pion.corr.json")    # the dense reference, same form
//! ```
//!
//! A correlator file (`memhc-corr/1`, `docs/correlator-format.md`) runs through
//! [`memhc_embed::CorrRun`]: loaded and planned, run on a fresh runtime of the backend named
//! (with `budget=None` the plan's peak on the host backend), read back as numpy arrays. A file
//! that cannot be read raises `OSError`, an invalid one `ValueError` with one line naming the
//! file and the place.
//!
//! Built by maturin with the feature `python` (`python/pyproject.toml` turns it on; `pip
//! install ./python` builds a release wheel); without it this crate compiles to nothing, so
//! that `cargo test --workspace` needs no Python. The docstrings in `module/` are what
//! `help()` shows, and `python/memhc.pyi` is the type stub: keep the three in step
//! (`python/tests` checks the stub against the module and every argument against its
//! docstring). Every entry point runs under `catch_unwind`, so a panic is `MemhcError`.

#[cfg(feature = "python")]
mod module;
