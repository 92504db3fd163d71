//! PLACEHOLDER: SVG plots of a sweep — being written.

use std::path::{Path, PathBuf};

use crate::error::{Result, SynthError};
use crate::record::Record;

/// Writes SVG plots of `records` against the swept parameter `swept` into `dir`.
pub fn write_plots(dir: &Path, records: &[Record], swept: &str) -> Result<Vec<PathBuf>> {
    let _ = (records, swept);
    Err(SynthError::Usage(format!(
        "{}: plots are not supported yet",
        dir.display()
    )))
}
