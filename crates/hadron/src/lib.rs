//! # hadron
//!
//! The domain layer of memhc: it turns hadron nodes and spin mappings into work for the
//! runtime, as the Redstar `hadron` package does for lattice-QCD correlation functions
//! (MemHC sections 2.3-2.4 and 5.2).
//!
//! * [`HadronNode`] / [`NodeShape`]: `S` spin components of complex tensors on the host, in
//!   the packed order the device uses (components back to back, each row-major). Mesons are
//!   `(16, N, N)`; baryon-like nodes have rank-3 components contracted through a
//!   [`MatrixView`] chosen per contraction (`N x N²` or `N² x N`).
//! * [`SpinMapping`]: the terms `out[o] += A[a] · B[b]` of a contraction, any valid list, or
//!   the named [`SpinMapping::meson4x4`] (16 outputs of 4 terms: a batch of 64).
//! * [`Engine`]: contractions on the [`memhc_core::Runtime`], through the `Backend` trait only:
//!   inputs through the element cache, outputs as GPU-only objects, packed by default, terms
//!   accumulated layer by layer with `beta = 1` (or the paper's temporaries, selectable), vectors
//!   run concurrently on several streams, correlator traces computed on the device.
//! * [`admission`]: sizes from a caller or a file admitted against the host memory before
//!   anything is allocated (`MEMHC_HOST_MEMORY`, `/proc/meminfo`, the cgroup limit), and
//!   bounded reads of text files; shared by every entry point (C, Python, the command lines).
//! * [`mod@reference`]: the independent implementation tests compare against;
//!   [`dense`] evaluates whole correlator graphs with it, as plain `4N x 4N` products and
//!   traces.
//!
//! ```
//! use hadron::{Contraction, Engine, HadronNode, NodeShape, SpinMapping, TracePairs, reference};
//! use memhc_core::{Config, Runtime};
//! use memhc_host::HostBackend;
//! use std::sync::Arc;
//!
//! # fn main() -> Result<(), hadron::HadronError> {
//! let rt = Runtime::new(HostBackend::new(64 << 20), Config::default())?;
//! let mut engine = Engine::new(rt);
//! let shape = NodeShape::meson(12)?;
//! let (x, y) = (HadronNode::random(&shape, 1), HadronNode::random(&shape, 2));
//! let (a, b) = (engine.register(x.clone())?, engine.register(y.clone())?);
//! let meson = Arc::new(SpinMapping::meson4x4());
//! let out = engine.contract(0, &Contraction::new(a, b, meson.clone()))?; // stays on the device
//! let got = engine.read(out)?;
//! let want = reference::contract(&x, &y, Default::default(), Default::default(), &meson)?;
//! assert!(reference::relative_error(&got, &want) < 1e-12);
//! let c = engine.trace(0, out, b, &TracePairs::meson4x4())?;
//! let c_ref = reference::trace(&want, &y, &TracePairs::meson4x4())?;
//! assert!((c - c_ref).norm() <= 1e-12 * c_ref.norm());
//! # Ok(()) }
//! ```
#![forbid(unsafe_code)]

pub mod admission;
pub mod contraction;
pub mod dense;
pub mod engine;
pub mod error;
pub mod layer;
pub mod mapping;
pub mod node;
pub mod reference;
pub mod rowmajor;
mod shapes;
mod term;
mod tiling;
pub mod trace;
pub mod view;

pub use contraction::{Contraction, ContractionSizes};
pub use engine::{Accumulation, Engine};
pub use error::{HadronError, Operand, Result};
pub use mapping::{Layer, SpinMapping, Strided, Term, strided};
pub use node::{HadronNode, NodeShape};
pub use trace::TracePairs;
pub use view::MatrixView;
