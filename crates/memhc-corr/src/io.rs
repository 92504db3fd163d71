//! Reading and writing correlator files: JSON into [`CorrFile`] (the format key checked
//! first, so another version is reported as such), then checked into a [`CheckedFile`].

use std::path::Path;

use serde::Deserialize;

use crate::admit::admit_file;
use crate::checked::CheckedFile;
use crate::error::{CorrError, Invalid, Problem, Result};
use crate::format::{CorrFile, FORMAT};

#[derive(Deserialize)]
struct Probe {
    #[serde(default)]
    format: Option<String>,
}

/// The most bytes of a correlator file read (1 GiB): a device like `/dev/zero` or a huge
/// file is refused instead of read whole.
pub const MAX_FILE_BYTES: u64 = hadron::admission::MAX_TEXT_FILE_BYTES;

/// Reads the correlator file at `path` and checks it (data files beside it included).
///
/// A file that cannot be read is [`CorrError::Io`], JSON that does not fit the format
/// [`CorrError::Json`], anything else wrong [`CorrError::Invalid`]: one line each, naming the
/// file and the place.
pub fn load(path: &Path) -> Result<CheckedFile> {
    let checked = load_for_planning(path)?;
    admit_file(&checked, &path.display().to_string())?;
    Ok(checked)
}

/// [`load`] without the host admission of the node values: for planning, which makes no
/// values (`memhc plan` sizes a file for a larger machine than the one it runs on). The file
/// is still read bounded and checked in full.
pub fn load_for_planning(path: &Path) -> Result<CheckedFile> {
    let text = hadron::admission::read_text_bounded(path, MAX_FILE_BYTES)
        .map_err(|e| CorrError::io(path, e))?;
    let dir = path.parent().unwrap_or(Path::new(""));
    parse_unadmitted(&text, &path.display().to_string(), dir)
}

/// Parses and checks `text` as the file named `file`, relative data paths taken from `dir`.
///
/// A file whose node values together could never be held on this host is refused
/// ([`admit_file`]) before any value is made.
pub fn parse(text: &str, file: &str, dir: &Path) -> Result<CheckedFile> {
    let checked = parse_unadmitted(text, file, dir)?;
    admit_file(&checked, file)?;
    Ok(checked)
}

/// [`parse`] without the host admission (see [`load_for_planning`]).
fn parse_unadmitted(text: &str, file: &str, dir: &Path) -> Result<CheckedFile> {
    let parsed = parse_file(text, file)?;
    CheckedFile::new(parsed, dir).map_err(|e| match e {
        CorrError::Invalid(i) => CorrError::Invalid(i.within(file)),
        other => other,
    })
}

/// Parses `text` (the file named `file`) into a [`CorrFile`] without checking it further.
pub fn parse_file(text: &str, file: &str) -> Result<CorrFile> {
    let probe: Probe = serde_json::from_str(text).map_err(|e| json_error(file, &e))?;
    if let Some(f) = probe.format.filter(|f| f != FORMAT) {
        return Err(Invalid::at(
            "format",
            Problem::UnknownFormat(f.escape_debug().to_string()),
        )
        .within(file)
        .into());
    }
    serde_json::from_str(text).map_err(|e| json_error(file, &e))
}

/// Writes `file` to `path` as pretty-printed JSON.
pub fn save(file: &CorrFile, path: &Path) -> Result<()> {
    let text = serde_json::to_string_pretty(file).map_err(|e| CorrError::io(path, e))?;
    std::fs::write(path, text + "\n").map_err(|e| CorrError::io(path, e))
}

fn json_error(file: &str, e: &serde_json::Error) -> CorrError {
    let text = e.to_string().replace('\n', " ");
    if e.line() == 0 {
        return CorrError::Json {
            place: file.to_owned(),
            message: text,
        };
    }
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    CorrError::Json {
        place: format!("{file}: line {} column {}", e.line(), e.column()),
        message: text.strip_suffix(&suffix).unwrap_or(&text).to_owned(),
    }
}
