//! `Launch::gemm_components`, the hot path of a hadron contraction: the same products and the
//! same errors as the pointer-array batch of the same items, on packed objects (checked once,
//! handed to the backend by component), unpacked ones and the arena (checked item by item).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests unwrap what must succeed

mod common;

use common::*;
use memhc_core::backend::components::ComponentTable;
use memhc_core::backend::gemm::GemmShape;
use memhc_core::{Access, Alloc, Config, Error, Mode, Runtime};
use memhc_host::host::HostBackend;
use memhc_testkit::conformance::reference_gemm;

const MIB: usize = 1 << 20;

/// An irregular layer: distinct outputs, repeated inputs (backend order: A, B, C).
fn table() -> ComponentTable {
    ComponentTable::new([(2, 0, 3), (0, 3, 0), (3, 3, 1), (1, 2, 2)])
}

fn configs() -> Vec<(&'static str, Config)> {
    vec![
        ("packed", Config::for_mode(Mode::Optimal)),
        ("unpacked", Config::for_mode(Mode::Naive)),
        (
            "arena",
            Config::for_mode(Mode::Optimal)
                .with_alloc(Alloc::Arena)
                .with_budget(MIB),
        ),
    ]
}

#[test]
fn products_match_the_reference_in_every_layout() {
    let l = square(4, 3);
    let n = side(l);
    let e = l.component_elems();
    for (what, config) in configs() {
        let mut rt = Runtime::new(HostBackend::new(8 * MIB), config).unwrap();
        let mut g = rng(7);
        let (va, vb) = (random(&mut g, l), random(&mut g, l));
        let a = rt.register(va.clone(), l).unwrap();
        let b = rt.register(vb.clone(), l).unwrap();
        let c = rt.create(l).unwrap();
        let t = table();
        let shape = GemmShape::dense(n, n, n);
        rt.launch(
            0,
            &[Access::read(a), Access::read(b), Access::write(c)],
            |launch| launch.gemm_components(&shape, (0, 1, 2), &t),
        )
        .unwrap();
        let mut expected = vec![Default::default(); l.elems()];
        for &[x, y, z] in t.items() {
            reference_gemm(
                &shape,
                &va[x * e..(x + 1) * e],
                &vb[y * e..(y + 1) * e],
                &mut expected[z * e..(z + 1) * e],
            );
        }
        assert_close(rt.read(c).unwrap(), &expected, what);
        rt.audit().unwrap();
    }
}

#[test]
fn a_table_past_an_object_or_into_a_read_only_one_is_refused_by_name() {
    let l = square(4, 2);
    let n = side(l);
    let shape = GemmShape::dense(n, n, n);
    for (what, config) in configs() {
        let mut rt = Runtime::new(HostBackend::new(8 * MIB), config).unwrap();
        let mut g = rng(8);
        let a = rt.register(random(&mut g, l), l).unwrap();
        let b = rt.register(random(&mut g, l), l).unwrap();
        let c = rt.create(l).unwrap();
        let list = [Access::read(a), Access::read(b), Access::write(c)];
        let past = ComponentTable::new([(0, 0, 0), (1, 4, 1)]);
        let err = rt
            .launch(0, &list, |launch| {
                launch.gemm_components(&shape, (0, 1, 2), &past)
            })
            .unwrap_err();
        assert!(
            matches!(&err, Error::LaunchMisuse(m) if m.contains("component 4") && m.contains(&b.to_string())),
            "{what}: {err}"
        );
        // C is A, which the launch only reads.
        let err = rt
            .launch(0, &list, |launch| {
                launch.gemm_components(&shape, (1, 0, 0), &table())
            })
            .unwrap_err();
        assert!(
            matches!(&err, Error::LaunchMisuse(m) if m.contains("read-only")),
            "{what}: {err}"
        );
        // Nothing was written: c still has no value, and the inputs are intact.
        assert_eq!(rt.read(c).unwrap_err(), Error::Uninitialized(c));
        rt.audit().unwrap();
    }
}
