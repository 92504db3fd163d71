//! The committed `include/memhc.h` is what cbindgen generates from this crate now.

use std::path::Path;

#[test]
fn header_is_current() -> Result<(), Box<dyn std::error::Error>> {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = crate_dir.join("../..").join(memhc_capi::HEADER_PATH);
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml"))?;
    let mut fresh = Vec::new();
    cbindgen::generate_with_config(crate_dir, config)?.write(&mut fresh);
    let fresh = String::from_utf8(fresh)?;
    if std::env::var_os("MEMHC_BLESS").is_some() {
        std::fs::write(&path, &fresh)?;
        return Ok(());
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == fresh,
        "include/memhc.h is stale (or missing): the C API changed. Regenerate it with\n    \
         cargo run -p memhc-capi --example gen-header\nor MEMHC_BLESS=1 cargo test -p memhc-capi \
         --test header, and commit it."
    );
    Ok(())
}

/// The README's C example is `examples/c/demo.c`, which CI compiles and runs.
#[test]
fn readme_c_example_is_the_one_ci_runs() -> Result<(), Box<dyn std::error::Error>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md"))?;
    let demo = std::fs::read_to_string(root.join("examples/c/demo.c"))?;
    let start = readme
        .find("```c\n#include <memhc.h>")
        .ok_or("README.md has no C example")?
        + "```c\n".len();
    let len = readme[start..]
        .find("```")
        .ok_or("unterminated C example")?;
    assert!(
        demo.contains(&readme[start..start + len]),
        "the C example of README.md and examples/c/demo.c differ: keep them equal"
    );
    Ok(())
}

/// The README's C correlator example is the marked block of `examples/c/corr.c`, which CI
/// compiles and runs.
#[test]
fn readme_c_correlator_example_is_the_one_ci_runs() -> Result<(), Box<dyn std::error::Error>> {
    readme_block_is_in("examples/c/corr.c")
}

/// The README's C example of page-locked buffers is the marked block of
/// `examples/c/pinned.c`, which CI compiles and runs (under valgrind too).
#[test]
fn readme_c_pinned_example_is_the_one_ci_runs() -> Result<(), Box<dyn std::error::Error>> {
    readme_block_is_in("examples/c/pinned.c")
}

/// The block between the two `/* README */` lines of the C file `example` is in README.md.
fn readme_block_is_in(example: &str) -> Result<(), Box<dyn std::error::Error>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md"))?;
    let name = example;
    let example = std::fs::read_to_string(root.join(example))?;
    let marker = "    /* README */\n";
    let start = example
        .find(marker)
        .ok_or_else(|| format!("{name} has no README marker"))?
        + marker.len();
    let len = example[start..]
        .find(marker)
        .ok_or_else(|| format!("{name} has one README marker, not two"))?;
    assert!(
        readme.contains(&example[start..start + len]),
        "the C example of README.md and the README block of {name} differ: keep them equal"
    );
    Ok(())
}
