//! Managed (unified) memory: a round trip through GEMM for a backend that has it, a clear
//! refusal for one that does not.

use num_complex::Complex64;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use memhc_backend::gemm::{DeviceRef, GemmItem, GemmShape};
use memhc_backend::{Backend, BackendError, ELEMENT_BYTES, Location, as_bytes, as_bytes_mut};

use super::*;

/// Managed memory, where the backend has it (a backend without it passes, having said so with
/// [`Backend::supports_managed`], and its managed calls must then return
/// [`BackendError::Unsupported`]): written and read in place by the host, advised read-mostly,
/// prefetched, used as GEMM operands; in-place access to memory that is not managed and out of
/// bounds is refused; prefetching back to the host and reading there gives the same values.
pub fn managed_memory_round_trip<B: Backend>(b: &B) -> Check {
    if !b.supports_managed() {
        return ensure(
            matches!(b.alloc_managed(64), Err(BackendError::Unsupported(_))),
            || "a backend without managed memory must refuse alloc_managed as Unsupported".into(),
        );
    }
    let s = b.create_stream()?;
    let mut rng = ChaCha8Rng::seed_from_u64(0x3a4a);
    let shape = GemmShape::dense(7, 6, 5);
    let a = random_elements(&mut rng, 35);
    let bb = random_elements(&mut rng, 30);
    let managed = |data: &[Complex64]| -> Result<B::Buffer, Failure> {
        let buf = b.alloc_managed(data.len() * ELEMENT_BYTES)?;
        b.managed_write(&buf, 0, as_bytes(data))?;
        b.advise_read_mostly(&buf)?;
        Ok(buf)
    };
    let (ab, bbuf) = (managed(&a)?, managed(&bb)?);
    let cb = b.alloc_managed(42 * ELEMENT_BYTES)?;
    for buf in [&ab, &bbuf, &cb] {
        b.prefetch(&s, buf, Location::Device)?;
    }
    let item = [GemmItem {
        a: DeviceRef::new(&ab, 0),
        b: DeviceRef::new(&bbuf, 0),
        c: DeviceRef::new(&cb, 0),
    }];
    let shape = GemmShape {
        beta: Complex64::new(0.0, 0.0),
        ..shape
    };
    b.gemm_batched(&s, &shape, &item)?;
    b.prefetch(&s, &cb, Location::Host)?;
    b.stream_synchronize(&s)?;
    let mut got = vec![Complex64::new(0.0, 0.0); 42];
    b.managed_read(&cb, 0, as_bytes_mut(&mut got))?;
    let mut expected = vec![Complex64::new(0.0, 0.0); 42];
    reference_gemm(&shape, &a, &bb, &mut expected);
    let err = relative_error(&got, &expected);
    ensure(err <= TOLERANCE, || {
        format!("GEMM on managed memory: relative error {err:e}")
    })?;
    let mut tail = [0u8; 32];
    ensure(
        b.managed_read(&cb, 42 * ELEMENT_BYTES - 16, &mut tail)
            .is_err(),
        || "a managed read past the end was accepted".into(),
    )?;
    let plain = b.alloc(64)?;
    ensure(b.managed_write(&plain, 0, &[0u8; 16]).is_err(), || {
        "an in-place host write into device (not managed) memory was accepted".into()
    })?;
    free_all(b, [ab, bbuf, cb, plain])
}
