//! Backends by name: `host`, `model`, `cuda`, `rocm`, and what a program was built with.

use std::fmt;
use std::str::FromStr;

use crate::error::{Result, SelectError};

/// A backend, as a command line, a C struct or a Python keyword names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BackendChoice {
    /// `host`: the host reference backend; the CPU plays a device of the budget's bytes.
    Host,
    /// `model`: the modelled H100 (`memhc_gpu::model`): no data, modelled time.
    Model,
    /// `cuda`: the NVIDIA backend (its libraries are loaded at run time).
    Cuda,
    /// `rocm`: the AMD backend (HIP and rocBLAS, loaded at run time).
    Rocm,
}

impl BackendChoice {
    /// Every backend, in the order messages list them.
    pub const ALL: [BackendChoice; 4] = [
        BackendChoice::Host,
        BackendChoice::Model,
        BackendChoice::Cuda,
        BackendChoice::Rocm,
    ];

    /// The name used on command lines, in C and Python, in unit specs and in records.
    pub fn name(self) -> &'static str {
        match self {
            BackendChoice::Host => "host",
            BackendChoice::Model => "model",
            BackendChoice::Cuda => "cuda",
            BackendChoice::Rocm => "rocm",
        }
    }

    /// Whether runs on it compute values (every backend but the model, whose runs only take
    /// modelled time).
    pub fn has_data(self) -> bool {
        self != BackendChoice::Model
    }

    /// Whether it is a GPU backend, built in by a feature of its name.
    pub fn is_gpu(self) -> bool {
        matches!(self, BackendChoice::Cuda | BackendChoice::Rocm)
    }
}

impl fmt::Display for BackendChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for BackendChoice {
    type Err = SelectError;

    /// Reads `host`, `model`, `cuda` or `rocm` (exactly: these are the names records carry),
    /// whether or not this build has it; [`Build::choose`] checks that too.
    fn from_str(s: &str) -> Result<Self> {
        BackendChoice::ALL
            .into_iter()
            .find(|b| b.name() == s)
            .ok_or_else(|| SelectError::UnknownBackend(s.to_owned()))
    }
}

/// What a program was built with: which GPU backends (its own features `cuda` and `rocm`,
/// which turn on this crate's), and the package to rebuild for another.
///
/// The program says, not this crate: when several packages are built together Cargo unites
/// their features, so this crate may have a backend the program was built without, and the
/// program's own refusal (with its own rebuild line) is the one its users should see.
///
/// ```
/// use memhc_select::{BackendChoice, Build};
///
/// const BUILD: Build = Build { package: "memhc-cli", cuda: false, rocm: false };
/// assert_eq!(BUILD.choose("host").ok(), Some(BackendChoice::Host));
/// let e = BUILD.choose("cuda").err().map(|e| e.to_string()).unwrap_or_default();
/// assert!(e.contains("--features cuda") && e.contains("-p memhc-cli"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Build {
    /// The package to rebuild (`memhc-cli`, `memhc-synth`, `memhc-embed`).
    pub package: &'static str,
    /// Built with `cuda`.
    pub cuda: bool,
    /// Built with `rocm`.
    pub rocm: bool,
}

impl Build {
    /// Whether this program can run `choice` (the host and the model always).
    pub fn has(&self, choice: BackendChoice) -> bool {
        match choice {
            BackendChoice::Host | BackendChoice::Model => true,
            BackendChoice::Cuda => self.cuda,
            BackendChoice::Rocm => self.rocm,
        }
    }

    /// Refuses a backend this program was built without, saying how to rebuild it.
    pub fn check(&self, choice: BackendChoice) -> Result<BackendChoice> {
        match self.has(choice) {
            true => Ok(choice),
            false => Err(SelectError::NotBuilt {
                backend: choice.name(),
                package: self.package,
            }),
        }
    }

    /// The backend `name` names, if this program has it.
    pub fn choose(&self, name: &str) -> Result<BackendChoice> {
        self.check(name.parse()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NONE: Build = Build {
        package: "memhc-synth",
        cuda: false,
        rocm: false,
    };

    #[test]
    fn every_name_reads_back() {
        for (name, want) in [
            ("host", BackendChoice::Host),
            ("model", BackendChoice::Model),
            ("cuda", BackendChoice::Cuda),
            ("rocm", BackendChoice::Rocm),
        ] {
            assert_eq!(name.parse::<BackendChoice>(), Ok(want));
            assert_eq!(want.name(), name);
            assert_eq!(want.to_string(), name);
        }
        for bad in ["tpu", "Host", " host", "hip", ""] {
            assert_eq!(
                bad.parse::<BackendChoice>(),
                Err(SelectError::UnknownBackend(bad.to_owned()))
            );
        }
        assert_eq!(
            "tpu".parse::<BackendChoice>().err().map(|e| e.to_string()),
            Some("unknown backend 'tpu' (host, model, cuda or rocm)".to_owned())
        );
    }

    #[test]
    fn a_program_refuses_what_it_was_built_without() {
        assert_eq!(NONE.choose("host"), Ok(BackendChoice::Host));
        assert_eq!(NONE.choose("model"), Ok(BackendChoice::Model));
        assert_eq!(
            NONE.choose("rocm").err().map(|e| e.to_string()),
            Some(
                "this build has no rocm backend; rebuild with `--features rocm` \
                 (cargo build --release -p memhc-synth --features rocm)"
                    .to_owned()
            )
        );
        let both = Build {
            cuda: true,
            rocm: true,
            ..NONE
        };
        assert_eq!(both.choose("cuda"), Ok(BackendChoice::Cuda));
        assert_eq!(both.choose("rocm"), Ok(BackendChoice::Rocm));
        assert!(matches!(
            both.choose("tpu"),
            Err(SelectError::UnknownBackend(_))
        ));
    }
}
