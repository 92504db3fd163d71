//! # memhc-select
//!
//! The one place memhc reads names. A physicist types `--backend cuda --budget 8GiB --policy
//! belady`; a C program names `"cuda"` and `"belady"` in its `memhc_config`; a Python
//! script passes `backend="cuda", budget="8G"`; a campaign manifest says `"budget": "2G"`.
//! Every one of these texts is read here, by the same code, so that a spelling that works in
//! one place works in all of them and is refused everywhere with the same one-line message.
//!
//! The crate has four parts, one module each:
//!
//! * [`bytes`]: byte counts. One grammar, a superset of the three the command lines, the
//!   manifests and the embedding layer used to have: digits and an optional unit, `K`, `M`,
//!   `G` or `T`, each a power of 1024, optionally followed by `B` or `iB`, in any case
//!   (`1048576`, `512M`, `2g`, `8GiB`, `400 KB`). Zero, signs, fractions, unknown units and
//!   counts of 2^64 bytes or more are refused, each saying why.
//! * [`names`]: eviction policies, modes, allocation settings and host memory, alone or as the
//!   comma-separated lists (or `all`) the command lines take. The names themselves belong to
//!   the types that own them in the runtime's crates.
//! * [`backend`]: backends by name (`host`, `model`, `cuda`, `rocm`), and [`Build`], what a
//!   program was built with, which refuses a GPU backend the program lacks with the line that
//!   rebuilds it.
//! * [`mod@dispatch`]: the one generic dispatch. Work is written once as a [`WithBackend`] job,
//!   generic over [`memhc_core::Backend`]; [`dispatch()`] opens the backend a name chose (the
//!   host reference device, the modelled H100, or a GPU, which loads its libraries now and
//!   says in one line why it cannot open without hardware) and runs the job on it.
//!
//! ```
//! use memhc_core::Backend;
//! use memhc_select::{Build, Open, WithBackend, dispatch, parse_bytes};
//!
//! /// The device size a job sees.
//! struct Size;
//! impl WithBackend for Size {
//!     type Output = usize;
//!     fn run<B: Backend>(self, backend: B) -> usize {
//!         backend.mem_info().map(|m| m.total).unwrap_or(0)
//!     }
//! }
//!
//! # fn main() -> Result<(), memhc_select::SelectError> {
//! const BUILD: Build = Build { package: "memhc-cli", cuda: false, rocm: false };
//! let choice = BUILD.choose("host")?;
//! let budget = parse_bytes("8MiB")?;
//! assert_eq!(budget, 8 << 20);
//! let ran = dispatch(choice, &Open::budget(budget as usize), Size)?;
//! assert_eq!(ran.output, 8 << 20);
//! # Ok(()) }
//! ```
//!
//! Below this crate, the names are defined but not read from a user's text: each type says
//! which names it has (`PolicyKind::name`, `Mode::name`, `Alloc::name`), the runtime takes a
//! `Config`, the backends take byte counts. Above it, `memhc-synth`, the `memhc` command,
//! `memhc-embed` (and through it C and Python) and `memhc-campaign` read backends, byte
//! counts, policies, modes and allocation settings through it (a campaign manifest its byte
//! counts) and add only the option's name to its messages. (Names that belong to one tool
//! stay with it: `memhc-synth --dist`, `memhc gen`'s presets, `MEMHC_MODEL`'s parameters.)
#![forbid(unsafe_code)]

pub mod backend;
pub mod bytes;
pub mod dispatch;
pub mod error;
pub mod names;

pub use backend::{BackendChoice, Build};
pub use bytes::{BytesError, BytesProblem, parse_bytes, parse_bytes_usize};
pub use dispatch::{
    AnyBackend, DEFAULT_HOST_BUDGET, Device, ModelBackend, Open, Ran, WithBackend, check, dispatch,
};
pub use error::{Result, SelectError};
pub use memhc_gpu::model::ModelReport;
pub use names::HostMemoryKind;
