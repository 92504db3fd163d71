//! `memhc-synth plot RECORDS.json --against PARAM --out DIR [--where KEY=VALUE]...`: the plots
//! of `--plot`, drawn again from the records a run saved with `--json`. A sweep often runs on
//! another machine (a GPU one, without the time to plot there) or covers several sizes at
//! once; this draws it afterwards, for the slice `--where` selects.

use std::fs;
use std::path::{Path, PathBuf};

use clap::Args;

use crate::error::{Result, SynthError};
use crate::plot;
use crate::record::{PARAMETERS, Record};

/// The options of `memhc-synth plot`.
#[derive(Debug, Args)]
pub struct PlotArgs {
    /// The records: a JSON file that `--json` wrote.
    records: PathBuf,
    /// The parameter on the x axis: repeat, vector-size, tensor-size, oversub or vectors.
    #[arg(long)]
    against: String,
    /// The directory to write the SVG files into (created if needed).
    #[arg(long)]
    out: PathBuf,
    /// Keep only the records with this value: `tensor-size=384`, `policy=lru`,
    /// `mode=optimal` (any parameter above, or policy, mode, alloc, backend). Repeat to narrow
    /// further.
    #[arg(long = "where", value_name = "KEY=VALUE")]
    filters: Vec<String>,
}

/// One `--where` condition.
#[derive(Debug, PartialEq)]
enum Filter {
    /// A numeric parameter ([`Record::parameter`]) equal to the value.
    Number(String, f64),
    /// A text field (policy, mode, alloc, backend) equal to the value.
    Text(String, String),
}

impl Filter {
    fn parse(s: &str) -> Result<Self> {
        let usage = || {
            SynthError::Usage(format!(
                "--where {s}: expected KEY=VALUE with KEY one of {}, policy, mode, alloc, backend",
                PARAMETERS.join(", ")
            ))
        };
        let (key, value) = s.split_once('=').ok_or_else(usage)?;
        let (key, value) = (key.trim(), value.trim());
        if ["policy", "mode", "alloc", "backend"].contains(&key) {
            return Ok(Filter::Text(key.into(), value.into()));
        }
        if !PARAMETERS.contains(&key) {
            return Err(usage());
        }
        let number = value
            .parse::<f64>()
            .map_err(|_| SynthError::Usage(format!("--where {s}: `{value}` is not a number")))?;
        Ok(Filter::Number(key.into(), number))
    }

    fn keeps(&self, r: &Record) -> bool {
        match self {
            Filter::Number(key, v) => r.parameter(key).is_some_and(|x| same(x, *v)),
            Filter::Text(key, v) => {
                let field = match key.as_str() {
                    "policy" => &r.policy,
                    "mode" => &r.mode,
                    "alloc" => &r.alloc,
                    _ => &r.backend,
                };
                field == v
            }
        }
    }
}

/// Equal as parameters are: `0.125` written by one run and typed by a user.
fn same(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// Runs `memhc-synth plot`: reads the records, keeps those every filter keeps, checks that each
/// series has one record per x value, writes the plots and prints their paths.
///
/// # Errors
///
/// [`SynthError::Io`] when the file cannot be read or a plot cannot be written;
/// [`SynthError::Usage`] when `--against` names no parameter, the file is not a list of
/// records, a filter is malformed, no
/// record is left, or a series has two records at one x that differ in another parameter
/// (with the `--where` that would separate them).
pub fn plot_command(a: &PlotArgs) -> Result<()> {
    if !PARAMETERS.contains(&a.against.as_str()) {
        return Err(SynthError::Usage(format!(
            "--against {}: expected one of {}",
            a.against,
            PARAMETERS.join(", ")
        )));
    }
    let filters = a
        .filters
        .iter()
        .map(|f| Filter::parse(f))
        .collect::<Result<Vec<_>>>()?;
    let records: Vec<Record> = read_records(&a.records)?
        .into_iter()
        .filter(|r| filters.iter().all(|f| f.keeps(r)))
        .collect();
    if records.is_empty() {
        return Err(SynthError::Usage(format!(
            "{}: no record is left to plot{}",
            a.records.display(),
            if a.filters.is_empty() {
                String::new()
            } else {
                format!(" after --where {}", a.filters.join(" --where "))
            }
        )));
    }
    check_one_per_point(&records, &a.against)?;
    for path in plot::write_plots(&a.out, &records, &a.against)? {
        println!("{}", path.display());
    }
    Ok(())
}

fn read_records(path: &Path) -> Result<Vec<Record>> {
    let text = fs::read_to_string(path).map_err(|e| SynthError::io(path, e))?;
    serde_json::from_str(&text).map_err(|e| {
        SynthError::Usage(format!(
            "{}: not the records of memhc-synth --json: {e}",
            path.display()
        ))
    })
}

/// Two records of one series at one x would draw a zigzag: name the parameter that separates
/// them.
fn check_one_per_point(records: &[Record], against: &str) -> Result<()> {
    for (i, r) in records.iter().enumerate() {
        let Some(x) = r.parameter(against) else {
            // write_plots names the record without it.
            continue;
        };
        let twin = records[..i]
            .iter()
            .find(|o| o.series() == r.series() && o.parameter(against).is_some_and(|y| same(x, y)));
        if let Some(o) = twin {
            let differs = PARAMETERS
                .iter()
                .find(|p| **p != against && o.parameter(p) != r.parameter(p));
            return Err(SynthError::Usage(match differs {
                Some(p) => format!(
                    "series {} has two records at {against} = {x} ({p} {} and {}): choose one \
                     with --where {p}=VALUE",
                    r.series(),
                    show(o.parameter(p)),
                    show(r.parameter(p)),
                ),
                None => format!(
                    "series {} has two records at {against} = {x} that no parameter tells \
                     apart (two runs of one sweep in one file?)",
                    r.series()
                ),
            }));
        }
    }
    Ok(())
}

fn show(v: Option<f64>) -> String {
    v.map_or_else(|| "none".into(), |x| x.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_parse_numbers_and_text_and_refuse_the_rest() {
        assert_eq!(
            Filter::parse("tensor-size=384").ok(),
            Some(Filter::Number("tensor-size".into(), 384.0))
        );
        assert_eq!(
            Filter::parse(" mode = optimal").ok(),
            Some(Filter::Text("mode".into(), "optimal".into()))
        );
        for bad in ["tensor-size", "colour=red", "repeat=half"] {
            assert!(
                matches!(Filter::parse(bad), Err(SynthError::Usage(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn parameters_match_across_spellings() {
        assert!(same(0.125, "0.125".parse().unwrap_or(0.0)));
        assert!(same(384.0, 384.0));
        assert!(!same(0.5, 0.75));
    }
}
