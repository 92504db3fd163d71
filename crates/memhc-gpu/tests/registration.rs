//! Registering the caller's pageable memory in place (`GpuBackend::adopt_pageable`,
//! `register_pageable`, `release_pageable`): on the fake device, that the rule decides, that
//! registration happens once, the data arrive and return intact, and the memory is
//! unregistered when given back or dropped; on the modelled H100, that registering a large
//! buffer copied many times costs less modelled time than staging every copy, and more when
//! it is copied only a couple of times.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use common::fake::FakeConfig;
use hadron::{Contraction, Engine, HadronNode, NodeShape, SpinMapping, reference};
use memhc_backend::{Backend, BackendError, HostMemory};
use memhc_core::{Config, HostCopy, Runtime};
use memhc_gpu::model::{ModelParams, model_backend};
use memhc_gpu::{Adopted, GpuOptions};

const MIB: usize = 1 << 20;

/// `bytes` of distinct words.
fn words(bytes: usize, seed: u64) -> Vec<u64> {
    (0..bytes as u64 / 8)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ seed)
        .collect()
}

#[test]
fn the_rule_registers_large_buffers_copied_often_and_leaves_the_rest() {
    let b = common::backend(FakeConfig::default(), GpuOptions::default());
    let rule = b.options().register;
    assert_eq!((rule.min_bytes, rule.min_copies), (8 * MIB, 4));
    for (bytes, copies, registered) in [
        (8 * MIB, 4, true),
        (8 * MIB, 3, false),
        (8 * MIB - 8, 100, false),
        (36 * MIB, 1, false),
    ] {
        let memory = words(bytes, 1);
        match b.adopt_pageable(memory, copies) {
            Adopted::Registered(buffer) => {
                assert!(registered, "{bytes} bytes, {copies} copies: registered");
                assert!(buffer.is_registered());
                assert_eq!(buffer.bytes(), bytes);
            }
            Adopted::Pageable { memory, refused } => {
                assert!(!registered, "{bytes} bytes, {copies} copies: left pageable");
                assert!(refused.is_none());
                assert_eq!(memory, words(bytes, 1), "handed back unchanged");
            }
        }
    }
    let s = b.api().stats();
    assert_eq!((s.registrations, s.unregistrations), (1, 1));
    assert_eq!(s.registered_live, 0);
    assert_eq!(b.copy_stats().registrations, 1);
    assert_eq!(b.copy_stats().unregistrations, 1);
    common::assert_clean(&b);
}

#[test]
fn a_registered_buffer_is_copied_in_one_dma_each_time_and_given_back_intact() {
    let b = common::backend(FakeConfig::default(), GpuOptions::default());
    let bytes = 9 * MIB;
    let original = words(bytes, 7);
    let Adopted::Registered(host) = b.adopt_pageable(original.clone(), 9) else {
        panic!("a 9 MiB buffer copied 9 times is registered");
    };
    let stream = b.create_stream().unwrap();
    let device = b.alloc(bytes).unwrap();
    for _ in 0..9 {
        b.copy_h2d_async(&stream, &host, 0, &device, 0, bytes)
            .unwrap();
    }
    let mut back = vec![0u8; bytes];
    b.copy_d2h(&stream, &device, 0, &mut back).unwrap();
    assert!(back == bytemuck::cast_slice::<u64, u8>(&original));
    let c = b.copy_stats();
    assert_eq!(c.direct_h2d_bytes, 9 * bytes as u64);
    assert_eq!(c.staged_h2d_bytes, 0, "no staging on the way in");
    assert_eq!(c.staged_d2h_bytes, bytes as u64);
    let s = b.api().stats();
    assert_eq!(s.registrations, 1, "registered once for nine copies");
    assert_eq!(s.registered_live, bytes);
    let memory = b.release_pageable(host).unwrap();
    assert_eq!(memory, original);
    let s = b.api().stats();
    assert_eq!(
        (s.registrations, s.unregistrations, s.registered_live),
        (1, 1, 0)
    );
    // Given back, the same memory may be registered again (once at a time).
    let Adopted::Registered(again) = b.adopt_pageable(memory, 9) else {
        panic!("registered again");
    };
    drop(again);
    let s = b.api().stats();
    assert_eq!(
        (s.registrations, s.unregistrations, s.registered_live),
        (2, 2, 0)
    );
    common::assert_clean(&b);
}

#[test]
fn page_locked_memory_the_backend_allocated_is_not_released_as_caller_memory() {
    let b = common::backend(FakeConfig::default(), GpuOptions::default());
    let host = b.alloc_host(4096).unwrap();
    assert!(!host.is_registered());
    assert!(matches!(
        b.release_pageable(host),
        Err(BackendError::InvalidArgument { .. })
    ));
    let empty = b.register_pageable(Vec::new()).unwrap_err();
    assert!(empty.memory.is_empty());
    assert_eq!(b.api().stats().registrations, 0);
    common::assert_clean(&b);
}

