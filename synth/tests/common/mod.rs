//! What the tests of the binary share: running it, reading what it said, scratch directories,
//! and the records of a run without what depends on the clock.

// Each test file uses some of these, none all.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)] // tests unwrap what must succeed

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs the binary on `args` (`MEMHC_HOST_MEMORY` unset).
pub fn synth(args: &[&str]) -> Output {
    synth_with(args, &[])
}

/// The binary with environment variables set (`MEMHC_HOST_MEMORY` unset unless given).
pub fn synth_with(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_memhc-synth"));
    cmd.args(args).env_remove("MEMHC_HOST_MEMORY");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("the binary runs")
}

/// Checks that `o` failed with exit code `code`, printed nothing, and said one line on stderr
/// that contains `needle`.
pub fn one_line_error(o: &Output, code: i32, needle: &str, what: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(code), "{what}: {err}");
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "{what}: not one line: {err}"
    );
    assert!(err.contains(needle), "{what}: {err}");
    assert!(!err.contains("panicked"), "{what}: {err}");
    assert!(stdout(o).is_empty(), "{what}: printed {}", stdout(o));
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A fresh directory for one test's files: `suite` names the test file, `name` the test.
pub fn scratch(suite: &str, name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("memhc-synth-{suite}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The records of `path` without what depends on the clock (times and rates).
pub fn counts(path: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut records: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    for r in &mut records {
        let o = r.as_object_mut().unwrap();
        for k in [
            "wall_s",
            "wall_s_runs",
            "cpu_s",
            "cpu_s_runs",
            "device_compute_s",
            "gflops",
            "copy_hidden_share",
        ] {
            o.remove(k);
        }
    }
    records
}
