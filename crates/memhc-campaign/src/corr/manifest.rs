//! The campaign manifest (`memhc-campaign/1`, JSON, documented in `docs/campaign-format.md`):
//! which correlator files make the gauge configurations, which time sources to compute, how
//! many sources a unit takes, and how every unit is planned and run.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use memhc_core::{Config, Mode, PolicyKind};
use memhc_corr::{Order, PlanOptions, is_valid_id};
use serde::{Deserialize, Serialize};

use crate::error::{CampaignError, Result};

/// The value of the manifest's `"format"` key.
pub const MANIFEST_FORMAT: &str = "memhc-campaign/1";

/// A campaign manifest, as read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Always [`MANIFEST_FORMAT`].
    pub format: String,
    /// The gauge configurations, in output order.
    pub configurations: Vec<ConfigurationSpec>,
    /// The time sources to compute (default: every source of each file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sources: Option<Vec<u32>>,
    /// Time sources per unit (default: all of a configuration's sources in one unit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_block: Option<usize>,
    /// How each unit is planned and run.
    #[serde(default)]
    pub run: RunSettings,
}

/// One gauge configuration: a correlator file, and optionally a seed that shifts its seeded
/// node data (one file can then stand for many configurations).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigurationSpec {
    /// The configuration's id (unique; an id as in correlator files).
    pub id: String,
    /// Its `memhc-corr/1` file, relative to the manifest's directory.
    pub file: PathBuf,
    /// If set, every `{"seed": S}` node of the file takes the seed `S + seed * 2^32`
    /// (mod 2^64).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

/// A byte count: an integer, or a string in `memhc-select`'s grammar (`"512M"`, `"2G"`,
/// `"8GiB"`: K, M, G or T, powers of 1024, with an optional B or iB).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Bytes {
    /// Bytes.
    Count(u64),
    /// `"512M"`, `"2G"`, `"8GiB"`.
    Text(String),
}

impl Bytes {
    /// The number of bytes.
    pub fn get(&self) -> Result<u64, String> {
        match self {
            Bytes::Count(0) => Err("a budget of 0 bytes".into()),
            Bytes::Count(n) => Ok(*n),
            Bytes::Text(t) => memhc_select::parse_bytes(t).map_err(|e| e.to_string()),
        }
    }
}

/// The planner's order, by name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OrderName {
    /// The planner's order.
    #[default]
    Planned,
    /// The file's order.
    File,
}

/// How every unit is planned and run: the options of `memhc run`, with the same defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunSettings {
    /// The eviction policy (`lru`, `pp-lru`, `random`, `mru`, `car`, `clock-pro`, `belady`).
    pub policy: PolicyKind,
    /// The mode (`naive`, `reorg`, `reorg-sync`, `optimal`).
    pub mode: Mode,
    /// Streams.
    pub streams: usize,
    /// The device budget of each unit (default: the unit's plan's peak, so nothing is evicted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<Bytes>,
    /// Share identical partial products and traces.
    pub sharing: bool,
    /// The order of the work.
    pub order: OrderName,
    /// Contractions per vector.
    pub vector_size: usize,
}

impl Default for RunSettings {
    /// `memhc run`'s defaults: lru, optimal, 4 streams, the plan's peak, sharing, planned
    /// order, vectors of 16.
    fn default() -> Self {
        RunSettings {
            policy: PolicyKind::Lru,
            mode: Mode::Optimal,
            streams: 4,
            budget: None,
            sharing: true,
            order: OrderName::Planned,
            vector_size: 16,
        }
    }
}

impl RunSettings {
    /// The planner's options.
    pub fn plan_options(&self) -> PlanOptions {
        PlanOptions {
            sharing: self.sharing,
            order: match self.order {
                OrderName::Planned => Order::Planned,
                OrderName::File => Order::File,
            },
            vector_size: self.vector_size,
        }
    }

    /// The runtime's configuration for a budget of `budget` bytes.
    pub fn config(&self, budget: usize) -> Config {
        let mut config = Config::for_mode(self.mode);
        config.policy = self.policy;
        config.streams = self.streams;
        config.budget = Some(budget);
        config
    }

    fn check(&self) -> Result<(), String> {
        if self.streams == 0 {
            return Err("run.streams must be at least 1".into());
        }
        if self.streams > hadron::admission::MAX_STREAMS {
            return Err(format!(
                "run.streams {}: at most {}",
                self.streams,
                hadron::admission::MAX_STREAMS
            ));
        }
        if self.vector_size == 0 {
            return Err("run.vector_size must be at least 1".into());
        }
        if self.mode == Mode::Unified {
            return Err("run.mode unified is not available for campaigns".into());
        }
        if let Some(b) = &self.budget {
            b.get().map_err(|e| format!("run.budget: {e}"))?;
        }
        Ok(())
    }
}

