//! Managed (unified) memory on the host backend.
//!
//! Host memory is already where the host and the "device" both address it, so a managed buffer
//! is an ordinary allocation (same ledger, same NaN poison) with a flag. What the backend adds
//! is strictness, as everywhere else: the host's in-place writes and reads are bounds-checked,
//! refuse a buffer that is not managed, and refuse with [`BackendError::BufferInUse`] a buffer
//! that queued work still references (the caller must wait for that work first, as it must on
//! a GPU). Prefetch and read-mostly advice check that their buffer is managed and do nothing:
//! there is nowhere to migrate to, and doing nothing trivially keeps stream order.

use std::sync::atomic::Ordering;

use super::{HostBuffer, check_copy_range};
use memhc_backend::not_managed;
use memhc_backend::{BackendError, BackendOp};

/// Refuses `buffer` for a managed-memory call `op` if [`alloc_managed`] did not allocate it.
///
/// [`alloc_managed`]: memhc_backend::Backend::alloc_managed
pub(super) fn require(op: BackendOp, buffer: &HostBuffer) -> Result<(), BackendError> {
    if buffer.managed {
        Ok(())
    } else {
        Err(not_managed(op, buffer.handle))
    }
}

/// The checks of an in-place access by the host: managed, in bounds, and no queued work.
fn check_access(
    op: BackendOp,
    buffer: &HostBuffer,
    offset: usize,
    len: usize,
) -> Result<(), BackendError> {
    require(op, buffer)?;
    check_copy_range(op, buffer, offset, len)?;
    let pending = buffer.cell.pending.load(Ordering::Acquire);
    if pending > 0 {
        return Err(BackendError::BufferInUse {
            handle: buffer.handle,
            pending,
        });
    }
    Ok(())
}

fn poisoned(op: BackendOp) -> BackendError {
    BackendError::Async {
        op,
        message: "buffer lock poisoned".into(),
    }
}

/// [`Backend::managed_write`](memhc_backend::Backend::managed_write): copies `src` into
/// `dst` from byte `dst_offset`, at once.
pub(super) fn write(dst: &HostBuffer, dst_offset: usize, src: &[u8]) -> Result<(), BackendError> {
    check_access(BackendOp::CopyH2D, dst, dst_offset, src.len())?;
    if src.is_empty() {
        return Ok(());
    }
    let mut data = dst
        .cell
        .data
        .write()
        .map_err(|_| poisoned(BackendOp::CopyH2D))?;
    let bytes: &mut [u8] = bytemuck::cast_slice_mut(data.as_mut_slice());
    bytes[dst_offset..dst_offset + src.len()].copy_from_slice(src);
    Ok(())
}

/// [`Backend::managed_read`](memhc_backend::Backend::managed_read): copies `dst.len()` bytes
/// of `src` from byte `src_offset` into `dst`, at once.
pub(super) fn read(
    src: &HostBuffer,
    src_offset: usize,
    dst: &mut [u8],
) -> Result<(), BackendError> {
    check_access(BackendOp::CopyD2H, src, src_offset, dst.len())?;
    if dst.is_empty() {
        return Ok(());
    }
    let data = src
        .cell
        .data
        .read()
        .map_err(|_| poisoned(BackendOp::CopyD2H))?;
    let bytes: &[u8] = bytemuck::cast_slice(data.as_slice());
    dst.copy_from_slice(&bytes[src_offset..src_offset + dst.len()]);
    Ok(())
}

#[cfg(test)]
mod tests {
    use num_complex::Complex64;

    use crate::host::HostBackend;
    use memhc_backend::gemm::{DeviceRef, GemmItem, GemmShape};
    use memhc_backend::{Backend, Location, as_bytes, as_bytes_mut};
    use memhc_backend::{BackendError, BackendOp};

    fn c(re: f64) -> Complex64 {
        Complex64::new(re, 0.0)
    }