#[test]
fn contractions_over_registered_nodes_match_the_reference() {
    let b = common::backend(
        FakeConfig::default(),
        GpuOptions::default().budget(256 * MIB),
    );
    let fake = b.api().clone();
    let mut engine = Engine::new(Runtime::new(b, Config::default()).unwrap());
    let mapping = Arc::new(SpinMapping::meson4x4());
    let shape = NodeShape::meson(24).unwrap();
    let (x, y) = (HadronNode::random(&shape, 3), HadronNode::random(&shape, 4));
    let mut ids = Vec::new();
    for node in [&x, &y] {
        let values = node.clone().into_vec();
        let elems = values.len();
        let memory: Vec<u64> = bytemuck::allocation::cast_vec(values);
        let backend = engine.runtime().backend();
        let buffer = backend.register_pageable(memory).unwrap();
        let host = HostCopy::pinned(buffer, elems).unwrap();
        ids.push(engine.register_host(shape.clone(), host).unwrap());
    }
    let out = engine
        .contract(0, &Contraction::new(ids[0], ids[1], mapping.clone()))
        .unwrap();
    let got = engine.read(out).unwrap();
    let want =
        reference::contract(&x, &y, Default::default(), Default::default(), &mapping).unwrap();
    assert!(reference::relative_error(&got, &want) <= 1e-12);
    let copies = engine.runtime().backend().copy_stats();
    assert_eq!(copies.registrations, 2);
    assert_eq!(
        copies.direct_h2d_bytes,
        2 * (x.clone().into_vec().len() * 16) as u64,
        "both nodes uploaded in one DMA each"
    );
    for id in ids {
        engine.release(id).unwrap();
    }
    engine.runtime_mut().synchronize().unwrap();
    drop(engine);
    let s = fake.stats();
    assert_eq!(
        (s.registrations, s.unregistrations, s.registered_live),
        (2, 2, 0)
    );
    assert!(s.violations.is_empty(), "{:#?}", s.violations);
}

/// The modelled time of `copies` uploads of a pageable buffer of `bytes`: staged each time
/// (through a staging pool already warm), or registered once and then copied in one DMA each.
fn modelled_uploads(bytes: usize, copies: usize, register: bool) -> f64 {
    let (b, clock) = model_backend(ModelParams::h100(), 1 << 30).unwrap();
    let stream = b.create_stream().unwrap();
    let device = b.alloc(bytes).unwrap();
    // Staging in its steady state: the stream's pool already holds the buffers these copies
    // use (pinning them is a one-off of the backend, not of this buffer).
    let warm = vec![0u8; bytes];
    for _ in 0..copies {
        b.copy_h2d(&stream, &warm, &device, 0).unwrap();
    }
    b.synchronize().unwrap();
    let start = clock.report().makespan_s;
    if register {
        let host = b.register_pageable(vec![0u64; bytes / 8]).unwrap();
        for _ in 0..copies {
            b.copy_h2d_async(&stream, &host, 0, &device, 0, bytes)
                .unwrap();
        }
        b.synchronize().unwrap();
        b.release_pageable(host).unwrap();
    } else {
        let memory = vec![0u8; bytes];
        for _ in 0..copies {
            b.copy_h2d(&stream, &memory, &device, 0).unwrap();
        }
    }
    b.synchronize().unwrap();
    clock.report().makespan_s - start
}

#[test]
fn in_the_model_registration_pays_for_a_large_buffer_copied_often() {
    let bytes = 36 * MIB;
    let p = ModelParams::h100();
    let (staged12, registered12) = (
        modelled_uploads(bytes, 12, false),
        modelled_uploads(bytes, 12, true),
    );
    assert!(
        registered12 < 0.85 * staged12,
        "12 copies: registered {registered12} s against staged {staged12} s"
    );
    // Registered: the registration, then the DMAs back to back.
    let dma = p.copy_latency_s + bytes as f64 / (p.h2d_bandwidth * p.h2d_copy_share);
    assert!(registered12 >= p.register_s(bytes) + 12.0 * dma);
    // The rule's break-even is the model's: the first count at which registering wins.
    let n = p.register_break_even(bytes);
    assert!(modelled_uploads(bytes, n, true) < modelled_uploads(bytes, n, false));
    assert!(modelled_uploads(bytes, n - 2, true) > modelled_uploads(bytes, n - 2, false));
    let (staged2, registered2) = (
        modelled_uploads(bytes, 2, false),
        modelled_uploads(bytes, 2, true),
    );
    assert!(
        registered2 > staged2,
        "2 copies: registered {registered2} s against staged {staged2} s"
    );
}

#[test]
fn registration_is_a_setting_of_the_model() {
    let p = ModelParams::h100()
        .with_settings("register_rate=6e9")
        .unwrap();
    assert_eq!(p.register_rate, 6e9);
    assert!(
        ModelParams::h100()
            .with_settings("register_rate=0")
            .is_err()
    );
    let (b, clock) = model_backend(p.clone(), 1 << 30).unwrap();
    let before = clock.host_s();
    let host = b.register_pageable(vec![0u64; 6_000_000 / 8]).unwrap();
    let took = clock.host_s() - before;
    assert!((took - p.register_s(6_000_000)).abs() < 1e-12, "{took}");
    assert_eq!(b.release_pageable(host).unwrap().len(), 750_000);
}
