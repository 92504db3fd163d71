//! One output for a whole campaign: every configuration's correlators, put back together from
//! its units in the order of its file's correlators and time pairs, whatever rank ran which
//! unit and in whatever order they finished. Written as JSON (`memhc-campaign-values/1`) or
//! CSV, atomically.

use std::collections::HashMap;
use std::path::Path;

use memhc_corr::{CorrelatorValues, Correlators, OutputForm, Value};
use serde::{Deserialize, Serialize};

use crate::corr::units::Units;
use crate::error::{CampaignError, Result};
use crate::exact::from_exact_str;
use crate::journal::write_atomic;

/// A correlator's metadata (from the first unit that has it) and its values by time pair.
type Found<'a> = (&'a CorrelatorValues, HashMap<(u32, u32), Value>);

/// The format of the campaign's JSON output.
pub const VALUES_FORMAT: &str = "memhc-campaign-values/1";

/// One configuration's correlators.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConfigurationValues {
    /// The configuration's id.
    pub id: String,
    /// Its correlators, in its file's order (those with a time pair in the campaign).
    pub correlators: Vec<CorrelatorValues>,
}

/// Every configuration's correlators.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CampaignValues {
    /// Always [`VALUES_FORMAT`].
    pub format: String,
    /// In manifest order.
    pub configurations: Vec<ConfigurationValues>,
}

impl CampaignValues {
    /// Puts the units' results (`results[i]` of unit `i`, all present) together.
    pub fn gather(units: &Units, results: &[Option<String>]) -> Result<Self> {
        let internal = |m: String| CampaignError::Usage(format!("gathering the results: {m}"));
        let mut per_config: Vec<Vec<Correlators>> = vec![Vec::new(); units.skeletons.len()];
        for (i, unit) in units.units.iter().enumerate() {
            let text = results
                .get(i)
                .and_then(Option::as_ref)
                .ok_or_else(|| internal(format!("unit {} has no result", unit.key)))?;
            let values: Correlators =
                from_exact_str(text).map_err(|e| internal(format!("unit {}: {e}", unit.key)))?;
            per_config[units.of[i]].push(values);
        }
        let mut configurations = Vec::with_capacity(units.skeletons.len());
        for (skeleton, blocks) in units.skeletons.iter().zip(&per_config) {
            let mut found: HashMap<&str, Found> = HashMap::new();
            for c in blocks.iter().flat_map(|b| &b.correlators) {
                let entry = found
                    .entry(c.name.as_str())
                    .or_insert_with(|| (c, HashMap::new()));
                for v in &c.values {
                    entry.1.insert((v.source, v.sink), *v);
                }
            }
            let mut correlators = Vec::with_capacity(skeleton.correlators.len());
            for (name, pairs) in &skeleton.correlators {
                let missing =
                    |what: String| internal(format!("configuration {}: {what}", skeleton.id));
                let (meta, values) = found
                    .get(name.as_str())
                    .ok_or_else(|| missing(format!("no values of correlator {name}")))?;
                let values = pairs
                    .iter()
                    .map(|p| {
                        values.get(p).copied().ok_or_else(|| {
                            missing(format!("correlator {name} has no value at {p:?}"))
                        })
                    })
                    .collect::<Result<Vec<_>>>()?;
                correlators.push(CorrelatorValues {
                    values,
                    ..(*meta).clone()
                });
            }
            configurations.push(ConfigurationValues {
                id: skeleton.id.clone(),
                correlators,
            });
        }
        Ok(CampaignValues {
            format: VALUES_FORMAT.to_owned(),
            configurations,
        })
    }

    /// The JSON form (pretty, with a final newline).
    pub fn to_json(&self) -> Result<Vec<u8>> {
        let mut text = serde_json::to_vec_pretty(self)
            .map_err(|e| CampaignError::Usage(format!("writing the results: {e}")))?;
        text.push(b'\n');
        Ok(text)
    }

    /// The CSV form: `configuration,correlator,source,sink,re,im`, reals in the shortest form
    /// that reads back to the same double.
    pub fn to_csv(&self) -> Result<Vec<u8>> {
        let mut w = csv::Writer::from_writer(Vec::new());
        let err = |e: csv::Error| CampaignError::Usage(format!("writing the results: {e}"));
        w.write_record(["configuration", "correlator", "source", "sink", "re", "im"])
            .map_err(err)?;
        for conf in &self.configurations {
            for c in &conf.correlators {
                for v in &c.values {
                    w.write_record([
                        conf.id.clone(),
                        c.name.clone(),
                        v.source.to_string(),
                        v.sink.to_string(),
                        v.re.to_string(),
                        v.im.to_string(),
                    ])
                    .map_err(err)?;
                }
            }
        }
        w.into_inner()
            .map_err(|e| CampaignError::Usage(format!("writing the results: {e}")))
    }

    /// Writes `path` atomically, as JSON (`.json`) or CSV (`.csv`).
    pub fn write(&self, path: &Path) -> Result<()> {
        let bytes = match is_json(path)? {
            true => self.to_json()?,
            false => self.to_csv()?,
        };
        write_atomic(path, &bytes)
    }
}

/// Whether `path` names an output [`CampaignValues::write`] can write.
pub fn check_output(path: &Path) -> Result<()> {
    is_json(path).map(drop)
}

/// Whether `path`'s extension asks for JSON (`true`) or CSV (`false`) ([`OutputForm::of`]);
/// a campaign writes no other form.
fn is_json(path: &Path) -> Result<bool> {
    match OutputForm::of(path) {
        Ok(OutputForm::Json) => Ok(true),
        Ok(OutputForm::Csv) => Ok(false),
        _ => Err(CampaignError::Usage(format!(
            "--out {}: the output is .json or .csv",
            path.display()
        ))),
    }
}
