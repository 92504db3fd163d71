//! Output: the table on stdout, JSON and CSV files of records, and the paper's Tables 1-3
//! layout (per-vector averages).

use std::fmt::Write as _;
use std::path::Path;

use crate::error::{Error, Result};
use crate::record::Record;

/// A plain-text table of the records, one line each, aligned.
pub fn table(records: &[Record]) -> String {
    let header = [
        "policy",
        "mode",
        "alloc",
        "N",
        "vsize",
        "repeat",
        "oversub",
        "budget_MiB",
        "allocs",
        "reuses",
        "handed",
        "arena",
        "hits",
        "misses",
        "hit_rate",
        "evict",
        "wback",
        "h2d_MiB",
        "d2h_MiB",
        "GFLOPS",
        "wall_s",
        "cpu_s",
        "lower_bd",
        "verified",
        "prefetch",
        "pf_hits",
        "pf_waste",
        "async_wb",
        "copy_hidden",
    ];
    let mib = |b: u64| format!("{:.1}", b as f64 / (1 << 20) as f64);
    let rows: Vec<Vec<String>> = records
        .iter()
        .map(|r| {
            vec![
                r.policy.clone(),
                r.mode.clone(),
                r.alloc.clone(),
                r.tensor_size.to_string(),
                r.vector_size.to_string(),
                format!("{}", r.repeat),
                r.oversub.map_or("-".into(), |o| format!("{o}")),
                mib(r.budget),
                r.allocations.to_string(),
                r.pool_reuses.to_string(),
                r.handovers.to_string(),
                r.arena_allocations.to_string(),
                r.hits.to_string(),
                r.misses.to_string(),
                format!("{:.1}%", 100.0 * r.hit_rate),
                r.evictions.to_string(),
                r.writebacks.to_string(),
                mib(r.h2d_bytes),
                mib(r.d2h_bytes),
                format!("{:.2}", r.gflops),
                format!("{:.3}", r.wall_s),
                r.cpu_s.map_or("-".into(), |c| format!("{c:.3}")),
                r.miss_lower_bound.map_or("-".into(), |m| m.to_string()),
                match r.verified {
                    Some(true) => "yes".into(),
                    Some(false) => "NO".into(),
                    None => "-".into(),
                },
                r.prefetch.map_or("off".into(), |w| w.to_string()),
                r.prefetch_hits.to_string(),
                r.prefetch_wasted.to_string(),
                r.async_writebacks.to_string(),
                r.copy_hidden_share
                    .map_or("-".into(), |h| format!("{:.1}%", 100.0 * h)),
            ]
        })
        .collect();
    // The prefetch columns only when some run prefetched.
    if records.iter().all(|r| r.prefetch.is_none()) {
        let keep = header.len() - PREFETCH_COLUMNS;
        let rows: Vec<Vec<String>> = rows.into_iter().map(|r| r[..keep].to_vec()).collect();
        return render(&header[..keep], &rows);
    }
    render(&header, &rows)
}

/// The number of columns at the end of [`table`] that describe prefetch.
const PREFETCH_COLUMNS: usize = 5;

/// Lays out `rows` under `header` in aligned columns: the first two left-aligned (names), the
/// others right-aligned (numbers).
pub fn render(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.len());
        }
    }
    let mut out = String::new();
    let line = |out: &mut String, cells: &mut dyn Iterator<Item = &str>| {
        let text: Vec<String> = cells
            .zip(&widths)
            .enumerate()
            .map(|(i, (c, w))| {
                if i < 2 {
                    format!("{c:<w$}")
                } else {
                    format!("{c:>w$}")
                }
            })
            .collect();
        let _ = writeln!(out, "{}", text.join("  ").trim_end());
    };
    line(&mut out, &mut header.iter().copied());
    for row in rows {
        line(&mut out, &mut row.iter().map(String::as_str));
    }
    out
}

/// The paper's Tables 1-3 layout: per-vector averages of Allocate, Evictions, Hit, Miss, Hit
/// Rate and GFLOPS, and the speedup of each row over the first row of its point.
pub fn paper_table(records: &[Record]) -> String {
    let header = [
        "point",
        "policy / mode",
        "Allocate",
        "Evictions",
        "Hit",
        "Miss",
        "Hit Rate",
        "GFLOPS",
        "Speedup",
    ];
    let mut rows = Vec::new();
    let mut first_of_point: Option<(String, f64)> = None;
    for r in records {
        let p = r;
        let point = format!(
            "N={} vsize={} repeat={} oversub={}",
            p.tensor_size,
            p.vector_size,
            p.repeat,
            p.oversub.map_or("-".into(), |o| format!("{o}"))
        );
        let base = match &first_of_point {
            Some((label, g)) if *label == point => *g,
            _ => {
                first_of_point = Some((point.clone(), r.gflops));
                r.gflops
            }
        };
        let per = |x: u64| format!("{:.1}", x as f64 / p.vectors.max(1) as f64);
        rows.push(vec![
            point,
            format!("{} / {}", r.policy, r.mode),
            per(r.allocations),
            per(r.evictions),
            per(r.hits),
            per(r.misses),
            format!("{:.2}%", 100.0 * r.hit_rate),
            format!("{:.2}", r.gflops),
            if base > 0.0 {
                format!("{:.2}x", r.gflops / base)
            } else {
                "-".into()
            },
        ]);
    }
    let mut out =
        String::from("Per vector (averages over the run), as in the MemHC paper's Tables 1-3:\n");
    out.push_str(&render(&header, &rows));
    out
}

/// Prints `text` on stdout. A reader that went away (`memhc-synth ... | head`) is not an
/// error: the rest is not wanted.
pub fn to_stdout(text: &str) -> Result<()> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Error::io("stdout", e)),
        _ => Ok(()),
    }
}

/// Writes the records as a JSON array.
pub fn write_json(path: &Path, records: &[Record]) -> Result<()> {
    let text = serde_json::to_string_pretty(records)
        .map_err(|e| Error::Usage(format!("cannot encode records as JSON: {e}")))?;
    std::fs::write(path, text + "\n").map_err(|e| Error::io(path, e))
}

/// Where the records of the points done so far are kept while a sweep with `--json PATH`
/// runs: `PATH.partial`.
pub fn partial_path(json: &Path) -> std::path::PathBuf {
    let mut name = json.as_os_str().to_owned();
    name.push(".partial");
    name.into()
}

/// Writes the records as CSV, one row each, with a header. The times of every run
/// (`wall_s_runs`, `cpu_s_runs`) are left out: a CSV cell holds one value, and `wall_s`,
/// `cpu_s` are their medians (the JSON keeps them).
pub fn write_csv(path: &Path, records: &[Record]) -> Result<()> {
    let io = |e: csv::Error| match e.into_kind() {
        csv::ErrorKind::Io(e) => Error::io(path, e),
        other => Error::Usage(format!("{}: cannot write CSV: {other:?}", path.display())),
    };
    let mut w = csv::Writer::from_path(path).map_err(io)?;
    for r in records {
        let row = Record {
            wall_s_runs: Vec::new(),
            cpu_s_runs: Vec::new(),
            ..r.clone()
        };
        w.serialize(row).map_err(io)?;
    }
    w.flush().map_err(|e| Error::io(path, e))
}