    #[test]
    fn managed_memory_is_accounted_poisoned_and_read_in_place() {
        let b = HostBackend::new(1000);
        assert!(b.supports_managed());
        let x = b.alloc_managed(600).unwrap();
        assert_eq!(b.used(), 600, "managed memory counts against the capacity");
        assert!(matches!(
            b.alloc_managed(500),
            Err(BackendError::OutOfMemory {
                requested: 500,
                free: 400
            })
        ));
        let mut fresh = [c(0.0); 2];
        b.managed_read(&x, 0, as_bytes_mut(&mut fresh)).unwrap();
        assert!(fresh.iter().all(|z| z.re.is_nan() && z.im.is_nan()));
        b.managed_write(&x, 16, as_bytes(&[c(3.0), c(4.0)]))
            .unwrap();
        let mut back = [c(0.0); 3];
        b.managed_read(&x, 0, as_bytes_mut(&mut back)).unwrap();
        assert!(back[0].re.is_nan());
        assert_eq!(&back[1..], &[c(3.0), c(4.0)]);
        b.free(x).unwrap();
        assert_eq!(b.used(), 0);
    }

    /// A managed buffer is a buffer like any other: GEMMs take it, after the host wrote it,
    /// and the host reads the result in place once the stream has completed.
    #[test]
    fn gemm_works_on_managed_memory() {
        let b = HostBackend::new(1 << 10);
        let s = b.create_stream().unwrap();
        let (x, y, z) = (
            b.alloc_managed(64).unwrap(),
            b.alloc_managed(64).unwrap(),
            b.alloc_managed(64).unwrap(),
        );
        let identity = [c(1.0), c(0.0), c(0.0), c(1.0)];
        let m = [c(1.0), c(2.0), c(3.0), c(4.0)];
        b.managed_write(&x, 0, as_bytes(&identity)).unwrap();
        b.managed_write(&y, 0, as_bytes(&m)).unwrap();
        b.advise_read_mostly(&x).unwrap();
        for buffer in [&x, &y, &z] {
            b.prefetch(&s, buffer, Location::Device).unwrap();
        }
        let item = GemmItem {
            a: DeviceRef::new(&x, 0),
            b: DeviceRef::new(&y, 0),
            c: DeviceRef::new(&z, 0),
        };
        b.gemm_batched(&s, &GemmShape::dense(2, 2, 2), &[item])
            .unwrap();
        b.prefetch(&s, &z, Location::Host).unwrap();
        b.stream_synchronize(&s).unwrap();
        let mut out = [c(0.0); 4];
        b.managed_read(&z, 0, as_bytes_mut(&mut out)).unwrap();
        assert_eq!(out, m);
    }

    #[test]
    fn out_of_bounds_accesses_are_refused() {
        let b = HostBackend::new(1 << 10);
        let x = b.alloc_managed(32).unwrap();
        assert!(matches!(
            b.managed_write(&x, 24, &[0u8; 16]),
            Err(BackendError::InvalidArgument {
                op: BackendOp::CopyH2D,
                ..
            })
        ));
        assert!(matches!(
            b.managed_read(&x, usize::MAX, &mut [0u8; 1]),
            Err(BackendError::InvalidArgument {
                op: BackendOp::CopyD2H,
                ..
            })
        ));
    }

    #[test]
    fn memory_that_is_not_managed_is_refused() {
        let b = HostBackend::new(1 << 10);
        let s = b.create_stream().unwrap();
        let x = b.alloc(32).unwrap();
        let not_managed = |r: Result<(), BackendError>| {
            matches!(r, Err(BackendError::InvalidArgument { reason, .. })
                if reason.contains("is not managed memory"))
        };
        assert!(not_managed(b.managed_write(&x, 0, &[0u8; 16])));
        assert!(not_managed(b.managed_read(&x, 0, &mut [0u8; 16])));
        assert!(not_managed(b.prefetch(&s, &x, Location::Device)));
        assert!(not_managed(b.advise_read_mostly(&x)));
    }

    /// The host must not touch managed memory that queued work still uses.
    #[test]
    fn buffers_in_use_by_queued_work_are_refused() {
        let b = HostBackend::new(1 << 10);
        let s = b.create_stream().unwrap();
        let x = b.alloc_managed(32).unwrap();
        let pause = b.pause();
        b.copy_h2d(&s, &[0u8; 32], &x, 0).unwrap();
        assert!(matches!(
            b.managed_write(&x, 0, &[1u8; 32]),
            Err(BackendError::BufferInUse { pending: 1, .. })
        ));
        assert!(matches!(
            b.managed_read(&x, 0, &mut [1u8; 32]),
            Err(BackendError::BufferInUse { pending: 1, .. })
        ));
        drop(pause);
        b.stream_synchronize(&s).unwrap();
        let mut out = [1u8; 32];
        b.managed_read(&x, 0, &mut out).unwrap();
        assert_eq!(out, [0u8; 32], "the queued copy ran, and the read sees it");
    }
}
