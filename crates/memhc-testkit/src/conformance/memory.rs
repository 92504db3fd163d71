//! Memory and copies: capacity, allocation and free, copies both ways, bounds.

use num_complex::Complex64;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use memhc_backend::gemm::{DeviceRef, GemmItem, GemmShape};
use memhc_backend::{Backend, BackendError, DeviceMemory, ELEMENT_BYTES, HostMemory, as_bytes_mut};

use super::*;

/// `mem_info` reports a positive total and no more free memory than that.
pub fn mem_info_is_sane<B: Backend>(b: &B) -> Check {
    let m = b.mem_info()?;
    ensure(m.total > 0 && m.free <= m.total, || {
        format!("mem_info {m:?}")
    })
}

/// Allocations have the requested size and distinct handles; zero bytes is an invalid
/// argument; more than the device holds is out of memory; free succeeds.
pub fn alloc_and_free<B: Backend>(b: &B) -> Check {
    let x = b.alloc(1000)?;
    let y = b.alloc(24)?;
    ensure(x.bytes() == 1000 && y.bytes() == 24, || {
        format!("sizes {} and {}, asked 1000 and 24", x.bytes(), y.bytes())
    })?;
    ensure(x.handle() != y.handle(), || {
        "two live buffers share a handle".into()
    })?;
    ensure(
        matches!(b.alloc(0), Err(BackendError::InvalidArgument { .. })),
        || "a zero-byte allocation must be an invalid argument".into(),
    )?;
    let total = b.mem_info()?.total;
    match b.alloc(total.saturating_add(1)) {
        Err(BackendError::OutOfMemory { requested, .. })
            if requested == total.saturating_add(1) => {}
        Err(e) => {
            return Err(Failure(format!(
                "allocating more than the device: {e}, expected out of memory"
            )));
        }
        Ok(_) => return Err(Failure("allocating more than the device succeeded".into())),
    }
    free_all(b, [x, y])
}

/// Bytes copied in at an offset come back unchanged, for odd sizes too.
pub fn copy_round_trip<B: Backend>(b: &B) -> Check {
    let s = b.create_stream()?;
    let buf = b.alloc(4099)?;
    let pattern: Vec<u8> = (0..4099u32).map(|i| (i * 7 + 3) as u8).collect();
    b.copy_h2d(&s, &pattern, &buf, 0)?;
    let tail: Vec<u8> = (0..1001u32).map(|i| (i * 13) as u8).collect();
    b.copy_h2d(&s, &tail, &buf, 3000)?;
    let mut back = vec![0u8; 4099];
    b.copy_d2h(&s, &buf, 0, &mut back)?;
    let mut expected = pattern.clone();
    expected[3000..4001].copy_from_slice(&tail);
    ensure(back == expected, || "bytes changed on a round trip".into())?;
    let mut middle = vec![0u8; 17];
    b.copy_d2h(&s, &buf, 2990, &mut middle)?;
    ensure(middle[..] == expected[2990..3007], || {
        "an offset read differs".into()
    })?;
    // The source slice may be reused as soon as copy_h2d returns.
    let mut reused = vec![1u8; 64];
    b.copy_h2d(&s, &reused, &buf, 0)?;
    reused.fill(2);
    let mut first = vec![0u8; 64];
    b.copy_d2h(&s, &buf, 0, &mut first)?;
    ensure(first.iter().all(|&x| x == 1), || {
        "copy_h2d read its source after returning".into()
    })?;
    free_all(b, [buf])
}