impl Manifest {
    /// Reads and checks the manifest at `path`.
    pub fn load(path: &Path) -> Result<Self> {
        let text =
            hadron::admission::read_text_bounded(path, hadron::admission::MAX_TEXT_FILE_BYTES)
                .map_err(|e| CampaignError::io(path, e))?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Parses and checks `text`, the manifest named `name`. Errors are one line naming it.
    pub fn parse(text: &str, name: &str) -> Result<Self> {
        let usage = |m: String| CampaignError::Usage(format!("{name}: {m}"));
        #[derive(Deserialize)]
        struct Probe {
            format: Option<String>,
        }
        let probe: Probe = serde_json::from_str(text).map_err(|e| usage(json_line(&e)))?;
        match probe.format.as_deref() {
            Some(MANIFEST_FORMAT) => {}
            Some(other) => {
                return Err(usage(format!(
                    "unknown format \"{}\": this version reads \"{MANIFEST_FORMAT}\"",
                    other.escape_debug()
                )));
            }
            None => return Err(usage(format!("no \"format\": \"{MANIFEST_FORMAT}\" key"))),
        }
        let m: Manifest = serde_json::from_str(text).map_err(|e| usage(json_line(&e)))?;
        m.check().map_err(usage)?;
        Ok(m)
    }

    fn check(&self) -> Result<(), String> {
        if self.configurations.is_empty() {
            return Err("no configurations".into());
        }
        let mut ids = BTreeSet::new();
        for c in &self.configurations {
            if !is_valid_id(&c.id) {
                return Err(format!(
                    "configuration id \"{}\" is not allowed: ASCII letters, digits, '_', '-' \
                     and '.', not starting with '.'",
                    c.id.escape_debug()
                ));
            }
            if !ids.insert(c.id.as_str()) {
                return Err(format!("configuration \"{}\" is listed twice", c.id));
            }
        }
        if let Some(s) = &self.sources {
            if s.is_empty() {
                return Err("sources is empty".into());
            }
            let distinct: BTreeSet<_> = s.iter().collect();
            if distinct.len() != s.len() {
                return Err("sources lists a time source twice".into());
            }
        }
        if self.source_block == Some(0) {
            return Err("source_block must be at least 1".into());
        }
        self.run.check()
    }
}

fn json_line(e: &serde_json::Error) -> String {
    e.to_string().replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_manifest_parses_and_defaults_fill_in() {
        let m = Manifest::parse(
            r#"{"format": "memhc-campaign/1",
                "configurations": [{"id": "c1", "file": "a.json"},
                                   {"id": "c2", "file": "a.json", "seed": 7}],
                "sources": [0, 4], "source_block": 1,
                "run": {"policy": "belady", "budget": "64M", "order": "file"}}"#,
            "m.json",
        )
        .unwrap();
        assert_eq!(m.configurations[1].seed, Some(7));
        assert_eq!(m.run.policy, PolicyKind::Belady);
        assert_eq!(m.run.mode, Mode::Optimal);
        assert_eq!(m.run.budget.as_ref().unwrap().get(), Ok(64 << 20));
        assert_eq!(m.run.plan_options().order, Order::File);
        assert_eq!(m.run.config(100).budget, Some(100));
        let bare = Manifest::parse(
            r#"{"format": "memhc-campaign/1", "configurations": [{"id": "c", "file": "x"}]}"#,
            "m.json",
        )
        .unwrap();
        assert_eq!(bare.run, RunSettings::default());
        assert_eq!((bare.sources, bare.source_block), (None, None));
    }

    #[test]
    fn bad_manifests_are_one_line_naming_the_file() {
        let cases = [
            ("{", "m.json: EOF"),
            (r#"{"configurations": []}"#, "no \"format\""),
            (r#"{"format": "memhc-campaign/9"}"#, "unknown format"),
            (
                r#"{"format": "memhc-campaign/1", "configurations": []}"#,
                "no configurations",
            ),
            (
                r#"{"format": "memhc-campaign/1", "configurations": [{"id": "a/b", "file": "x"}]}"#,
                "not allowed",
            ),
            (
                r#"{"format": "memhc-campaign/1", "configurations": [{"id": "a", "file": "x"}, {"id": "a", "file": "y"}]}"#,
                "listed twice",
            ),
            (
                r#"{"format": "memhc-campaign/1", "configurations": [{"id": "a", "file": "x"}], "sources": [1, 1]}"#,
                "twice",
            ),
            (
                r#"{"format": "memhc-campaign/1", "configurations": [{"id": "a", "file": "x"}], "source_block": 0}"#,
                "source_block",
            ),
            (
                r#"{"format": "memhc-campaign/1", "configurations": [{"id": "a", "file": "x"}], "run": {"policy": "fifo"}}"#,
                "unknown variant",
            ),
            (
                r#"{"format": "memhc-campaign/1", "configurations": [{"id": "a", "file": "x"}], "run": {"budget": "12Q"}}"#,
                "run.budget",
            ),
            (
                r#"{"format": "memhc-campaign/1", "configurations": [{"id": "a", "file": "x"}], "run": {"streams": 0}}"#,
                "streams",
            ),
            (
                r#"{"format": "memhc-campaign/1", "configurations": [{"id": "a", "file": "x", "extra": 1}]}"#,
                "unknown field",
            ),
        ];
        for (text, needle) in cases {
            let e = Manifest::parse(text, "m.json").unwrap_err().to_string();
            assert!(e.starts_with("m.json: "), "{e}");
            assert!(e.contains(needle), "{text}: {e}");
            assert_eq!(e.lines().count(), 1, "{e}");
        }
    }

    #[test]
    fn byte_counts_parse() {
        assert_eq!(Bytes::Text("2G".into()).get(), Ok(2 << 30));
        assert_eq!(Bytes::Text(" 512k ".into()).get(), Ok(512 << 10));
        assert_eq!(Bytes::Text("8GiB".into()).get(), Ok(8 << 30));
        assert_eq!(Bytes::Count(1000).get(), Ok(1000));
        for bad in ["0", "G", "99999999999T", "-1"] {
            assert!(Bytes::Text(bad.into()).get().is_err(), "{bad}");
        }
        assert!(Bytes::Count(0).get().is_err());
    }
}
