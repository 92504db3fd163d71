//! A hadron engine on any of the backends, whichever Rust type it is.

use hadron::Engine;
use memhc_core::Runtime;
use memhc_host::HostBackend;
use memhc_select::{AnyBackend, Build, Device, Open, SelectError};

use crate::error::{EmbedError, Result};
use crate::options::Options;

/// An engine on one of the backends this build has.
#[derive(Debug)]
pub(crate) enum AnyEngine {
    /// The host reference backend.
    Host(Engine<HostBackend>),
    /// The NVIDIA backend.
    #[cfg(feature = "cuda")]
    Cuda(Engine<memhc_select::dispatch::CudaBackend>),
    /// The AMD backend.
    #[cfg(feature = "rocm")]
    Rocm(Engine<memhc_select::dispatch::HipBackend>),
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

/// The GPU backends this build of `memhc-embed` (and so of the C library and the Python
/// module) has.
const BUILD: Build = Build {
    package: "memhc-embed",
    cuda: cfg!(feature = "cuda"),
    rocm: cfg!(feature = "rocm"),
};

impl AnyEngine {
    /// Opens the backend `options` names (through `memhc-select`, which opens every backend)
    /// and a runtime on it. A backend this build lacks, or one without data (the model), is
    /// [`EmbedError::Unavailable`].
    pub(crate) fn open(options: &Options) -> Result<Self> {
        let config = options.config()?;
        let choice = BUILD.check(options.backend)?;
        if !choice.has_data() {
            return Err(SelectError::NoData(choice.name()).into());
        }
        let open = Open {
            budget: config.budget,
            device: Device::First,
        };
        Ok(match AnyBackend::open(choice, &open)? {
            AnyBackend::Host(b) => AnyEngine::Host(Engine::new(Runtime::new(b, config)?)),
            #[cfg(feature = "cuda")]
            AnyBackend::Cuda(b) => AnyEngine::Cuda(Engine::new(Runtime::new(b, config)?)),
            #[cfg(feature = "rocm")]
            AnyBackend::Rocm(b) => AnyEngine::Rocm(Engine::new(Runtime::new(b, config)?)),
            other => {
                return Err(EmbedError::Unavailable(format!(
                    "the {} backend cannot hold a session",
                    other.choice()
                )));
            }
        })
    }
}
