//! Correlator files: load and plan a `memhc-corr/1` file (`docs/correlator-format.md`), run
//! it on the backend an [`Options`] names, read the correlators, write them.
//!
//! [`CorrRun`] is a file loaded and planned once ([`CorrRun::open`]); each
//! [`CorrRun::run`] opens a fresh runtime on the backend the options name, runs the whole plan
//! on it and returns the [`CorrResults`]: the correlators by name, each a list of
//! `(source, sink)` time pairs with one complex value each, in the file's order.
//! [`CorrRun::reference`] computes the same values with the independent dense reference
//! (`memhc_corr::reference::correlators`: plain products and traces, graph by graph, no
//! sharing, no runtime), and [`CorrRun::verify`] compares a run against it.

use std::path::{Path, PathBuf};

use memhc_core::{Complex64, Stats};
use memhc_corr::{
    CheckedFile, CorrelatorValues, Correlators, OutputForm, Plan, PlanOptions, Value,
};

use crate::any::{AnyEngine, with_engine};
use crate::error::{EmbedError, Result};
use crate::options::{BackendChoice, Options};

pub use memhc_corr::{Order, PlanReport};

/// The relative tolerance of [`CorrRun::verify`]: `1e-12`, as `memhc run --verify`.
pub const VERIFY_TOLERANCE: f64 = 1e-12;

/// How a correlator file is planned (`memhc_corr::PlanOptions`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CorrOptions {
    /// Share identical partial products and traces across all loops, graphs and time pairs
    /// (`false`: every loop on its own, as `memhc run --no-sharing`).
    pub sharing: bool,
    /// The order of the work: the planner's ([`Order::Planned`]) or the file's.
    pub order: Order,
    /// At most this many contractions per vector (stage); at least 1.
    pub vector_size: usize,
}

impl Default for CorrOptions {
    /// Sharing on, the planner's order, vectors of up to 16 (as `memhc run`).
    fn default() -> Self {
        CorrOptions {
            sharing: true,
            order: Order::Planned,
            vector_size: 16,
        }
    }
}

impl CorrOptions {
    /// The planner's options (validated: a vector size of 0 is refused).
    pub fn plan_options(&self) -> Result<PlanOptions> {
        if self.vector_size == 0 {
            return Err(EmbedError::InvalidArgument(
                "a vector size of 0: vectors hold at least one contraction".into(),
            ));
        }
        Ok(PlanOptions {
            sharing: self.sharing,
            order: self.order,
            vector_size: self.vector_size,
        })
    }
}

/// Loads and plans the correlator file at `path` with the default [`CorrOptions`].
pub fn load_correlators(path: impl AsRef<Path>) -> Result<CorrRun> {
    CorrRun::open(path, &CorrOptions::default())
}

/// A correlator file, loaded (node data included) and planned. See the
/// [module documentation](self).
///
/// It holds no runtime: every [`CorrRun::run`] opens its own, so one `CorrRun` may run many
/// times, on several backends, from several threads at once (it is `Sync`).
#[derive(Debug)]
pub struct CorrRun {
    path: PathBuf,
    plan: Plan,
}

impl CorrRun {
    /// Reads the file at `path`, checks it (node data files beside it included) and plans it
    /// as `options` say. A file that cannot be read is [`ErrorKind::Io`](crate::ErrorKind::Io);
    /// one that is not valid `memhc-corr/1` (or whose node data is missing or malformed) is
    /// [`ErrorKind::InvalidFile`](crate::ErrorKind::InvalidFile), with one line naming the
    /// file and the place (graph, loop, node).
    pub fn open(path: impl AsRef<Path>, options: &CorrOptions) -> Result<Self> {
        let path = path.as_ref();
        let plan_options = options.plan_options()?;
        let checked = memhc_corr::load(path)?;
        let plan = memhc_corr::plan(&checked, &plan_options)?;
        Ok(CorrRun {
            path: path.to_path_buf(),
            plan,
        })
    }

    /// The file this was loaded from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The planner's report: contractions before and after sharing, traces, flops, stages,
    /// the initial nodes' bytes, and the peak of live bytes (the smallest budget under which
    /// a run evicts nothing).
    pub fn plan_report(&self) -> &PlanReport {
        &self.plan.report
    }

