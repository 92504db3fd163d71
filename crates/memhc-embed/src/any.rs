//! A hadron engine on any of the backends, whichever Rust type it is.

use hadron::Engine;
use memhc_host::HostBackend;

use crate::error::{EmbedError, Result};
use crate::options::{BackendName, Options};

/// An engine on one of the backends this build has.
#[derive(Debug)]
pub(crate) enum AnyEngine {
    /// The host reference backend.
    Host(Engine<HostBackend>),
    /// The NVIDIA backend.
    #[cfg(feature = "cuda")]
    Cuda(Engine<memhc_cuda::CudaBackend>),
    /// The AMD backend.
    #[cfg(feature = "rocm")]
    Rocm(Engine<memhc_hip::HipBackend>),
}

/// Runs `$body` with `$e` bound to the engine, whatever its backend.
macro_rules! with_engine {
    ($any:expr, $e:ident => $body:expr) => {
        match $any {
            $crate::any::AnyEngine::Host($e) => $body,
            #[cfg(feature = "cuda")]
            $crate::any::AnyEngine::Cuda($e) => $body,
            #[cfg(feature = "rocm")]
            $crate::any::AnyEngine::Rocm($e) => $body,
        }
    };
}
pub(crate) use with_engine;

impl AnyEngine {
    /// Opens the backend `options` names and a runtime on it.
    pub(crate) fn open(options: &Options) -> Result<Self> {
        let config = options.config()?;
        match options.backend {
            BackendName::Host => {
                let capacity = config.budget.unwrap_or(crate::options::DEFAULT_HOST_BUDGET);
                let rt = memhc_core::Runtime::new(HostBackend::new(capacity), config)?;
                Ok(AnyEngine::Host(Engine::new(rt)))
            }
            #[cfg(feature = "cuda")]
            BackendName::Cuda => {
                let backend = match config.budget {
                    Some(b) => memhc_cuda::CudaBackend::with_budget(b),
                    None => memhc_cuda::CudaBackend::new(),
                }?;
                let rt = memhc_core::Runtime::new(backend, config)?;
                Ok(AnyEngine::Cuda(Engine::new(rt)))
            }
            #[cfg(feature = "rocm")]
            BackendName::Rocm => {
                let backend = match config.budget {
                    Some(b) => memhc_hip::HipBackend::with_budget(b),
                    None => memhc_hip::HipBackend::new(),
                }?;
                let rt = memhc_core::Runtime::new(backend, config)?;
                Ok(AnyEngine::Rocm(Engine::new(rt)))
            }
            #[allow(unreachable_patterns)]
            other => Err(EmbedError::Unavailable(format!(
                "this build of memhc has no {0} backend; rebuild with the feature `{0}`",
                other.name()
            ))),
        }
    }
}
