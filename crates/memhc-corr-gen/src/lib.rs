//! # memhc-corr-gen
//!
//! Realistic correlator workloads (`memhc-corr/1` files): multi-meson operators at several
//! momenta and time slices, Wick-contracted into connected and disconnected graphs, and the
//! presets `a1_rhopi`, `f0d2` and `f0d4` of the MemHC paper's Table 4.
#![forbid(unsafe_code)]

pub mod build;
pub mod file;
pub mod flavour;
pub mod physics;
pub mod presets;
pub mod sharing;
pub mod wick;