    /// The checked: nodes, graphs and correlators as checked.
    pub fn checked(&self) -> &CheckedFile {
        &self.plan.checked
    }

    /// The names of the correlators, in file order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.plan
            .checked
            .correlators
            .iter()
            .map(|c| c.name.as_str())
    }

    /// The device budget a run with `options` gets: `options.budget` when given; otherwise
    /// on the host backend the plan's peak of live bytes ([`PlanReport::peak_bytes`], as
    /// `memhc run` does: no eviction needed), and on a GPU `None` (the device's free memory).
    pub fn budget_for(&self, options: &Options) -> Result<Option<usize>> {
        match (options.budget, options.backend) {
            (Some(b), _) => Ok(Some(b)),
            (None, BackendChoice::Host) => {
                let peak = self.plan.report.peak_bytes.max(1);
                usize::try_from(peak).map(Some).map_err(|_| {
                    EmbedError::InvalidArgument(format!(
                        "the plan's peak of {peak} bytes does not fit this machine's address space"
                    ))
                })
            }
            (None, _) => Ok(None),
        }
    }

    /// Runs the whole plan on a fresh runtime on the backend `options` name, under its policy,
    /// mode and streams, and returns the correlators. The budget is
    /// [`CorrRun::budget_for`]: `options.budget`, or with `None` the plan's peak on the host
    /// backend (not [`DEFAULT_HOST_BUDGET`](crate::options::DEFAULT_HOST_BUDGET)) and the
    /// device's free memory on a GPU. The runtime is dropped before this returns (its
    /// statistics are kept in [`CorrResults::stats`]).
    ///
    /// Before anything is made the run is admitted ([`memhc_corr::admit_run`]): a budget
    /// smaller than the plan's largest step is [`ErrorKind::DoesNotFit`](crate::ErrorKind),
    /// values the host cannot hold [`ErrorKind::OutOfHostMemory`](crate::ErrorKind).
    pub fn run(&self, options: &Options) -> Result<CorrResults> {
        let mut options = options.clone();
        options.budget = self.budget_for(&options)?;
        let host_device = options.backend == BackendChoice::Host;
        if let Some(budget) = options.budget {
            memhc_corr::admit_run(&self.plan, budget as u64, host_device)?;
        }
        let mut engine = AnyEngine::open(&options)?;
        if options.budget.is_none() {
            // A GPU's budget is its free memory, known once it is open.
            let budget = with_engine!(&engine, e => e.runtime().budget());
            memhc_corr::admit_run(&self.plan, budget as u64, host_device)?;
        }
        let (values, stats) = with_engine!(&mut engine, e => {
            let pinned = options.host_memory.is_pinned();
            let values = memhc_corr::run_with(&self.plan, e, pinned, &mut |_| {})?;
            e.runtime_mut().synchronize()?;
            (values, e.runtime().stats())
        });
        Ok(CorrResults {
            values,
            stats: Some(stats),
        })
    }

    /// The correlators computed by the independent dense reference
    /// (`memhc_corr::reference::correlators`: every graph on its own, by plain products and
    /// traces on the host; no planner, no sharing, no runtime). Slow for large files.
    pub fn reference(&self) -> Result<CorrResults> {
        Ok(CorrResults {
            values: memhc_corr::reference::correlators(&self.plan.checked)?,
            stats: None,
        })
    }

    /// Compares `results` with [`CorrRun::reference`] and returns the largest relative error
    /// over all values ([`CorrResults::max_relative_error`]); above [`VERIFY_TOLERANCE`] it is
    /// [`ErrorKind::VerifyFailed`](crate::ErrorKind::VerifyFailed).
    pub fn verify(&self, results: &CorrResults) -> Result<f64> {
        let reference = self.reference()?;
        let err = results.max_relative_error(&reference);
        if err > VERIFY_TOLERANCE {
            return Err(EmbedError::VerifyFailed(format!(
                "{}: the correlators differ from the dense reference by {err:e} relative \
                 (more than {VERIFY_TOLERANCE:e})",
                self.path.display()
            )));
        }
        Ok(err)
    }
}

