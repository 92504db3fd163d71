//! `memhc-synth plot RECORDS.json --against PARAM --out DIR [--where KEY=VALUE]...`: the plots
//! of `--plot`, drawn again from the records a run saved with `--json`. A sweep often runs on
//! another machine (a GPU one, without the time to plot there) or covers several sizes at
//! once; this draws it afterwards, for the slice `--where` selects.

use std::fs;
use std::path::{Path, PathBuf};

use clap::Args;
use clap::builder::PossibleValuesParser;

use crate::error::{Error, Result};
use crate::plot;
use crate::record::{PARAMETERS, Record};

/// The `--where` keys with a number (or `none`) for a value, beyond the plottable
/// [`PARAMETERS`].
const NUMBERS: [&str; 3] = ["seed", "budget", "reuse-tolerance"];

/// The `--where` keys with a word for a value.
const WORDS: [&str; 5] = ["policy", "mode", "alloc", "backend", "dist"];

/// The options of `memhc-synth plot`.
#[derive(Debug, Args)]
pub struct PlotArgs {
    /// The records: a JSON file that `--json` wrote.
    records: PathBuf,
    /// The parameter on the x axis.
    #[arg(long, value_parser = PossibleValuesParser::new(PARAMETERS))]
    against: String,
    /// The directory to write the SVG files into (created if needed).
    #[arg(long)]
    out: PathBuf,
    /// Keep only the records with this value: `tensor-size=384`, `mode=optimal`,
    /// `oversub=none` (a budget given in bytes). Keys: the parameters of --against, seed,
    /// budget, reuse-tolerance, policy, mode, alloc, backend, dist. Repeat to narrow further.
    #[arg(long = "where", value_name = "KEY=VALUE")]
    filters: Vec<String>,
}

/// One `--where` condition.
#[derive(Debug, PartialEq)]
enum Filter {
    /// A numeric field equal to the value (`None`: the record has none, as `oversub` of a run
    /// given a budget in bytes).
    Number(String, Option<f64>),
    /// A text field equal to the value.
    Word(String, String),
}

impl Filter {
    fn parse(s: &str) -> Result<Self> {
        let usage = || {
            Error::Usage(format!(
                "--where {s}: expected KEY=VALUE with KEY one of {}, {}, {}",
                PARAMETERS.join(", "),
                NUMBERS.join(", "),
                WORDS.join(", ")
            ))
        };
        let (key, value) = s.split_once('=').ok_or_else(usage)?;
        let (key, value) = (key.trim(), value.trim());
        if WORDS.contains(&key) {
            return Ok(Filter::Word(key.into(), value.into()));
        }
        if !PARAMETERS.contains(&key) && !NUMBERS.contains(&key) {
            return Err(usage());
        }
        if value == "none" {
            return Ok(Filter::Number(key.into(), None));
        }
        match value.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(Filter::Number(key.into(), Some(v))),
            _ => Err(Error::Usage(format!(
                "--where {s}: `{value}` is not a finite number (or `none`)"
            ))),
        }
    }

    fn keeps(&self, r: &Record) -> bool {
        match self {
            Filter::Number(key, v) => match (number(r, key), v) {
                (Some(x), Some(v)) => same(x, *v),
                (x, v) => x.is_none() && v.is_none(),
            },
            Filter::Word(key, v) => word(r, key) == Some(v.as_str()),
        }
    }
}

/// A record's numeric field by its `--where` key.
fn number(r: &Record, key: &str) -> Option<f64> {
    match key {
        "seed" => Some(r.seed as f64),
        "budget" => Some(r.budget as f64),
        "reuse-tolerance" => Some(f64::from(r.reuse_tolerance_percent)),
        _ => r.parameter(key),
    }
}

/// A record's text field by its `--where` key.
fn word<'r>(r: &'r Record, key: &str) -> Option<&'r str> {
    Some(match key {
        "policy" => &r.policy,
        "mode" => &r.mode,
        "alloc" => &r.alloc,
        "backend" => &r.backend,
        "dist" => &r.dist,
        _ => return None,
    })
}

