//! What the campaign tests share: a correlator file with several time sources, and manifests.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use memhc_corr::CorrFile;
use memhc_corr_gen::file::{FileOptions, to_file};
use memhc_corr_gen::physics::TimePair;
use memhc_corr_gen::presets::{Preset, correlator_matrix};

/// A fresh, empty directory for test `name`.
pub fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("memhc-campaign-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The a1_rhopi basis (the MemHC paper's first preset) at four time sources (0, 4, 8, 12),
/// each with its sink 8 later; node components `n x n`.
pub fn a1_file(n: usize) -> CorrFile {
    a1_at(n, &[0, 4, 8, 12])
}

/// The a1_rhopi basis at the time sources `sources`, each with its sink 8 later.
pub fn a1_at(n: usize, sources: &[u32]) -> CorrFile {
    let times: Vec<TimePair> = sources
        .iter()
        .map(|&s| TimePair {
            source: s,
            sink: s + 8,
        })
        .collect();
    let g = correlator_matrix(&Preset::A1RhoPi.basis(), &times);
    to_file(
        &g,
        &FileOptions {
            tensor_size: n,
            seed: 1,
            keys: Default::default(),
        },
    )
}

/// Writes `d/campaign.json` with the configurations `(id, file, seed)` and `extra` keys.
pub fn manifest(d: &Path, configurations: &[(&str, &str, Option<u64>)], extra: &str) -> PathBuf {
    let confs: Vec<String> = configurations
        .iter()
        .map(|(id, file, seed)| match seed {
            Some(s) => format!(r#"{{"id": "{id}", "file": "{file}", "seed": {s}}}"#),
            None => format!(r#"{{"id": "{id}", "file": "{file}"}}"#),
        })
        .collect();
    let text = format!(
        r#"{{"format": "memhc-campaign/1", "configurations": [{}] {extra}}}"#,
        confs.join(", ")
    );
    let p = d.join("campaign.json");
    std::fs::write(&p, text).unwrap();
    p
}

/// Two configurations of one file, one of them reseeded.
pub const TWO: [(&str, &str, Option<u64>); 2] = [
    ("cfg1000", "a1.json", None),
    ("cfg1010", "a1.json", Some(1010)),
];

/// Three configurations of one file, two of them reseeded.
pub const CONFIGURATIONS: [(&str, &str, Option<u64>); 3] = [
    ("cfg1000", "a1.json", None),
    ("cfg1010", "a1.json", Some(1010)),
    ("cfg1020", "a1.json", Some(1020)),
];