/// The correlators of one run (or of the reference): owned values, independent of the
/// [`CorrRun`] and the runtime that made them.
#[derive(Clone, Debug, PartialEq)]
pub struct CorrResults {
    values: Correlators,
    stats: Option<Stats>,
}

impl CorrResults {
    /// The number of correlators.
    pub fn len(&self) -> usize {
        self.values.correlators.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.values.correlators.is_empty()
    }

    /// Correlator `i` (file order), or [`ErrorKind::InvalidArgument`](crate::ErrorKind) when
    /// `i` is not below [`CorrResults::len`].
    pub fn correlator(&self, i: usize) -> Result<&CorrelatorValues> {
        self.values.correlators.get(i).ok_or_else(|| {
            EmbedError::InvalidArgument(format!(
                "correlator index {i} is out of range: there are {}",
                self.len()
            ))
        })
    }

    /// The name of correlator `i`.
    pub fn name(&self, i: usize) -> Result<&str> {
        Ok(&self.correlator(i)?.name)
    }

    /// The names, in file order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.values.correlators.iter().map(|c| c.name.as_str())
    }

    /// The index of the correlator called `name`, if there is one.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.values.correlators.iter().position(|c| c.name == name)
    }

    /// The `(source, sink)` time pairs of correlator `i`, in the file's order.
    pub fn times(&self, i: usize) -> Result<Vec<(u32, u32)>> {
        Ok(self
            .correlator(i)?
            .values
            .iter()
            .map(|v| (v.source, v.sink))
            .collect())
    }

    /// The values of correlator `i`, one per time pair of [`CorrResults::times`].
    pub fn values(&self, i: usize) -> Result<Vec<Complex64>> {
        Ok(self
            .correlator(i)?
            .values
            .iter()
            .map(Value::complex)
            .collect())
    }

    /// All correlators with their metadata, as `memhc_corr` writes them.
    pub fn correlators(&self) -> &Correlators {
        &self.values
    }

    /// The runtime's statistics at the end of the run; `None` for the reference.
    pub fn stats(&self) -> Option<&Stats> {
        self.stats.as_ref()
    }

    /// The largest `|x − y| / |y|` (`|x − y|` where `y` is 0) over all values against
    /// `other`; infinite when the two do not have the same correlators and time pairs.
    pub fn max_relative_error(&self, other: &CorrResults) -> f64 {
        self.values.max_relative_error(&other.values)
    }

    /// Writes the correlators to `path` in the form its extension names
    /// (`docs/correlator-format.md`, section Results): `.json` (`memhc-corr-values/1`),
    /// `.csv` (`correlator,source,sink,re,im`), or `.h5`/`.hdf5` in a build with the feature
    /// `hdf5` ([`ErrorKind::Unavailable`](crate::ErrorKind::Unavailable) without it). Another
    /// extension is [`ErrorKind::InvalidArgument`](crate::ErrorKind::InvalidArgument); a file
    /// that cannot be written [`ErrorKind::Io`](crate::ErrorKind::Io).
    pub fn write(&self, path: impl AsRef<Path>) -> Result<()> {
        Ok(self.values.write(path.as_ref())?)
    }
}