/// An asynchronous copy back into backend host memory lands after the work before it on the
/// stream, and may be read once an event after it has completed; out-of-range requests are
/// refused.
pub fn copy_d2h_async_round_trip<B: Backend>(b: &B) -> Check {
    let s = b.create_stream()?;
    let mut rng = ChaCha8Rng::seed_from_u64(0xd2a5);
    let n = 40;
    let shape = GemmShape::dense(n, n, n);
    let a = random_elements(&mut rng, n * n);
    let ab = upload(b, &s, &a)?;
    let cb = b.alloc(n * n * ELEMENT_BYTES)?;
    let item = [GemmItem {
        a: DeviceRef::new(&ab, 0),
        b: DeviceRef::new(&ab, 0),
        c: DeviceRef::new(&cb, 0),
    }];
    b.gemm_batched(&s, &shape, &item)?;
    let bytes = n * n * ELEMENT_BYTES;
    let host = b.alloc_host(bytes + 32)?;
    ensure(host.bytes() == bytes + 32, || "host buffer size".into())?;
    b.copy_d2h_async(&s, &cb, 0, &host, 32, bytes)?;
    let done = b.create_event()?;
    b.record_event(&done, &s)?;
    b.event_synchronize(&done)?;
    let mut got = vec![Complex64::new(0.0, 0.0); n * n];
    host.read(32, as_bytes_mut(&mut got))?;
    let mut expected = vec![Complex64::new(0.0, 0.0); n * n];
    reference_gemm(&shape, &a, &a, &mut expected);
    let err = relative_error(&got, &expected);
    ensure(err <= TOLERANCE, || {
        format!("async copy back: relative error {err:e}")
    })?;
    let refused =
        |r: Result<(), BackendError>| matches!(r, Err(BackendError::InvalidArgument { .. }));
    ensure(
        refused(b.copy_d2h_async(&s, &cb, 0, &host, 64, bytes)),
        || "an async copy past the end of the host buffer was accepted".into(),
    )?;
    ensure(
        refused(b.copy_d2h_async(&s, &cb, 16, &host, 0, bytes)),
        || "an async copy past the end of the device buffer was accepted".into(),
    )?;
    ensure(refused(host.read(bytes, &mut [0u8; 64])), || {
        "a read past the end was accepted".into()
    })?;
    ensure(
        matches!(b.alloc_host(0), Err(BackendError::InvalidArgument { .. })),
        || "a zero-byte host allocation must be an invalid argument".into(),
    )?;
    b.synchronize()?;
    free_all(b, [ab, cb])
}

/// Copies that fall outside their buffer are invalid arguments, and change nothing.
pub fn copy_bounds_are_checked<B: Backend>(b: &B) -> Check {
    let s = b.create_stream()?;
    let buf = b.alloc(64)?;
    b.copy_h2d(&s, &[5u8; 64], &buf, 0)?;
    let refused =
        |r: Result<(), BackendError>| matches!(r, Err(BackendError::InvalidArgument { .. }));
    ensure(refused(b.copy_h2d(&s, &[0u8; 16], &buf, 56)), || {
        "h2d past the end accepted".into()
    })?;
    ensure(refused(b.copy_h2d(&s, &[0u8; 1], &buf, usize::MAX)), || {
        "h2d offset overflow accepted".into()
    })?;
    let mut out = [0u8; 16];
    ensure(refused(b.copy_d2h(&s, &buf, 50, &mut out)), || {
        "d2h past the end accepted".into()
    })?;
    let mut all = [0u8; 64];
    b.copy_d2h(&s, &buf, 0, &mut all)?;
    ensure(all.iter().all(|&x| x == 5), || {
        "a refused copy changed the buffer".into()
    })?;
    free_all(b, [buf])
}

/// A host buffer filled in place ([`HostMemory::as_mut_bytes`]) is copied to the device by
/// [`Backend::copy_h2d_async`], from any offset; once the copy has completed the host may
/// overwrite the buffer without changing what the device holds; ranges outside either buffer
/// are invalid arguments.
pub fn copy_h2d_async_from_host_memory<B: Backend>(b: &B) -> Check {
    let s = b.create_stream()?;
    let mut rng = ChaCha8Rng::seed_from_u64(0x42d);
    let n = 300;
    let bytes = n * ELEMENT_BYTES;
    let values = random_elements(&mut rng, n);
    let mut host = b.alloc_host(bytes + 48)?;
    {
        let all = host.as_mut_bytes()?;
        ensure(all.len() == bytes + 48, || {
            format!("as_mut_bytes gave {} bytes of {}", all.len(), bytes + 48)
        })?;
        all[48..].copy_from_slice(memhc_backend::as_bytes(&values));
    }
    let dev = b.alloc(bytes + 16)?;
    b.copy_h2d_async(&s, &host, 48, &dev, 16, bytes)?;
    let done = b.create_event()?;
    b.record_event(&done, &s)?;
    b.event_synchronize(&done)?;
    // The copy has completed: overwriting the host buffer changes nothing on the device.
    host.as_mut_bytes()?.fill(0);
    let mut got = vec![Complex64::new(0.0, 0.0); n];
    b.copy_d2h(&s, &dev, 16, as_bytes_mut(&mut got))?;
    ensure(got == values, || {
        "the device does not hold what the host buffer held when the copy ran".into()
    })?;
    let refused =
        |r: Result<(), BackendError>| matches!(r, Err(BackendError::InvalidArgument { .. }));
    ensure(
        refused(b.copy_h2d_async(&s, &host, 64, &dev, 0, bytes)),
        || "an async upload past the end of the host buffer was accepted".into(),
    )?;
    ensure(
        refused(b.copy_h2d_async(&s, &host, 0, &dev, 32, bytes)),
        || "an async upload past the end of the device buffer was accepted".into(),
    )?;
    b.synchronize()?;
    b.free(dev)?;
    Ok(())
}
