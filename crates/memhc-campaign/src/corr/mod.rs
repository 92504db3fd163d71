//! Correlator campaigns: a manifest of gauge configurations (each a `memhc-corr/1` file), cut
//! into units of (configuration x block of time sources), each run as the configuration's
//! file restricted to its time pairs, and gathered into one output.
//!
//! [`CorrCampaign`] is the master's view (the manifest read, the units enumerated, the results
//! gathered); [`CorrJob`] is what every rank runs.

pub mod command;
pub mod gather;
pub mod job;
pub mod manifest;
pub mod units;

use std::path::Path;

pub use command::{CampaignOptions, RunSummary};
pub use gather::{CampaignValues, ConfigurationValues, VALUES_FORMAT};
pub use job::{BackendRunner, CorrJob, Runner, run_on};
pub use manifest::{Manifest, RunSettings};
pub use units::{UnitSpec, Units};

use crate::error::Result;
use crate::job::Unit;

/// A correlator campaign as the master sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct CorrCampaign {
    /// The manifest.
    pub manifest: Manifest,
    /// Its units.
    pub units: Units,
}

impl CorrCampaign {
    /// Reads the manifest at `path` and every configuration file it names (relative to the
    /// manifest's directory, made absolute in the units' specs), and makes the units, to run
    /// on `backend`.
    pub fn load(path: &Path, backend: &str) -> Result<Self> {
        let manifest = Manifest::load(path)?;
        // Absolute: a rank elsewhere (another node, another working directory) finds the files.
        let dir = std::path::absolute(path)
            .map_err(|e| crate::error::CampaignError::io(path, e))?
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let units = units::units(&manifest, &dir, backend)?;
        Ok(CorrCampaign { manifest, units })
    }

    /// The units to hand out.
    pub fn units(&self) -> &[Unit] {
        &self.units.units
    }

    /// The results of all units, put together.
    pub fn gather(&self, results: &[Option<String>]) -> Result<CampaignValues> {
        CampaignValues::gather(&self.units, results)
    }
}
