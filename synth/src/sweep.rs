//! A run of `memhc-synth`, parsed: the sweep's points, what every point runs (policies,
//! modes, allocation and prefetch settings, repetitions), one point run, and the records
//! presented. The run in one process (`app.rs`) and the distributed one (`distributed.rs`)
//! share all of it.

use std::path::{Path, PathBuf};

use indicatif::ProgressBar;
use memhc_core::{Alloc, Mode, PolicyKind};

use crate::args::{check_generated, host_memory};
use crate::device::{BackendChoice, choose, run_on};
use crate::error::{Error, Result};
use crate::generate::{SynthParams, generate};
use crate::order::Order;
use crate::prepared::{PointSetup, Prepared, median_run};
use crate::record::Record;
use crate::run::{RunSpec, miss_lower_bound_in};
use crate::runargs::RunArgs;
use crate::workload::Workload;
use crate::{file, plot, report};
use memhc_trace::Written;
use memhc_trace::{Observe, TraceError};

/// Unified memory is never oversubscribed: refuses a point whose budget is below its peak.
pub(crate) fn refuse_oversubscribed_unified(modes: &[Mode], prepared: &[Prepared]) -> Result<()> {
    if !modes.contains(&Mode::Unified) {
        return Ok(());
    }
    match prepared.iter().find(|p| p.budget < p.peak) {
        Some(p) => Err(Error::Usage(format!(
            "unified memory is never oversubscribed: --mode unified needs a budget of at least \
             the peak, {} bytes, but {} makes it {} bytes",
            p.peak,
            p.oversub
                .map_or_else(|| "--budget".to_owned(), |o| format!("--oversub {o}")),
            p.budget
        ))),
        None => Ok(()),
    }
}

/// One swept parameter and its values.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Sweep {
    pub(crate) key: String,
    pub(crate) values: Vec<f64>,
}

pub(crate) fn parse_sweep(s: &str) -> Result<Sweep> {
    let usage = |why: &str| Error::Usage(format!("--sweep {s}: {why}"));
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

/// What every point runs: each mode and allocation setting, each policy and prefetch setting,
/// `runs` times.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RunPlan {
    pub(crate) policies: Vec<PolicyKind>,
    pub(crate) modes: Vec<Mode>,
    pub(crate) allocs: Vec<Option<Alloc>>,
    pub(crate) prefetches: Vec<Option<usize>>,
    /// `--host-memory pinned`: the direct data path.
    pub(crate) pinned: bool,
    pub(crate) backend: BackendChoice,
    pub(crate) backend_name: String,
    pub(crate) streams: usize,
    /// The issue order (`--order`).
    pub(crate) order: Order,
    pub(crate) reuse_tolerance: u32,
    pub(crate) runs: usize,
    pub(crate) verify: bool,
}

/// A run, parsed and checked: the plan, the sweeps, the base parameters, and (after
/// [`Parsed::load`]) the points.
pub(crate) struct Parsed {
    pub(crate) plan: RunPlan,
    pub(crate) sweeps: Vec<Sweep>,
    pub(crate) base: SynthParams,
    default_oversub: Option<f64>,
    pub(crate) setup: PointSetup,
    loaded: Option<Workload>,
    pub(crate) points: Vec<(SynthParams, Option<f64>)>,
}

impl Parsed {
    /// Parses and checks everything but the workload file.
    pub(crate) fn new(a: &RunArgs) -> Result<Self> {
        let (policies, modes) = a.config.parse()?;
        let allocs = a.config.allocs(&modes)?;
        let prefetches = a.config.prefetches(&modes)?;
        let pinned = a.config.pinned(&modes)?;
        let order = a.config.order()?;
        let backend = choose(&a.backend)?;
        let sweeps = a
            .sweep
            .iter()
            .map(|s| parse_sweep(s))
            .collect::<Result<Vec<_>>>()?;
        if a.config.budget.is_some() && sweeps.iter().any(|s| s.key == "oversub") {
            return Err(Error::Usage(
                "--sweep oversub=... and --budget exclude each other".into(),
            ));
        }
        if a.journal.is_some() && (a.timeline.is_some() || a.report) {
            return Err(Error::Usage(
                "--timeline and --report are for a run in one process, not with --journal".into(),
            ));
        }
        if sweeps.len() > 1 && a.plot.is_some() {
            return Err(Error::Usage(
                "--plot draws one swept parameter; give one --sweep".into(),
            ));
        }
        let base = a.workload.params()?;
        let default_oversub = if a.config.budget.is_some() {
            None
        } else {
            Some(a.config.oversub.unwrap_or(0.0))
        };
        let setup = PointSetup {
            budget: a.config.budget,
            from_file: a.workload.workload.is_some(),
            backend,
            verify: a.verify,
            host_memory: host_memory()?,
            arena: allocs.contains(&Some(memhc_core::Alloc::Arena)),
            pinned,
        };
        Ok(Parsed {
            plan: RunPlan {
                policies,
                modes,
                allocs,
                prefetches,
                pinned,
                backend,
                backend_name: a.backend.clone(),
                streams: a.config.streams,
                order,
                reuse_tolerance: a.config.reuse_tolerance,
                runs: a.runs,
                verify: a.verify,
            },
            sweeps,
            base,
            default_oversub,
            setup,
            loaded: None,
            points: Vec::new(),
        })
    }

