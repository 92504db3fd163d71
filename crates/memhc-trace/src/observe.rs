//! What a command line asks of a run's event log: `--timeline FILE` writes its Chrome-trace /
//! Perfetto JSON, `--report` prints its DRGPUM-style report after the table, and `--plot DIR`
//! adds its memory-over-time plot and timeline picture (beside a sweep's plots, in
//! `memhc-synth`). `memhc-synth` and `memhc run` both take these options and both use
//! [`Observe`].
//!
//! With several runs (policies, modes, allocation or prefetch settings, sweep points), each
//! file gets the run's label before its extension: `trace.json` becomes
//! `trace-lru-optimal.json`; with one run, the file is named as given.

use crate::written::Written;
use std::path::{Path, PathBuf};

use memhc_core::EventLog;
use memhc_core::backend::timeline::WorkSpan;

use crate::error::{Result, TraceError};
use crate::{Replay, Report, ReportOptions, chrome, plot};

/// The outputs asked for.
#[derive(Clone, Debug, Default)]
pub struct Observe {
    /// `--timeline FILE`.
    pub timeline: Option<PathBuf>,
    /// `--report`.
    pub report: bool,
    /// `--plot DIR`.
    pub plot: Option<PathBuf>,
    /// Whether more than one run is made (files then carry the run's label).
    pub several: bool,
}

impl Observe {
    /// Whether runs record their event log.
    pub fn events(&self) -> bool {
        self.timeline.is_some() || self.report || self.plot.is_some()
    }

    /// Writes what is asked for of one run's event log `log` and backend timeline `spans`,
    /// the run labelled `label` (`lru-optimal`) and titled `title`; returns the report's text
    /// when `--report` is on, and the files written. Each file (and directory made) is recorded
    /// in `outputs` before it is written, so that a command failing later removes them.
    pub fn emit(
        &self,
        label: &str,
        title: &str,
        log: &EventLog,
        spans: &[WorkSpan],
        outputs: &mut Written,
    ) -> Result<(Option<String>, Vec<PathBuf>)> {
        let mut written = Vec::new();
        if let Some(path) = &self.timeline {
            let path = self.labelled(path, label);
            outputs.file(&path);
            chrome::write(&path, log, spans)?;
            written.push(path);
        }
        let replay = Replay::of(log);
        let report = Report::of_replay(log, &replay, ReportOptions::default());
        if let Some(dir) = &self.plot {
            outputs
                .create_dir_all(dir)
                .map_err(|e| TraceError::io(dir, e))?;
            let memory = dir.join(format!("memory-{label}.svg"));
            outputs.file(&memory);
            plot::memory_svg(&memory, title, &replay, log.budget, &report.peaks)?;
            let timeline = dir.join(format!("timeline-{label}.svg"));
            outputs.file(&timeline);
            plot::timeline_svg(&timeline, title, log, spans)?;
            written.extend([memory, timeline]);
        }
        Ok((self.report.then(|| report.text(title)), written))
    }

    /// `path` with `-label` before its extension when there are several runs.
    pub fn labelled(&self, path: &Path, label: &str) -> PathBuf {
        if !self.several {
            return path.to_owned();
        }
        let stem = path
            .file_stem()
            .map_or_else(|| "timeline".into(), |s| s.to_string_lossy());
        let name = match path.extension() {
            Some(ext) => format!("{stem}-{label}.{}", ext.to_string_lossy()),
            None => format!("{stem}-{label}"),
        };
        path.with_file_name(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_carry_the_label_only_with_several_runs() {
        let one = Observe::default();
        let p = Path::new("out/trace.json");
        assert_eq!(one.labelled(p, "lru-optimal"), p);
        let many = Observe {
            several: true,
            ..Observe::default()
        };
        assert_eq!(
            many.labelled(p, "lru-optimal"),
            Path::new("out/trace-lru-optimal.json")
        );
        assert_eq!(
            many.labelled(Path::new("t"), "x"),
            Path::new("t-x"),
            "no extension"
        );
        assert!(!one.events());
    }
}