/// Checks that [`CorrResults::write`] can write the form `path`'s extension names in this
/// build, without writing anything: call it before a run so that a bad output path does not
/// cost one.
pub fn check_output_path(path: impl AsRef<Path>) -> Result<()> {
    OutputForm::of(path.as_ref()).map(drop).map_err(Into::into)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ErrorKind, HostMemoryKind};
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// The example at the top of `docs/correlator-format.md`, whose value the page gives
    /// (computed outside memhc).
    const DOC_EXAMPLE: &str = r#"{
      "format": "memhc-corr/1",
      "nodes": [
        {"id": "a", "spins": 16, "dims": [1, 1], "time": 0, "data": {"seed": 1}},
        {"id": "b", "spins": 16, "dims": [1, 1], "time": 3, "data": {"seed": 2}},
        {"id": "c", "spins": 16, "dims": [1, 1], "time": 3, "data": {"seed": 3}}
      ],
      "graphs": [
        {"id": "g0", "loops": [{"nodes": ["a", "b"]}]},
        {"id": "g1", "coefficient": [0.5, 0.0], "loops": [{"nodes": ["a", "b", "c"]}]},
        {"id": "g2", "coefficient": [-1.0, 0.0], "loops": [{"nodes": ["a"]}, {"nodes": ["c"]}]}
      ],
      "correlators": [
        {"name": "C_pi_pi", "times": [{"source": 0, "sink": 3, "graphs": ["g0", "g1", "g2"]}]}
      ]
    }"#;

    /// A fresh directory under the system's temporary directory.
    fn scratch() -> PathBuf {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "memhc-embed-corr-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        assert!(std::fs::create_dir_all(&dir).is_ok());
        dir
    }

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        assert!(std::fs::write(&p, text).is_ok());
        p
    }

    fn pion() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/data/pion.corr.json")
    }

    fn kind<T>(r: Result<T>) -> Option<ErrorKind> {
        r.err().map(|e| e.kind())
    }

    #[test]
    fn the_documented_example_gives_the_documented_value() -> Result<()> {
        let dir = scratch();
        let run = load_correlators(write(&dir, "doc.json", DOC_EXAMPLE))?;
        let got = run.run(&Options::default())?;
        assert_eq!(got.len(), 1);
        assert_eq!(got.name(0)?, "C_pi_pi");
        assert_eq!(got.times(0)?, vec![(0, 3)]);
        let want = Complex64::new(1.799883872368158, 5.709077811681285);
        let v = got.values(0)?[0];
        assert!((v - want).norm() <= 1e-12 * want.norm(), "{v}");
        assert!(run.verify(&got)? <= VERIFY_TOLERANCE);
        let _ = std::fs::remove_dir_all(dir);
        Ok(())
    }

    #[test]
    fn the_example_file_matches_the_reference_under_every_option() -> Result<()> {
        let reference = load_correlators(pion())?.reference()?;
        assert_eq!(
            reference.names().collect::<Vec<_>>(),
            ["C_pi_pi", "C_pi_3pt"]
        );
        assert_eq!(reference.times(0)?, vec![(0, 2), (0, 3)]);
        assert_eq!(reference.find("C_pi_3pt"), Some(1));
        assert_eq!(reference.find("nope"), None);
        assert!(reference.stats().is_none());
        for sharing in [true, false] {
            for order in [Order::Planned, Order::File] {
                let opts = CorrOptions {
                    sharing,
                    order,
                    vector_size: 2,
                };
                let run = CorrRun::open(pion(), &opts)?;
                let report = run.plan_report();
                assert_eq!(report.sharing, sharing);
                assert_eq!(report.traces, 6); // two-node, one-node (x2), three- and four-node loops
                assert!(report.contractions <= report.contractions_without_sharing);
                assert_eq!(report.contractions_without_sharing, 1 + 2); // k - 2 per loop
                assert!(report.flops > 0 && report.peak_bytes > 0);
                let direct = [
                    (HostMemoryKind::Pageable, None),
                    (HostMemoryKind::Pinned, Some(6)),
                ];
                for (policy, budget) in [("lru", None), ("belady", Some(report.node_bytes))] {
                    for (host_memory, prefetch) in direct {
                        let mut o = Options::from_names(None, None, Some(policy), None)?
                            .with_prefetch(prefetch)?;
                        o.budget = budget.map(|b| b as usize);
                        o.streams = 2;
                        o.host_memory = host_memory;
                        let got = run.run(&o)?;
                        let err = got.max_relative_error(&reference);
                        let what = format!("{sharing} {order:?} {policy} {host_memory}");
                        assert!(err <= 1e-12, "{what}: {err:e}");
                        assert!(run.verify(&got)? <= 1e-12);
                        let stats = got.stats().map(|s| s.flops).unwrap_or(0);
                        assert!(stats > 0);
                    }
                }
            }
        }
        Ok(())
    }

    #[test]
    fn a_host_run_without_a_budget_gets_the_plans_peak() -> Result<()> {
        let run = load_correlators(pion())?;
        let peak = run.plan_report().peak_bytes as usize;
        assert_eq!(run.budget_for(&Options::default())?, Some(peak));
        assert_eq!(run.budget_for(&Options::host(4096))?, Some(4096));
        let gpu = Options {
            backend: BackendChoice::Cuda,
            ..Options::default()
        };
        assert_eq!(run.budget_for(&gpu)?, None);
        let got = run.run(&Options::default())?;
        assert_eq!(got.stats().map(|s| s.evictions), Some(0));
        Ok(())
    }

    #[test]
    fn results_are_written_by_extension() -> Result<()> {
        let dir = scratch();
        let got = load_correlators(pion())?.run(&Options::default())?;
        got.write(dir.join("c.json"))?;
        got.write(dir.join("c.csv"))?;
        let csv = std::fs::read_to_string(dir.join("c.csv")).unwrap_or_default();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.first(), Some(&"correlator,source,sink,re,im"));
        assert_eq!(lines.len(), 4);
        let v = got.values(0)?[1];
        assert_eq!(lines[2], format!("C_pi_pi,0,3,{},{}", v.re, v.im));
        let json = std::fs::read_to_string(dir.join("c.json")).unwrap_or_default();
        assert!(json.contains("memhc-corr-values/1") && json.contains("C_pi_3pt"));
        assert_eq!(
            kind(got.write(dir.join("c.txt"))),
            Some(ErrorKind::InvalidArgument)
        );
        assert_eq!(
            kind(check_output_path("c.txt")),
            Some(ErrorKind::InvalidArgument)
        );
        assert!(check_output_path("c.csv").is_ok() && !dir.join("c.txt").exists());
        if !cfg!(feature = "hdf5") {
            let e = got.write(dir.join("c.h5")).err();
            assert_eq!(e.as_ref().map(|e| e.kind()), Some(ErrorKind::Unavailable));
            assert!(
                e.map(|e| e.to_string())
                    .unwrap_or_default()
                    .contains("hdf5")
            );
        }
        assert_eq!(
            kind(got.write(dir.join("no/such/dir/c.json"))),
            Some(ErrorKind::Io)
        );
        assert_eq!(kind(got.values(2)), Some(ErrorKind::InvalidArgument));
        let _ = std::fs::remove_dir_all(dir);
        Ok(())
    }

    #[test]
    fn bad_files_are_typed_one_line_errors() -> Result<()> {
        let dir = scratch();
        let missing = load_correlators(dir.join("absent.json")).err();
        assert_eq!(missing.as_ref().map(|e| e.kind()), Some(ErrorKind::Io));
        let bad = DOC_EXAMPLE.replace(r#"["a", "b", "c"]"#, r#"["a", "b", "x"]"#);
        let e = load_correlators(write(&dir, "bad.json", &bad)).err();
        assert_eq!(e.as_ref().map(|e| e.kind()), Some(ErrorKind::InvalidFile));
        let line = e.map(|e| e.to_string()).unwrap_or_default();
        assert!(
            line.contains("bad.json: graph g1, loop 0") && line.contains("unknown node \"x\""),
            "{line}"
        );
        assert!(!line.contains('\n'));
        let e = load_correlators(write(&dir, "broken.json", "{\"format\": ")).err();
        assert_eq!(e.map(|e| e.kind()), Some(ErrorKind::InvalidFile));
        let npy = DOC_EXAMPLE.replace(r#"{"seed": 3}"#, r#"{"npy": "c.npy"}"#);
        let e = load_correlators(write(&dir, "npy.json", &npy)).err();
        assert_eq!(e.as_ref().map(|e| e.kind()), Some(ErrorKind::InvalidFile));
        assert!(
            e.map(|e| e.to_string())
                .unwrap_or_default()
                .contains("node c")
        );
        let zero = CorrOptions {
            vector_size: 0,
            ..CorrOptions::default()
        };
        assert_eq!(
            kind(CorrRun::open(pion(), &zero)),
            Some(ErrorKind::InvalidArgument)
        );
        // A budget below one contraction's working set does not fit: its own kind.
        let run = load_correlators(pion())?;
        assert_eq!(
            kind(run.run(&Options::host(1024))),
            Some(ErrorKind::DoesNotFit)
        );
        let _ = std::fs::remove_dir_all(dir);
        Ok(())
    }
}
