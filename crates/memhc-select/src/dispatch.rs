//! The one generic dispatch: a job written once for any [`Backend`] runs on whichever one a
//! name chose.
//!
//! The backends are different Rust types (`HostBackend`, `ModelBackend`, `CudaBackend`,
//! `HipBackend`), so "the backend the user named" is not a type a caller can write. A caller
//! writes its work as a [`WithBackend`] job, generic over the backend, and [`dispatch`] opens
//! the chosen backend and hands it over; [`AnyBackend`] is the opened backend before the hand
//! over, for a caller that keeps it (the embedding layer's long-lived sessions).
//!
//! GPU backends are compiled in by this crate's features `cuda` and `rocm` and load their
//! libraries when opened: without a driver, a library or a device, opening is
//! [`SelectError::Open`] with the backend's one-line reason, never a panic.

use memhc_core::Backend;
use memhc_gpu::model::{ModelClock, ModelParams, ModelReport, model_backend_with};
use memhc_host::HostBackend;

/// The NVIDIA backend's type, for a caller that keeps an opened one (feature `cuda`).
#[cfg(feature = "cuda")]
pub use memhc_cuda::CudaBackend;
pub use memhc_gpu::model::ModelBackend;
/// The AMD backend's type, for a caller that keeps an opened one (feature `rocm`).
#[cfg(feature = "rocm")]
pub use memhc_hip::HipBackend;

use crate::backend::BackendChoice;
use crate::error::{Result, SelectError};

/// The host backend's device size when no budget is given: 1 GiB.
pub const DEFAULT_HOST_BUDGET: usize = 1 << 30;

/// Work to do on a backend, whichever it is.
pub trait WithBackend {
    /// What the work gives back.
    type Output;

    /// Does the work on `backend` (freshly opened; the job owns it).
    fn run<B: Backend>(self, backend: B) -> Self::Output;
}

/// Which GPU a GPU backend opens (the host and the model have one device).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Device {
    /// The first device (index 0).
    #[default]
    First,
    /// The device `local_rank mod devices`: one GPU per rank of a node, in turn.
    OfLocalRank(usize),
}

/// How to open a backend, besides which one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Open {
    /// Device bytes the runtime may hold. `None`: the device's free memory on a GPU,
    /// [`DEFAULT_HOST_BUDGET`] on the host, the modelled device's memory on the model.
    pub budget: Option<usize>,
    /// Which GPU.
    pub device: Device,
}

impl Open {
    /// The first device with a budget of `bytes`.
    pub fn budget(bytes: usize) -> Self {
        Open {
            budget: Some(bytes),
            device: Device::First,
        }
    }
}

/// An opened backend of any kind. `#[non_exhaustive]`: the GPU variants exist only with this
/// crate's features, so a `match` outside this crate ends in a wildcard arm (which is also
/// what keeps it compiling when Cargo unites features across packages).
#[derive(Debug)]
#[non_exhaustive]
pub enum AnyBackend {
    /// The host reference backend.
    Host(HostBackend),
    /// The modelled H100, and the clocks its report is read from after a run.
    Model(ModelBackend, ModelClock),
    /// The NVIDIA backend.
    #[cfg(feature = "cuda")]
    Cuda(memhc_cuda::CudaBackend),
    /// The AMD backend.
    #[cfg(feature = "rocm")]
    Rocm(memhc_hip::HipBackend),
}

/// What [`dispatch`] gives: the job's output, and the modelled makespan and floor when the
/// backend was the model.
#[derive(Clone, Debug, PartialEq)]
pub struct Ran<T> {
    /// What the job returned.
    pub output: T,
    /// The model's report, on the model backend only.
    pub model: Option<ModelReport>,
}

/// The index of the GPU `device` names among `devices`.
#[cfg(any(feature = "cuda", feature = "rocm"))]
fn gpu_options(
    device: Device,
    budget: Option<usize>,
    devices: impl FnOnce() -> std::result::Result<usize, memhc_core::BackendError>,
) -> Result<memhc_gpu::GpuOptions> {
    let index = match device {
        Device::First => 0,
        Device::OfLocalRank(r) => r % devices()?.max(1),
    };
    let options = memhc_gpu::GpuOptions::default()
        .device(index)
        .host_wait(crate::names::host_wait_from_env()?)
        .complex_gemm(crate::names::complex_gemm_from_env()?)
        .tiled(crate::names::tiled_copies_from_env()?);
    Ok(match budget {
        Some(b) => options.budget(b),
        None => options,
    })
}

