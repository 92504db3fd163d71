//! `memhc-synth`: see `memhc_synth::app`.

fn main() -> std::process::ExitCode {
    memhc_synth::app::main(std::env::args_os())
}
