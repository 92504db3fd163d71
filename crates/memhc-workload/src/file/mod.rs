//! Workload files (`memhc-workload/1`): a workload as JSON, its node data inline as seeds or
//! beside it as `.npy` files; and the results of a run as `.npy` files plus `traces.json`.
//!
//! ```json
//! {
//!   "format": "memhc-workload/1",
//!   "nodes": [
//!     {"id": "n0", "spins": 16, "dims": [64, 64], "data": {"npy": "n0.npy"}},
//!     {"id": "n1", "spins": 16, "dims": [64, 64], "data": {"random": {"seed": 7}}}
//!   ],
//!   "vectors": [
//!     [{"a": "n0", "b": "n1", "out": "t0", "terms": "meson4x4"}]
//!   ],
//!   "traces": [{"a": "t0", "b": "n1", "pairs": "meson4x4"}],
//!   "results": ["t0"]
//! }
//! ```
//!
//! * `nodes`: the initial nodes; `.npy` data is complex128 in C order, of shape
//!   `(spins, dims...)`, at a path relative to the JSON file's directory.
//! * `vectors`: the queue; a contraction's `terms` are `"meson4x4"` or a list of
//!   `[out, a, b]` (with an optional `out_spins`), and `a_view`/`b_view` give the
//!   [`MatrixView`](hadron::MatrixView) split of rank-3 components (default 1).
//! * `traces` (optional): `pairs` are `"meson4x4"` or a list of `[a, b]`.
//! * `results` (optional): ids whose final values are wanted.
//!
//! Every problem is one line that names its place: `work.json: line 3 column 7: ...` for
//! JSON that does not parse into the form above, `work.json: vectors[2][0].b: unknown id "t9"`
//! for a semantic error, `work.json: nodes[3] (n3): n3.npy: ...` for node data. The complete
//! format, with its versioning rule, is in `docs/workload-format.md`.

mod raw;
mod read;
mod write;

pub use read::load;
pub use write::{dump_results, save};

use crate::error::WorkloadError;

/// The format this module reads and writes (the value of the top-level `"format"` key).
pub const FORMAT: &str = "memhc-workload/1";

/// The name of the named mapping and pairing.
const MESON4X4: &str = "meson4x4";

/// Whether `id` can be used as a file name (`<id>.npy`): ASCII letters, digits, `_`, `-` and
/// `.`, not starting with `.`.
fn is_file_safe(id: &str) -> bool {
    !id.is_empty()
        && !id.starts_with('.')
        && id
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'))
}

/// `Ok` if `id` is [file-safe](is_file_safe), else an error at `place`.
fn check_id(place: String, id: &str) -> Result<(), WorkloadError> {
    if is_file_safe(id) {
        Ok(())
    } else {
        Err(WorkloadError::at(
            place,
            format!(
                "id \"{}\" is not allowed: ids are ASCII letters, digits, '_', '-' and '.', not starting with '.'",
                id.escape_debug()
            ),
        ))
    }
}

/// A Python-style shape: `(16, 8, 8)`, `(5,)`.
fn shape_text(shape: &[usize]) -> String {
    let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
    match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    }
}
