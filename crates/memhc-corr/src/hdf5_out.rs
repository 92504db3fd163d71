//! HDF5 output (feature `hdf5`): one dataset per correlator at the root of the file, named by
//! the correlator, one-dimensional over its time pairs, complex128 as h5py stores it
//! (compound `r`, `i`); attributes `source`, `sink` (int64 per entry), `source_operator`,
//! `sink_operator` (strings), `momentum` (int64 x 3) and each key field as a string.

use std::path::Path;
use std::str::FromStr;

use hdf5::types::VarLenUnicode;
use num_complex::Complex64;

use crate::error::{CorrError, Result};
use crate::output::Correlators;

fn text(path: &Path, s: &str) -> Result<VarLenUnicode> {
    VarLenUnicode::from_str(s).map_err(|e| CorrError::io(path, e))
}

impl Correlators {
    /// Writes the HDF5 form (one dataset per correlator; see the module documentation of
    /// [`crate::output`]). Feature `hdf5`.
    pub fn write_hdf5(&self, path: &Path) -> Result<()> {
        write(self, path)
    }
}

pub(crate) fn write(c: &Correlators, path: &Path) -> Result<()> {
    let err = |e: hdf5::Error| CorrError::io(path, e);
    let file = hdf5::File::create(path).map_err(err)?;
    for corr in &c.correlators {
        let values: Vec<Complex64> = corr.values.iter().map(|v| v.complex()).collect();
        let ds = file
            .new_dataset::<Complex64>()
            .shape(values.len())
            .create(corr.name.as_str())
            .map_err(err)?;
        ds.write_raw(&values).map_err(err)?;
        for (name, list) in [
            (
                "source",
                corr.values
                    .iter()
                    .map(|v| i64::from(v.source))
                    .collect::<Vec<_>>(),
            ),
            (
                "sink",
                corr.values.iter().map(|v| i64::from(v.sink)).collect(),
            ),
            ("momentum", corr.momentum.to_vec()),
        ] {
            ds.new_attr::<i64>()
                .shape(list.len())
                .create(name)
                .map_err(err)?
                .write_raw(&list)
                .map_err(err)?;
        }
        let mut strings = vec![
            ("source_operator".to_owned(), corr.source_operator.clone()),
            ("sink_operator".to_owned(), corr.sink_operator.clone()),
        ];
        strings.extend(corr.keys.iter().map(|(k, v)| (k.clone(), v.clone())));
        for (name, value) in strings {
            ds.new_attr::<VarLenUnicode>()
                .create(name.as_str())
                .map_err(err)?
                .write_scalar(&text(path, &value)?)
                .map_err(err)?;
        }
    }
    Ok(())
}
