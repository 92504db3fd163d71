//! The values of `memhc-synth`'s options: byte counts, lists of policies, modes and
//! allocation settings, and sweeps with the points they span.

use memhc_core::{Alloc, Mode, PolicyKind};

use crate::error::{Result, SynthError};
use crate::generate::SynthParams;

/// Parses a byte count with an optional K, M or G suffix (powers of 1024).
pub fn parse_bytes(s: &str) -> std::result::Result<u64, String> {
    let t = s.trim();
    let (digits, unit) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (&t[..i], c.to_ascii_uppercase()),
        _ => (t, 'B'),
    };
    let factor: u64 = match unit {
        'B' => 1,
        'K' => 1 << 10,
        'M' => 1 << 20,
        'G' => 1 << 30,
        other => return Err(format!("unknown unit '{other}' in '{s}' (K, M or G)")),
    };
    digits
        .trim()
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(factor))
        .filter(|&n| n > 0)
        .ok_or_else(|| format!("'{s}' is not a positive number of bytes"))
}

pub(crate) fn parse_policies(s: &str) -> Result<Vec<PolicyKind>> {
    if s == "all" {
        return Ok(PolicyKind::ALL.to_vec());
    }
    s.split(',')
        .map(|p| {
            p.trim()
                .parse::<PolicyKind>()
                .map_err(|e| SynthError::Usage(format!("--policy: {e}")))
        })
        .collect()
}

/// The modes of `--mode`: a list, or `all` for the paper's four explicit ones.
pub(crate) fn parse_modes(s: &str) -> Result<Vec<Mode>> {
    if s == "all" {
        return Ok(Mode::ALL.to_vec());
    }
    s.split(',')
        .map(|m| {
            m.trim()
                .parse::<Mode>()
                .map_err(|e| SynthError::Usage(format!("--mode: {e}")))
        })
        .collect()
}

/// The allocation settings of `--alloc`: a list, or `all`.
pub fn parse_allocs(s: &str) -> Result<Vec<Alloc>> {
    if s == "all" {
        return Ok(Alloc::ALL.to_vec());
    }
    s.split(',')
        .map(|a| {
            a.trim()
                .parse::<Alloc>()
                .map_err(|e| SynthError::Usage(format!("--alloc: {e}")))
        })
        .collect()
}

/// One swept parameter and its values.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Sweep {
    pub key: String,
    pub values: Vec<f64>,
}

pub(crate) fn parse_sweep(s: &str) -> Result<Sweep> {
    let usage = |why: &str| SynthError::Usage(format!("--sweep {s}: {why}"));
    let (key, list) = s
        .split_once('=')
        .ok_or_else(|| usage("expected KEY=V1,V2,..."))?;
    if !["repeat", "vector-size", "tensor-size", "oversub"].contains(&key) {
        return Err(usage(
            "the key must be repeat, vector-size, tensor-size or oversub",
        ));
    }
    let values = list
        .split(',')
        .map(|v| {
            v.trim()
                .parse::<f64>()
                .map_err(|_| usage(&format!("'{v}' is not a number")))
        })
        .collect::<Result<Vec<_>>>()?;
    if values.is_empty() {
        return Err(usage("no values"));
    }
    let integral = key != "repeat" && key != "oversub";
    if let Some(v) = values
        .iter()
        .find(|v| !v.is_finite() || **v < 0.0 || (integral && v.fract() != 0.0))
    {
        return Err(usage(&format!("{v} is not a valid {key}")));
    }
    Ok(Sweep {
        key: key.to_owned(),
        values,
    })
}

/// Every combination of the swept values, applied to the base parameters.
pub(crate) fn points(
    base: &SynthParams,
    oversub: Option<f64>,
    sweeps: &[Sweep],
) -> Vec<(SynthParams, Option<f64>)> {
    let mut out = vec![(base.clone(), oversub)];
    for sweep in sweeps {
        out = out
            .into_iter()
            .flat_map(|(p, o)| {
                sweep.values.iter().map(move |&v| {
                    let mut p = p.clone();
                    let mut o = o;
                    match sweep.key.as_str() {
                        "repeat" => p.repeat = v,
                        "vector-size" => p.vector_size = v as usize,
                        "tensor-size" => p.tensor_size = v as usize,
                        _ => o = Some(v),
                    }
                    (p, o)
                })
            })
            .collect();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_counts() {
        assert_eq!(parse_bytes("512M"), Ok(512 << 20));
        assert_eq!(parse_bytes("2g"), Ok(2 << 30));
        assert_eq!(parse_bytes("1000"), Ok(1000));
        assert!(parse_bytes("0").is_err());
        assert!(parse_bytes("12X").is_err());
        assert!(parse_bytes("lots").is_err());
    }

    #[test]
    fn allocation_lists() {
        assert_eq!(parse_allocs("all").unwrap(), Alloc::ALL.to_vec());
        assert_eq!(
            parse_allocs("arena,driver").unwrap(),
            vec![Alloc::Arena, Alloc::Driver]
        );
        assert!(parse_allocs("slab").is_err());
    }

    #[test]
    fn sweeps_combine() {
        let s = [
            parse_sweep("repeat=0,1").unwrap(),
            parse_sweep("oversub=0.5,1.5").unwrap(),
        ];
        let pts = points(&SynthParams::default(), Some(0.0), &s);
        assert_eq!(pts.len(), 4);
        assert_eq!((pts[3].0.repeat, pts[3].1), (1.0, Some(1.5)));
        assert!(parse_sweep("speed=1").is_err());
        assert!(parse_sweep("vector-size=1.5").is_err());
        assert!(parse_sweep("repeat").is_err());
    }
}
