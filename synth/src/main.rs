//! `memhc-synth`: see `memhc_synth::app`.

/// With the `mimalloc` feature (the default), mimalloc is the process's allocator (see the
/// feature's note in Cargo.toml); without it, the system's.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    memhc_synth::app::main(std::env::args_os())
}