/// Equal as parameters are: `0.125` written by one run and typed by a user.
fn same(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// Runs `memhc-synth plot`: reads the records, keeps those every filter keeps, checks that
/// each series has one record per x value, writes the plots and prints their paths.
///
/// # Errors
///
/// [`Error::Io`] when the file cannot be read or a plot cannot be written;
/// [`Error::Usage`] when the file is not a list of records, a filter is malformed, no
/// record is left, a record has no value for `--against`, or a series has two records at one
/// x value (naming the field that tells them apart, and the `--where` that selects one).
pub fn plot_command(a: &PlotArgs) -> Result<()> {
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
        return Err(Error::Usage(format!(
            "{}: no record is left to plot{}",
            a.records.display(),
            if a.filters.is_empty() {
                String::new()
            } else {
                format!(" after --where {}", a.filters.join(" --where "))
            }
        )));
    }
    let without = records
        .iter()
        .filter(|r| r.parameter(&a.against).is_none())
        .count();
    if without > 0 {
        return Err(Error::Usage(format!(
            "--against {}: {without} of the records have no {} (runs given a budget in bytes \
             have no oversubscription rate); leave them out with --where {}=VALUE",
            a.against, a.against, a.against
        )));
    }
    check_one_per_point(&records, &a.against)?;
    for path in plot::write_plots(&a.out, &records, &a.against)? {
        println!("{}", path.display());
    }
    Ok(())
}

fn read_records(path: &Path) -> Result<Vec<Record>> {
    let text = fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    serde_json::from_str(&text).map_err(|e| {
        Error::Usage(format!(
            "{}: not the records of memhc-synth --json: {e}",
            path.display()
        ))
    })
}

/// Two records of one series at one x would draw a zigzag: name the field that separates them.
fn check_one_per_point(records: &[Record], against: &str) -> Result<()> {
    let points: Vec<(String, Option<f64>)> = records
        .iter()
        .map(|r| (r.series(), r.parameter(against)))
        .collect();
    for (i, (series, x)) in points.iter().enumerate() {
        let Some(j) = points[..i]
            .iter()
            .position(|(s, y)| s == series && matches!((x, y), (Some(x), Some(y)) if same(*x, *y)))
        else {
            continue;
        };
        let (r, o) = (&records[i], &records[j]);
        let x = x.unwrap_or_default();
        let numbers = PARAMETERS.iter().chain(&NUMBERS).filter(|k| **k != against);
        let differs = numbers
            .map(|k| (*k, show(number(o, k)), show(number(r, k))))
            .chain(WORDS.iter().map(|k| {
                let text = |rec| word(rec, k).unwrap_or_default().to_string();
                (*k, text(o), text(r))
            }))
            .find(|(_, a, b)| a != b);
        return Err(Error::Usage(match differs {
            Some((k, a, b)) => format!(
                "series {series} has two records at {against} = {x} ({k} {a} and {b}): choose \
                 one with --where {k}=VALUE"
            ),
            None => format!(
                "series {series} has two records at {against} = {x} that no field tells apart \
                 (two runs of one sweep in one file?)"
            ),
        }));
    }
    Ok(())
}

/// A numeric field as `--where` takes it.
fn show(v: Option<f64>) -> String {
    v.map_or_else(|| "none".into(), |x| x.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_parse_numbers_words_and_none_and_refuse_the_rest() {
        assert_eq!(
            Filter::parse("tensor-size=384").ok(),
            Some(Filter::Number("tensor-size".into(), Some(384.0)))
        );
        assert_eq!(
            Filter::parse("oversub=none").ok(),
            Some(Filter::Number("oversub".into(), None))
        );
        assert_eq!(
            Filter::parse(" mode = optimal").ok(),
            Some(Filter::Word("mode".into(), "optimal".into()))
        );
        for bad in [
            "tensor-size",
            "colour=red",
            "repeat=half",
            "repeat=nan",
            "seed=inf",
        ] {
            assert!(matches!(Filter::parse(bad), Err(Error::Usage(_))), "{bad}");
        }
    }

    #[test]
    fn parameters_match_across_spellings() {
        assert!(same(0.125, "0.125".parse().unwrap_or(0.0)));
        assert!(same(384.0, 384.0));
        assert!(!same(0.5, 0.75));
    }
}
