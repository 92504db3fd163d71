//! The journal: one completion record per unit, written atomically by the master, so that a
//! campaign stopped at any moment (a rank killed, the whole job killed) restarts where it was.
//!
//! A record is `DIR/units/KEY.json`. It is written to a temporary file in the same directory,
//! flushed to disk (`fsync`), then renamed over its final name and the directory flushed: a
//! record is either complete or absent, never half written. A rerun reads the records, skips
//! the units they complete, and refuses a record made for another spec (the manifest changed:
//! a new journal is needed) rather than mix results of two campaigns.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{CampaignError, Result};
use crate::job::{Unit, is_valid_key};

/// The format of a completion record.
pub const RECORD_FORMAT: &str = "memhc-campaign-record/1";

/// One completion record, as stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    /// Always [`RECORD_FORMAT`].
    pub format: String,
    /// The unit's key.
    pub key: String,
    /// The spec it ran.
    pub spec: String,
    /// The rank that ran it.
    pub rank: usize,
    /// Seconds it took there.
    pub seconds: f64,
    /// Its result.
    pub result: String,
}

/// The completion records of one campaign, in a directory.
#[derive(Clone, Debug)]
pub struct Journal {
    dir: PathBuf,
    units: PathBuf,
}

impl Journal {
    /// Opens the journal in `dir`, creating it (and `dir/units`) if needed. Temporary files
    /// left by a master killed while writing a record are removed (one master at a time
    /// writes a journal).
    pub fn open(dir: &Path) -> Result<Self> {
        let units = dir.join("units");
        fs::create_dir_all(&units).map_err(|e| CampaignError::io(&units, e))?;
        for entry in fs::read_dir(&units).map_err(|e| CampaignError::io(&units, e))? {
            let path = entry.map_err(|e| CampaignError::io(&units, e))?.path();
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            if name.is_some_and(|n| n.starts_with('.') && n.contains(".json.tmp.")) {
                let _ = fs::remove_file(&path);
            }
        }
        Ok(Journal {
            dir: dir.to_path_buf(),
            units,
        })
    }

    /// The journal's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, key: &str) -> Result<PathBuf> {
        if !is_valid_key(key) {
            return Err(CampaignError::Journal {
                place: self.units.display().to_string(),
                message: format!(
                    "\"{}\" cannot name a unit (ASCII letters, digits, '_', '-', '.')",
                    key.escape_debug()
                ),
            });
        }
        Ok(self.units.join(format!("{key}.json")))
    }

    /// The result of every unit of `units` already completed (`None`: still to run). A record
    /// that cannot be read, or that was made for another spec, is an error naming it.
    pub fn load(&self, units: &[Unit]) -> Result<Vec<Option<String>>> {
        units.iter().map(|u| self.completed(u)).collect()
    }

    fn completed(&self, unit: &Unit) -> Result<Option<String>> {
        let path = self.path(&unit.key)?;
        let text = match hadron::admission::read_text_bounded(
            &path,
            hadron::admission::MAX_TEXT_FILE_BYTES,
        ) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(CampaignError::io(&path, e)),
        };
        let bad = |message: String| CampaignError::Journal {
            place: path.display().to_string(),
            message,
        };
        let record: Record = serde_json::from_str(&text)
            .map_err(|e| bad(format!("not a completion record: {e}")))?;
        if record.format != RECORD_FORMAT || record.key != unit.key {
            return Err(bad(format!(
                "not the record of unit {} ({RECORD_FORMAT})",
                unit.key
            )));
        }
        if record.spec != unit.spec {
            return Err(bad(format!(
                "unit {} was run with another spec (the manifest or the options changed): \
                 use another journal directory, or delete {}",
                unit.key,
                self.dir.display()
            )));
        }
        Ok(Some(record.result))
    }

    /// Records `unit` as completed with `result` (by `rank`, in `seconds`), atomically.
    pub fn record(&self, unit: &Unit, result: &str, rank: usize, seconds: f64) -> Result<()> {
        let record = Record {
            format: RECORD_FORMAT.to_owned(),
            key: unit.key.clone(),
            spec: unit.spec.clone(),
            rank,
            seconds,
            result: result.to_owned(),
        };
        let path = self.path(&unit.key)?;
        let text = serde_json::to_vec(&record).map_err(|e| CampaignError::io(&path, e))?;
        write_atomic(&path, &text)
    }
}

/// Writes `bytes` to `path` atomically: a temporary file beside it, flushed to disk, renamed
/// over `path`, the directory flushed. Readers see the old file or the new one, never part.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp.{}", std::process::id()));
    let written = (|| {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, path)?;
        // Flush the rename itself (the directory entry); not every platform can open a
        // directory, and the data is already safe, so a failure here is not an error.
        if let Ok(d) = File::open(&dir) {
            let _ = d.sync_all();
        }
        Ok::<(), std::io::Error>(())
    })();
    written.map_err(|e| {
        let _ = fs::remove_file(&tmp);
        CampaignError::io(path, e)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(key: &str, spec: &str) -> Unit {
        Unit {
            key: key.into(),
            spec: spec.into(),
            cost: 1.0,
        }
    }

    fn tmpdir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("memhc-journal-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn records_are_found_again_and_only_for_their_spec() {
        let d = tmpdir("specs");
        let j = Journal::open(&d).unwrap();
        let units = [unit("a.b0000", "{\"s\":1}"), unit("a.b0001", "{\"s\":2}")];
        assert_eq!(j.load(&units).unwrap(), vec![None, None]);
        j.record(&units[1], "{\"v\": 0.1}", 2, 0.5).unwrap();
        assert_eq!(
            j.load(&units).unwrap(),
            vec![None, Some("{\"v\": 0.1}".to_owned())]
        );
        // No temporary file is left behind.
        let names: Vec<_> = fs::read_dir(d.join("units"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names, vec!["a.b0001.json".to_owned()]);
        // Reopened (a rerun): the same.
        let again = Journal::open(&d).unwrap();
        assert!(again.load(&units).unwrap()[1].is_some());
        // A temporary file left by a killed master is not a record, and goes on reopening.
        fs::write(d.join("units/.a.b0000.json.tmp.99"), "{\"form").unwrap();
        assert_eq!(Journal::open(&d).unwrap().load(&units).unwrap()[0], None);
        assert!(!d.join("units/.a.b0000.json.tmp.99").exists());
        // Another spec for the same key: refused, naming the record.
        let changed = [unit("a.b0001", "{\"s\":3}")];
        let e = again.load(&changed).unwrap_err().to_string();
        assert!(
            e.contains("a.b0001.json") && e.contains("another spec"),
            "{e}"
        );
        // A key that is not a file name: refused.
        assert!(again.load(&[unit("../x", "{}")]).is_err());
        // A damaged record: refused.
        fs::write(d.join("units/a.b0000.json"), "{\"format\": ").unwrap();
        let e = again.load(&units).unwrap_err().to_string();
        assert!(e.contains("not a completion record"), "{e}");
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn atomic_writes_replace_whole_files() {
        let d = tmpdir("atomic");
        fs::create_dir_all(&d).unwrap();
        let p = d.join("out.json");
        write_atomic(&p, b"first").unwrap();
        write_atomic(&p, b"second").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"second");
        assert_eq!(fs::read_dir(&d).unwrap().count(), 1);
        assert!(write_atomic(&d.join("missing/x.json"), b"x").is_err());
        fs::remove_dir_all(&d).unwrap();
    }
}
