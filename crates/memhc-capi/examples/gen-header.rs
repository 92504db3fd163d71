//! Regenerates `include/memhc.h` from this crate with cbindgen (the configuration is
//! `crates/memhc-capi/cbindgen.toml`): `cargo run -p memhc-capi --example gen-header`.

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = crate_dir.join("../..").join(memhc_capi::HEADER_PATH);
    let config = match cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("gen-header: {e}");
            return ExitCode::FAILURE;
        }
    };
    match cbindgen::generate_with_config(crate_dir, config) {
        Ok(bindings) => {
            bindings.write_to_file(&out);
            println!("wrote {}", out.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("gen-header: {e}");
            ExitCode::FAILURE
        }
    }
}
