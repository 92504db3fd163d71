//! The inefficiency report of a run: DRGPUM's object-level patterns found in its event log
//! ([`patterns`](mod@crate::patterns) defines them), each with its distance in queue steps and its
//! bytes, and the top memory peaks with the objects live at each.
//!
//! A peak is a local maximum of the bytes in use by objects over the log (pooled blocks hold no
//! object): a run of equal values higher than the values on both sides of it. The report gives
//! the highest ones (two by default, as DRGPUM), the highest first, earlier first among equals,
//! with the bytes pooled at that moment beside them.

use std::fmt::Write as _;

use memhc_core::{EventLog, ObjectId};

use crate::finding::{Finding, Pattern, ReportOptions};
use crate::patterns;
use crate::replay::Replay;

/// A memory peak and the objects live at it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Peak {
    /// The event at which it is first reached.
    pub event: usize,
    /// Its queue index.
    pub queue: u64,
    /// Its time (nanoseconds since the log started).
    pub t_ns: u64,
    /// Bytes held (in use plus pooled).
    pub held: u64,
    /// Bytes in use.
    pub in_use: u64,
    /// Bytes pooled.
    pub pooled: u64,
    /// The objects resident then, with their bytes, the largest first.
    pub objects: Vec<(ObjectId, u64)>,
}

/// One pattern's findings, summed up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Summary {
    /// The pattern.
    pub pattern: Pattern,
    /// How many findings.
    pub count: u64,
    /// Their bytes, summed.
    pub bytes: u64,
    /// The largest distance.
    pub max_distance: u64,
    /// The finding with the most bytes times distance (the first such).
    pub worst: Option<Finding>,
}

/// The report of one event log.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Report {
    /// The thresholds used.
    pub options: ReportOptions,
    /// Every finding, by pattern, then queue index.
    pub findings: Vec<Finding>,
    /// The highest memory peaks, the highest first.
    pub peaks: Vec<Peak>,
}

impl Report {
    /// The report of `log`.
    pub fn of(log: &EventLog, options: ReportOptions) -> Report {
        let replay = Replay::of(log);
        Report::of_replay(log, &replay, options)
    }

    /// The report of `log`, already replayed as `replay`.
    pub fn of_replay(log: &EventLog, replay: &Replay, options: ReportOptions) -> Report {
        Report {
            options,
            findings: patterns::find(log, replay, &options),
            peaks: peaks(replay, options.peaks),
        }
    }

    /// The findings of one pattern.
    pub fn of_pattern(&self, pattern: Pattern) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(move |f| f.pattern == pattern)
    }

    /// Each pattern's findings summed up, in [`Pattern::ALL`] order.
    pub fn summary(&self) -> Vec<Summary> {
        Pattern::ALL
            .iter()
            .map(|&pattern| {
                let mut s = Summary {
                    pattern,
                    count: 0,
                    bytes: 0,
                    max_distance: 0,
                    worst: None,
                };
                for f in self.of_pattern(pattern) {
                    s.count += 1;
                    s.bytes += f.bytes;
                    s.max_distance = s.max_distance.max(f.distance);
                    let weight = |f: &Finding| u128::from(f.bytes) * u128::from(f.distance.max(1));
                    if s.worst.is_none_or(|w| weight(f) > weight(&w)) {
                        s.worst = Some(*f);
                    }
                }
                s
            })
            .collect()
    }

    /// The summary as text: one line per pattern, then the peaks, headed by `title`.
    pub fn text(&self, title: &str) -> String {
        let mut out = format!(
            "memory report: {title} (DRGPUM patterns; distances in queue steps)\n\
             {:<24} {:>8} {:>12} {:>9}  worst\n",
            "pattern", "count", "bytes", "max_dist"
        );
        for s in self.summary() {
            let worst = s.worst.map_or_else(String::new, |w| {
                let with = w
                    .other
                    .map_or_else(String::new, |o| format!(", could reuse {o}'s"));
                format!(
                    "{} at queue {} ({} steps, {}{with})",
                    w.object,
                    w.queue,
                    w.distance,
                    bytes(w.bytes)
                )
            });
            let line = format!(
                "{:<24} {:>8} {:>12} {:>9}  {worst}",
                s.pattern.name(),
                s.count,
                bytes(s.bytes),
                if s.count > 0 {
                    s.max_distance.to_string()
                } else {
                    "-".into()
                }
            );
            let _ = writeln!(out, "{}", line.trim_end());
        }
        for (i, p) in self.peaks.iter().enumerate() {
            let shown: Vec<String> = p
                .objects
                .iter()
                .take(6)
                .map(|(o, b)| format!("{o} {}", bytes(*b)))
                .collect();
            let more = p.objects.len().saturating_sub(shown.len());
            let _ = writeln!(
                out,
                "peak {}: {} in use ({} pooled besides) at queue {}, t = {:.3} ms: {} objects live: {}{}",
                i + 1,
                bytes(p.in_use),
                bytes(p.pooled),
                p.queue,
                p.t_ns as f64 / 1e6,
                p.objects.len(),
                shown.join(", "),
                if more > 0 {
                    format!(", ... ({more} more)")
                } else {
                    String::new()
                }
            );
        }
        out
    }
}

/// Bytes for people: B, KiB, MiB or GiB.
pub fn bytes(b: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut v = b as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

/// The `n` highest local maxima of the bytes in use, with the objects live at each.
fn peaks(replay: &Replay, n: usize) -> Vec<Peak> {
    let s = &replay.samples;
    let value = |i: usize| s[i].in_use;
    let mut maxima: Vec<usize> = Vec::new();
    let mut i = 0;
    while i < s.len() {
        // A run of equal values [i, j).
        let mut j = i + 1;
        while j < s.len() && value(j) == value(i) {
            j += 1;
        }
        let higher_than_before = i == 0 || value(i - 1) < value(i);
        let higher_than_after = j == s.len() || value(j) < value(i);
        if higher_than_before && higher_than_after && value(i) > 0 {
            maxima.push(i);
        }
        i = j;
    }
    maxima.sort_by_key(|&i| (std::cmp::Reverse(value(i)), i));
    maxima
        .into_iter()
        .take(n)
        .map(|i| {
            let at = s[i];
            let mut objects: Vec<(ObjectId, u64)> = replay
                .live_at(at.event)
                .map(|r| (r.object, r.bytes))
                .collect();
            objects.sort_by_key(|&(o, b)| (std::cmp::Reverse(b), o));
            Peak {
                event: at.event,
                queue: at.queue,
                t_ns: at.t_ns,
                held: at.held(),
                in_use: at.in_use,
                pooled: at.pooled,
                objects,
            }
        })
        .collect()
}
