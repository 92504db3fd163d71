//! # memhc-trace
//!
//! What the runtime's event log ([`memhc_core::events`], on with
//! [`Config::events`](memhc_core::Config::events)) shows about a run:
//!
//! * [`chrome`]: a Chrome-trace / Perfetto JSON timeline: one track per stream with its copies
//!   and GEMMs, a counter track of device bytes (in use, pooled, pinned), object lifetimes as
//!   async slices and dependencies as flow arrows;
//! * [`Report`]: DRGPUM's object-level memory-inefficiency patterns (early allocation, late
//!   deallocation, redundant allocation, unused allocation, leak, temporary idleness, dead
//!   write) and the two redundancies of data movement MemHC removes (repeated copies, and
//!   refetches after eviction), each with its distance in queue steps and its bytes, and the
//!   top memory peaks with the objects live at each ([`patterns`] defines them);
//! * [`plot`]: SVG plots of device memory over time, and of the timeline;
//! * [`Observe`]: the three as command lines ask for them (`--timeline FILE`, `--report`,
//!   `--plot DIR`), one run or several, shared by `memhc-synth` and `memhc run`.
//!
//! [`replay`] replays a log into memory over time and each object's residencies, and [`work`]
//! times every copy and GEMM by the backend's timeline; the three consumers build on them.
//!
//! ```
//! use memhc_core::{Access, Config, Layout, Runtime};
//! use memhc_host::HostBackend;
//! use memhc_trace::{Pattern, Report, ReportOptions};
//! use num_complex::Complex64 as C;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mut rt = Runtime::new(HostBackend::new(1 << 20), Config::default().with_events(true))?;
//! let layout = Layout::new(1, 4)?;
//! let a = rt.register(vec![C::new(1.0, 0.0); 4], layout)?;
//! let c = rt.create(layout)?;
//! rt.launch(0, &[Access::read(a), Access::write(c)], |_| Ok(()))?;
//! rt.launch(0, &[Access::write(c)], |_| Ok(()))?; // overwrites c before anyone read it
//! let log = rt.take_events().expect("events are on");
//! let report = Report::of(&log, ReportOptions::default());
//! assert_eq!(report.of_pattern(Pattern::DeadWrite).count(), 1);
//! let trace = memhc_trace::chrome::trace(&log, &[]); // serde_json::Value, {"traceEvents": ...}
//! assert!(trace["traceEvents"].is_array());
//! # Ok(()) }
//! ```
#![forbid(unsafe_code)]

pub mod chrome;
pub mod error;
mod finding;
pub mod observe;
pub mod patterns;
pub mod plot;
pub mod replay;
pub mod report;
pub mod work;
pub mod written;

pub use error::{Result, TraceError};
pub use finding::{Finding, Pattern, ReportOptions};
pub use observe::Observe;
pub use replay::Replay;
pub use report::{Peak, Report, Summary};
pub use written::Written;