    /// Reads the workload file, if any, and makes the points of the sweep.
    pub(crate) fn load(&mut self, a: &RunArgs) -> Result<()> {
        if let Some(path) = &a.workload.workload {
            if self.sweeps.iter().any(|s| s.key != "oversub") {
                return Err(Error::Usage(
                    "with --workload only --sweep oversub=... applies (the file fixes the rest)"
                        .into(),
                ));
            }
            self.loaded = Some(file::load(path)?);
        }
        if a.runs == 0 {
            return Err(Error::Usage("--runs must be at least 1".into()));
        }
        self.points = points(&self.base, self.default_oversub, &self.sweeps);
        Ok(())
    }

    /// Point `i` ready to run: its workload (generated, or the file's), admitted against the
    /// host memory, its peak and its budget.
    pub(crate) fn prepare(&self, i: usize) -> Result<Prepared> {
        let (params, oversub) = self
            .points
            .get(i)
            .ok_or_else(|| Error::Usage(format!("no point {i} in this sweep")))?;
        let workload = match &self.loaded {
            Some(w) => w.clone(),
            None => {
                check_generated("the run", params, true, self.setup.host_memory)?;
                generate(params)?
            }
        };
        Prepared::new(params.clone(), *oversub, workload, &self.setup)
    }
}

impl RunPlan {
    /// Runs of one point: every combination of the settings, `runs` times each.
    pub(crate) fn runs_per_point(&self) -> u64 {
        (self.policies.len()
            * self.modes.len()
            * self.allocs.len()
            * self.prefetches.len()
            * self.runs) as u64
    }

    /// The first run in a process pays for fresh memory and thread start-up: an untimed run
    /// of the first configuration on `p`, so that the first record is not penalised.
    pub(crate) fn warm_up(&self, p: &Prepared) -> Result<()> {
        if let (Some(&policy), Some(&mode)) = (self.policies.first(), self.modes.first()) {
            let spec = RunSpec {
                alloc: self.allocs.first().copied().flatten(),
                prefetch: self.prefetches.first().copied().flatten(),
                pinned: self.pinned,
                ..p.spec(policy, mode, self.streams, false)
            };
            run_on(
                self.backend,
                &p.workload,
                &p.analysis,
                &spec,
                self.order,
                false,
                &mut |_| {},
            )?;
        }
        Ok(())
    }

    /// Runs every configuration on point `p`; the records in report order. `dump`, when
    /// given, receives the results and traces of the first run (and is then taken). Each run
    /// records its event log when `observed` asks for its outputs, which are written (files)
    /// or collected (report texts, in `observed.reports`) as the runs end.
    pub(crate) fn run_point(
        &self,
        p: &Prepared,
        bar: &ProgressBar,
        dump: &mut Option<&Path>,
        observed: &mut Observed,
    ) -> Result<Vec<Record>> {
        let mut records = Vec::new();
        for (&mode, &alloc) in self
            .modes
            .iter()
            .flat_map(|m| self.allocs.iter().map(move |al| (m, al)))
        {
            let mut lower_bound = None;
            for (&policy, &prefetch) in self
                .policies
                .iter()
                .flat_map(|p| self.prefetches.iter().map(move |pf| (p, pf)))
            {
                bar.set_message(format!("{policy}/{mode}"));
                let spec = RunSpec {
                    alloc,
                    reuse_tolerance_percent: self.reuse_tolerance,
                    prefetch,
                    pinned: self.pinned,
                    ..p.spec(policy, mode, self.streams, self.verify)
                };
                let (w, a) = (&p.workload, &p.analysis);
                if a.equal_sizes && lower_bound.is_none() {
                    lower_bound = Some(miss_lower_bound_in(w, a, &spec, self.order)?);
                }
                let events = observed.outputs.events();
                let (traced, times) =
                    median_run(self.backend, p, &spec, self.order, self.runs, events, bar)?;
                let outcome = &traced.outcome;
                if let Some(dir) = dump.take() {
                    observed.record_dump(dir, &outcome.results)?;
                    file::dump_results(dir, &outcome.results, &outcome.traces)?;
                }
                let mut record = p.record(&self.backend_name, &spec, lower_bound, outcome, &times);
                record.order = self.order.to_string();
                if events {
                    let (label, title) = run_label(&record, observed.several_points);
                    let (text, files) = observed
                        .outputs
                        .emit(
                            &label,
                            &title,
                            &traced.events,
                            &traced.timeline,
                            &mut observed.outputs_written,
                        )
                        .map_err(|TraceError::Io { path, source }| Error::io(path, source))?;
                    observed.reports.extend(text);
                    observed.written.extend(files);
                }
                records.push(record);
            }
        }
        Ok(records)
    }
}

