//! The output files of a command that fails are removed: a command either finishes with all
//! its outputs or leaves none (issue 31). [`Written`] records each file *before* it is written
//! (so a file cut short by an error goes too) and each directory it creates; when it is
//! dropped before [`Written::keep`], the files are removed and then the directories it made,
//! those that are empty.

use std::path::{Path, PathBuf};

/// The files and directories a command has written so far; removed on drop unless kept.
#[derive(Debug, Default)]
pub struct Written {
    files: Vec<PathBuf>,
    dirs: Vec<PathBuf>,
}

impl Written {
    /// Records that `path` is about to be written.
    pub fn file(&mut self, path: &Path) {
        self.files.push(path.to_owned());
    }

    /// Creates `dir` with its missing parents (as [`std::fs::create_dir_all`]), recording those
    /// it made.
    ///
    /// # Errors
    ///
    /// The error of the first directory that cannot be created.
    pub fn create_dir_all(&mut self, dir: &Path) -> std::io::Result<()> {
        let mut missing = Vec::new();
        let mut at = Some(dir);
        while let Some(d) = at.filter(|d| !d.as_os_str().is_empty() && !d.exists()) {
            missing.push(d.to_owned());
            at = d.parent();
        }
        for d in missing.into_iter().rev() {
            match std::fs::create_dir(&d) {
                Ok(()) => self.dirs.push(d),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// The command succeeded: everything written stays.
    pub fn keep(mut self) {
        self.files.clear();
        self.dirs.clear();
    }
}

impl Drop for Written {
    fn drop(&mut self) {
        for f in &self.files {
            let _ = std::fs::remove_file(f);
        }
        for d in self.dirs.iter().rev() {
            // Only an empty directory goes: one the user filled meanwhile stays.
            let _ = std::fs::remove_dir(d);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("memhc-written-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn dropped_outputs_are_removed_and_kept_ones_stay() {
        let d = scratch("drop");
        let mut w = Written::default();
        w.create_dir_all(&d.join("a/b")).unwrap();
        let f = d.join("a/b/x.json");
        w.file(&f);
        std::fs::write(&f, "1").unwrap();
        // Recorded but never written: nothing to remove, no error.
        w.file(&d.join("a/never.json"));
        drop(w);
        assert!(!d.exists(), "{} left", d.display());

        let mut w = Written::default();
        w.create_dir_all(&d).unwrap();
        w.file(&d.join("y.json"));
        std::fs::write(d.join("y.json"), "2").unwrap();
        w.keep();
        assert_eq!(std::fs::read_to_string(d.join("y.json")).unwrap(), "2");

        // A directory that existed before stays, and so does a file it did not record.
        let mut w = Written::default();
        w.create_dir_all(&d).unwrap();
        w.file(&d.join("z.json"));
        std::fs::write(d.join("z.json"), "3").unwrap();
        drop(w);
        assert!(!d.join("z.json").exists());
        assert!(d.join("y.json").exists());
        let _ = std::fs::remove_dir_all(&d);
    }
}
