//! memhc-testkit's conformance suite on `GpuBackend<Fake>`: the code both GPU backends share, on
//! a device that runs queued work only when something waits for it (and, for comparison, on
//! one that runs it at once, and on one that also runs it when queried), with copies in many
//! small pieces, and without managed memory.

#![allow(clippy::expect_used)]

mod common;

use std::convert::Infallible;

use common::fake::{FakeConfig, Progress};
use common::{FakeBackend, backend, tiny_staging, with_progress};
use memhc_core::backend::tiles::Tiles;
use memhc_core::backend::{Backend, HostMemory};
use memhc_gpu::{GpuOptions, TiledCopies};

fn made(progress: Progress) -> Result<FakeBackend, Infallible> {
    Ok(with_progress(progress))
}

mod lazy {
    memhc_testkit::backend_conformance_tests!(|| super::made(super::Progress::Lazy));
}

mod on_query {
    memhc_testkit::backend_conformance_tests!(|| super::made(super::Progress::OnQuery));
}

mod eager {
    memhc_testkit::backend_conformance_tests!(|| super::made(super::Progress::Eager));
}

mod small_pieces {
    use super::*;
    memhc_testkit::backend_conformance_tests!(|| Ok::<_, Infallible>(backend(
        FakeConfig::default(),
        GpuOptions::default().staging(tiny_staging()),
    )));
}

/// Every one-product GEMM computed with three real products (`ComplexGemm::Gauss`), held to
/// the suite's tolerances.
mod gauss {
    use super::*;
    memhc_testkit::backend_conformance_tests!(|| Ok::<_, Infallible>(backend(
        FakeConfig::default(),
        GpuOptions::default().complex_gemm(memhc_gpu::ComplexGemm::Gauss),
    )));
}

mod without_managed_memory {
    use super::*;
    memhc_testkit::backend_conformance_tests!(|| Ok::<_, Infallible>(backend(
        FakeConfig {
            managed: false,
            ..FakeConfig::default()
        },
        GpuOptions::default(),
    )));
}

/// The whole suite with tiled copies from and into page-locked memory issued per block column
/// (one 3D copy each), on a device that runs work lazily and on one that runs it at once.
mod per_column {
    use super::*;
    fn made(progress: Progress) -> Result<FakeBackend, Infallible> {
        Ok(backend(
            FakeConfig {
                progress,
                ..FakeConfig::default()
            },
            GpuOptions::default().tiled(TiledCopies::PerColumn),
        ))
    }
    mod lazy {
        memhc_testkit::backend_conformance_tests!(|| super::made(super::Progress::Lazy));
    }
    mod eager {
        memhc_testkit::backend_conformance_tests!(|| super::made(super::Progress::Eager));
    }
}

/// A tiled object (a meson node's shape, `4 x 4` components, here of `5 x 3` elements) up from
/// page-locked memory and back into it, issued each way: the values round-trip exactly (and
/// land where a per-component copy puts them), and the driver sees `g²` copy calls per object
/// each way per component, `g` per block column.
#[test]
fn tiled_copies_per_column_are_g_calls_and_round_trip() -> Result<(), memhc_core::BackendError> {
    let t = Tiles::new(4, 5, 3).expect("tiles");
    let bytes = t.bytes();
    let packed: Vec<u8> = (0..bytes).map(|i| (i * 7 + i / 251) as u8).collect();
    let mut device_images = Vec::new();
    for (how, calls) in [(TiledCopies::PerComponent, 16), (TiledCopies::PerColumn, 4)] {
        let b = backend(FakeConfig::default(), GpuOptions::default().tiled(how));
        let s = b.create_stream()?;
        let buf = b.alloc(48 + bytes)?;
        b.copy_h2d(&s, &vec![0u8; 48 + bytes], &buf, 0)?;
        let mut host = b.alloc_host(16 + bytes)?;
        host.as_mut_bytes()?[16..].copy_from_slice(&packed);
        let before = b.api().stats();
        b.copy_h2d_async_tiled(&s, &host, 16, &buf, 48, &t)?;
        b.stream_synchronize(&s)?;
        let up = b.api().stats();
        assert_eq!(up.h2d.len() - before.h2d.len(), calls, "{how:?}: calls up");
        assert_eq!(up.h2d[before.h2d.len()..].iter().sum::<usize>(), bytes);
        let mut image = vec![0u8; 48 + bytes];
        b.copy_d2h(&s, &buf, 0, &mut image)?;
        device_images.push(image);
        let out = b.alloc_host(32 + bytes)?;
        let before = b.api().stats();
        b.copy_d2h_async_tiled(&s, &buf, 48, &out, 32, &t)?;
        b.stream_synchronize(&s)?;
        let down = b.api().stats();
        assert_eq!(
            down.d2h.len() - before.d2h.len(),
            calls,
            "{how:?}: calls down"
        );
        let mut back = vec![0u8; bytes];
        out.read(32, &mut back)?;
        assert!(back == packed, "{how:?}: not the packed order back");
        b.synchronize()?;
        b.free(buf)?;
        common::assert_clean(&b);
    }
    assert!(
        device_images[0] == device_images[1],
        "the device holds the same bytes either way"
    );
    Ok(())
}

/// The whole suite on one backend with a small budget (256 MiB), in one go.
#[test]
fn whole_suite_under_a_small_budget() {
    let b = backend(
        FakeConfig::default(),
        GpuOptions::default().budget(256 << 20),
    );
    if let Err(failure) = memhc_testkit::conformance::run_all(&b) {
        panic!("{failure}");
    }
    common::assert_clean(&b);
}