/// The exit code of an error: 2 for bad input (workload, options, files, host memory), 1 for
/// a run that failed.
pub(crate) fn exit_code(e: &Error) -> u8 {
    let input = matches!(
        e,
        Error::Workload(_)
            | Error::Usage(_)
            | Error::Io { .. }
            | Error::HostMemory { .. }
            | Error::Hadron(
                hadron::HadronError::OutOfHostMemory { .. } | hadron::HadronError::TooLarge(_)
            )
    );
    if input { 2 } else { 1 }
}

/// What the runs' event logs are for, and what came of them.
#[derive(Debug, Default)]
pub(crate) struct Observed {
    /// The outputs asked for (`--timeline`, `--report`, `--plot`).
    pub(crate) outputs: Observe,
    /// Whether the sweep has several points (a run's label then names its point).
    pub(crate) several_points: bool,
    /// The reports of the runs so far, in order.
    pub(crate) reports: Vec<String>,
    /// The files written so far.
    pub(crate) written: Vec<PathBuf>,
    /// Every output file and directory of the command so far (dumps, timelines, plots, JSON,
    /// CSV): removed when the command fails, kept by [`Observed::keep_outputs`].
    pub(crate) outputs_written: Written,
}

impl Observed {
    /// The outputs `a` asks for, over `points` points of `runs_per_point` runs each (the
    /// repetitions of `--runs` count once).
    pub(crate) fn new(a: &RunArgs, points: usize, runs_per_point: u64) -> Self {
        let runs = points as u64 * runs_per_point / a.runs.max(1) as u64;
        Observed {
            outputs: Observe {
                timeline: a.timeline.clone(),
                report: a.report,
                plot: a.plot.clone(),
                several: runs > 1,
            },
            several_points: points > 1,
            reports: Vec::new(),
            written: Vec::new(),
            outputs_written: Written::default(),
        }
    }

    /// Records what `--dump-results DIR` is about to write (the directory when it is made,
    /// `DIR/<id>.npy` of each result and `DIR/traces.json`), so that a failing command removes
    /// it. An id that is not a plain file name is not recorded: the dump refuses it before
    /// writing anything of its own.
    pub(crate) fn record_dump(
        &mut self,
        dir: &Path,
        results: &[(String, hadron::HadronNode)],
    ) -> Result<()> {
        self.outputs_written
            .create_dir_all(dir)
            .map_err(|e| Error::io(dir, e))?;
        for (id, _) in results {
            let name = format!("{id}.npy");
            if Path::new(&name).file_name() == Some(std::ffi::OsStr::new(&name)) {
                self.outputs_written.file(&dir.join(name));
            }
        }
        self.outputs_written.file(&dir.join("traces.json"));
        Ok(())
    }

    /// The command succeeded: its outputs stay.
    pub(crate) fn keep_outputs(&mut self) {
        std::mem::take(&mut self.outputs_written).keep();
    }
}

/// A run's label in file names (`lru-optimal-driver-pf6-N32-v16-r0.5-o1.5`: policy, mode,
/// allocation, prefetch, and with several points the point) and its title in reports.
fn run_label(r: &Record, several_points: bool) -> (String, String) {
    let mut label = format!("{}-{}-{}", r.policy, r.mode, r.alloc);
    if let Some(w) = r.prefetch {
        label.push_str(&format!("-pf{w}"));
    }
    if several_points {
        label.push_str(&format!(
            "-N{}-v{}-r{}",
            r.tensor_size, r.vector_size, r.repeat
        ));
        if let Some(o) = r.oversub {
            label.push_str(&format!("-o{o}"));
        }
    }
    let title = format!(
        "{}/{} ({}), N = {}, repeat {}, oversub {}",
        r.policy,
        r.mode,
        r.alloc,
        r.tensor_size,
        r.repeat,
        r.oversub.map_or("-".into(), |o| o.to_string())
    );
    (label, title)
}

/// The records as the options ask: the table (and the paper's), the runs' reports, JSON,
/// CSV, plots.
pub(crate) fn present(
    a: &RunArgs,
    records: &[Record],
    sweeps: &[Sweep],
    observed: &mut Observed,
) -> Result<()> {
    report::to_stdout(&report::table(records))?;
    for text in &observed.reports {
        report::to_stdout(&format!("\n{text}"))?;
    }
    if a.paper_table {
        report::to_stdout(&format!("\n{}", report::paper_table(records)))?;
    }
    let outputs = &mut observed.outputs_written;
    if let Some(path) = &a.json {
        outputs.file(path);
        report::write_json(path, records)?;
    }
    if let Some(path) = &a.csv {
        outputs.file(path);
        report::write_csv(path, records)?;
    }
    if let Some(dir) = &a.plot {
        let swept = sweeps.first().map_or("repeat", |s| s.key.as_str());
        outputs.create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        // The plots' own names: `write_plots` removes what it wrote when it fails.
        let plots = plot::write_plots(dir, records, swept)?;
        observed.written.extend(plots);
    }
    // Said once every output is complete: a command that fails above removes them.
    for path in &observed.written {
        eprintln!("memhc-synth: wrote {}", path.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
