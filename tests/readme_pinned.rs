//! The README's Rust example of page-locked buffers ("Page-locked buffers from Rust, C and
//! Python"), run: the block between the two `// README` lines below is the README's (a test
//! checks that they are equal), and its values are checked against plain arithmetic.

use std::sync::Arc;

use memhc::backend::host::HostBackend;
use memhc::hadron::{Contraction, Engine, NodeShape, SpinMapping};
use memhc::{Complex64, Config, Runtime};

#[test]
fn the_readme_example_runs() -> Result<(), Box<dyn std::error::Error>> {
    let backend = HostBackend::new(64 << 20);
    // README
    let config = Config::default().with_direct_host(true); // results land page-locked too
    let mut engine = Engine::new(Runtime::new(backend, config)?);
    let shape = NodeShape::meson(8)?; // 16 spins of 8 x 8
    let mut host = engine.alloc_host(&shape)?; // page-locked on a GPU
    host.as_mut_slice()?.fill(Complex64::new(1.0, 0.0)); // written in place
    let a = engine.register_host(shape, host)?; // no copy: uploaded in one DMA
    let meson = Arc::new(SpinMapping::meson4x4());
    let c = engine.contract(0, &Contraction::new(a, a, meson))?;
    let (_, mut result) = engine.take_host(c)?; // where the read-back landed: no copy
    let values = result.as_mut_slice()?; // read in place (or result.into_vec()?)
    // README
    // Each output component is 4 terms of 8 x 8 products of ones: 4 * 8 everywhere.
    assert_eq!(values.len(), 16 * 64);
    assert!(values.iter().all(|&z| z == Complex64::new(32.0, 0.0)));
    assert!(result.is_pinned());
    engine.runtime().audit()?;
    Ok(())
}

#[test]
fn the_readme_has_this_example() {
    let readme = include_str!("../README.md");
    let me = include_str!("readme_pinned.rs");
    let marker = "    // README\n";
    let start = me.find(marker).map(|s| s + marker.len()).unwrap_or(0);
    let len = me[start..].find(marker).unwrap_or(0);
    let block: String = me[start..start + len]
        .lines()
        .map(|l| format!("{}\n", l.strip_prefix("    ").unwrap_or(l)))
        .collect();
    assert!(
        len > 0 && readme.contains(&block),
        "README.md lacks:\n{block}"
    );
}
