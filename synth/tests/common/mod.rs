//! What the campaign tests share.

#![allow(clippy::unwrap_used)] // tests unwrap what must succeed

use std::path::Path;

/// The records of `path` without what depends on the clock (times and rates).
pub fn counts(path: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut records: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    for r in &mut records {
        let o = r.as_object_mut().unwrap();
        for k in [
            "wall_s",
            "cpu_s",
            "device_compute_s",
            "gflops",
            "copy_hidden_share",
        ] {
            o.remove(k);
        }
    }
    records
}