impl AnyBackend {
    /// Opens the backend `choice` names, as `open` says.
    pub fn open(choice: BackendChoice, open: &Open) -> Result<Self> {
        match choice {
            BackendChoice::Host => Ok(AnyBackend::Host(HostBackend::new(
                open.budget.unwrap_or(DEFAULT_HOST_BUDGET),
            ))),
            BackendChoice::Model => {
                let params = ModelParams::from_env()?;
                let budget = open.budget.unwrap_or(params.device_memory);
                // With the options read by name (MEMHC_GPU_TILED, MEMHC_GPU_GEMM).
                let options = memhc_gpu::GpuOptions::default()
                    .budget(budget)
                    .tiled(crate::names::tiled_copies_from_env()?)
                    .complex_gemm(crate::names::complex_gemm_from_env()?);
                let (backend, clock) = model_backend_with(params, options)?;
                Ok(AnyBackend::Model(backend, clock))
            }
            #[cfg(feature = "cuda")]
            BackendChoice::Cuda => {
                let options = gpu_options(open.device, open.budget, || {
                    memhc_cuda::probe().map(|p| p.devices)
                })?;
                Ok(AnyBackend::Cuda(memhc_cuda::CudaBackend::with_options(
                    options,
                )?))
            }
            #[cfg(feature = "rocm")]
            BackendChoice::Rocm => {
                let options = gpu_options(open.device, open.budget, || {
                    memhc_hip::probe().map(|p| p.devices)
                })?;
                Ok(AnyBackend::Rocm(memhc_hip::HipBackend::with_options(
                    options,
                )?))
            }
            #[allow(unreachable_patterns)]
            other => Err(SelectError::NotBuilt {
                backend: other.name(),
                package: "memhc-select",
            }),
        }
    }

    /// Which backend this is.
    pub fn choice(&self) -> BackendChoice {
        match self {
            AnyBackend::Host(_) => BackendChoice::Host,
            AnyBackend::Model(..) => BackendChoice::Model,
            #[cfg(feature = "cuda")]
            AnyBackend::Cuda(_) => BackendChoice::Cuda,
            #[cfg(feature = "rocm")]
            AnyBackend::Rocm(_) => BackendChoice::Rocm,
        }
    }

    /// Runs `job` on this backend; with the model, reads its report after the job.
    pub fn run<J: WithBackend>(self, job: J) -> Ran<J::Output> {
        match self {
            AnyBackend::Host(b) => Ran {
                output: job.run(b),
                model: None,
            },
            AnyBackend::Model(b, clock) => {
                let output = job.run(b);
                Ran {
                    output,
                    model: Some(clock.report()),
                }
            }
            #[cfg(feature = "cuda")]
            AnyBackend::Cuda(b) => Ran {
                output: job.run(b),
                model: None,
            },
            #[cfg(feature = "rocm")]
            AnyBackend::Rocm(b) => Ran {
                output: job.run(b),
                model: None,
            },
        }
    }
}

/// Opens the backend `choice` names, as `open` says, and runs `job` on it.
pub fn dispatch<J: WithBackend>(
    choice: BackendChoice,
    open: &Open,
    job: J,
) -> Result<Ran<J::Output>> {
    Ok(AnyBackend::open(choice, open)?.run(job))
}

/// Checks, before any work, that the backend can open here: the host and the model always
/// can; a GPU backend needs its driver and libraries and a device (its `probe`), and says
/// in one line what is missing.
pub fn check(choice: BackendChoice) -> Result<()> {
    match choice {
        BackendChoice::Host | BackendChoice::Model => Ok(()),
        #[cfg(feature = "cuda")]
        BackendChoice::Cuda => memhc_cuda::probe().map(drop).map_err(SelectError::from),
        #[cfg(feature = "rocm")]
        BackendChoice::Rocm => memhc_hip::probe().map(drop).map_err(SelectError::from),
        #[allow(unreachable_patterns)]
        other => Err(SelectError::NotBuilt {
            backend: other.name(),
            package: "memhc-select",
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The name and budget of the backend a job was handed.
    struct Describe;

    impl WithBackend for Describe {
        type Output = (String, usize);

        fn run<B: Backend>(self, backend: B) -> (String, usize) {
            let total = backend.mem_info().map(|m| m.total).unwrap_or(0);
            (backend.name(), total)
        }
    }

    #[test]
    fn the_host_gets_its_budget_or_one_gib() -> Result<()> {
        let ran = dispatch(BackendChoice::Host, &Open::budget(4096), Describe)?;
        assert_eq!(ran.output.1, 4096);
        assert_eq!(ran.model, None);
        let ran = dispatch(BackendChoice::Host, &Open::default(), Describe)?;
        assert_eq!(ran.output.1, 1 << 30);
        Ok(())
    }

    #[test]
    fn the_model_reports_its_clocks() -> Result<()> {
        let ran = dispatch(BackendChoice::Model, &Open::budget(1 << 20), Describe)?;
        assert_eq!(ran.output.1, 1 << 20);
        let report = ran.model.map(|r| r.makespan_s);
        assert!(report.is_some_and(|s| s >= 0.0), "{report:?}");
        assert_eq!(
            AnyBackend::open(BackendChoice::Model, &Open::default())?.choice(),
            BackendChoice::Model
        );
        assert!(check(BackendChoice::Model).is_ok() && check(BackendChoice::Host).is_ok());
        Ok(())
    }

    #[test]
    fn a_gpu_without_hardware_is_one_line() {
        // Without a GPU (CI) opening says why in one line; with one, it opens.
        for gpu in [BackendChoice::Cuda, BackendChoice::Rocm] {
            if let Err(e) = dispatch(gpu, &Open::budget(1 << 20), Describe) {
                let text = e.to_string();
                assert!(!text.is_empty() && !text.contains('\n'), "{text}");
                assert!(check(gpu).is_err());
            }
        }
    }
}
