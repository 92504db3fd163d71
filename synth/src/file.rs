//! PLACEHOLDER: workload files (memhc-workload/1) — being written.

use std::path::Path;

use num_complex::Complex64;

use crate::error::{Result, SynthError};
use crate::workload::Workload;
use hadron::HadronNode;

/// Reads a workload file.
pub fn load(path: &Path) -> Result<Workload> {
    Err(SynthError::Usage(format!(
        "{}: workload files are not supported yet",
        path.display()
    )))
}

/// Writes a workload file (and `.npy` data files beside it when `npy` is set).
pub fn save(workload: &Workload, path: &Path, npy: bool) -> Result<()> {
    let _ = (workload, npy);
    Err(SynthError::Usage(format!(
        "{}: workload files are not supported yet",
        path.display()
    )))
}

/// Writes each result as `DIR/<id>.npy` and the traces as `DIR/traces.json`.
pub fn dump_results(
    dir: &Path,
    results: &[(String, HadronNode)],
    traces: &[(String, String, Complex64)],
) -> Result<()> {
    let _ = (results, traces);
    Err(SynthError::Usage(format!(
        "{}: dumping results is not supported yet",
        dir.display()
    )))
}
