//! Objects: registration from host data, shapes, reading, release.

use super::{check_ptr, guard, put, slice, slice_mut};
use crate::api;
use crate::status::{Failure, MemhcStatus};
use crate::types::{MemhcComplex, MemhcObject, MemhcRuntime};
use memhc_embed::Complex64;

/// Registers a hadron node from host data and stores its handle in `*out`: `spins` spin
/// components, each a dense tensor of dimensions `dims[0] x ... x dims[rank-1]` (a meson:
/// `spins` 16, `dims` {N, N}; a baryon: {N, N, N}), its `len` elements in `data` in packed
/// order: component after component, each row-major (C order); `len` must be exactly
/// `spins * dims[0] * ... * dims[rank-1]` (else `MEMHC_STATUS_SIZE_MISMATCH`). `rank` is 1
/// to 8 and no dimension is 0 (else `MEMHC_STATUS_INVALID_ARGUMENT`).
///
/// Ownership: the data is copied before the call returns; the caller may free or reuse
/// `data` and `dims` at once (memhc never borrows a caller's buffer beyond a call). The copy
/// goes to the device when a contraction first needs it.
///
/// # Safety
///
/// `dims` must point to `rank` readable `size_t`; `data` to `len` readable `memhc_complex`
/// (or be null with `len` 0); `out` to a writable `memhc_object`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memhc_register(
    rt: MemhcRuntime,
    spins: usize,
    dims: *const usize,
    rank: usize,
    data: *const MemhcComplex,
    len: usize,
    out: *mut MemhcObject,
) -> MemhcStatus {
    guard(|| {
        check_ptr(out.cast_const(), "out")?;
        let dims = slice(dims, rank, "dims")?;
        let data = slice(data.cast::<Complex64>(), len, "data")?;
        put(out, api::register(rt, spins, dims, data)?);
        Ok(())
    })
}

/// Stores the number of complex elements of an object in `*out`: the `len` that `memhc_read`
/// needs (`spins * dims[0] * ... * dims[rank-1]`).
///
/// # Safety
///
/// `out` must point to a writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memhc_object_elements(
    rt: MemhcRuntime,
    object: MemhcObject,
    out: *mut usize,
) -> MemhcStatus {
    guard(|| {
        check_ptr(out.cast_const(), "out")?;
        let shape = api::shape(rt, object)?;
        put(out, shape.spins() * shape.component_elems());
        Ok(())
    })
}

/// The shape of an object: its spins in `*spins`, its rank (dimensions per component) in
/// `*rank`, and the dimensions in `dims[0..rank]`. `*rank` is written even when `dims_capacity`
/// is smaller than the rank, which then returns `MEMHC_STATUS_BUFFER_TOO_SMALL` without
/// writing `dims` (call again with a larger array; a rank above 8 is unusual).
///
/// # Safety
///
/// `spins` and `rank` must point to writable `size_t`; `dims` to `dims_capacity` writable
/// `size_t` (or be null with `dims_capacity` 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memhc_object_shape(
    rt: MemhcRuntime,
    object: MemhcObject,
    spins: *mut usize,
    dims: *mut usize,
    dims_capacity: usize,
    rank: *mut usize,
) -> MemhcStatus {
    guard(|| {
        check_ptr(spins.cast_const(), "spins")?;
        check_ptr(rank.cast_const(), "rank")?;
        let shape = api::shape(rt, object)?;
        let d = shape.dims();
        put(rank, d.len());
        put(spins, shape.spins());
        let out = slice_mut(dims, dims_capacity, "dims")?;
        match out.get_mut(..d.len()) {
            Some(dst) => {
                dst.copy_from_slice(d);
                Ok(())
            }
            None => Err(Failure::new(
                MemhcStatus::BufferTooSmall,
                format!(
                    "the object has {} dimensions, dims has room for {dims_capacity}",
                    d.len()
                ),
            )),
        }
    })
}

/// Copies an object's values into the caller's buffer `out` of `len` elements, which must be
/// exactly the object's number of elements (`memhc_object_elements`; else
/// `MEMHC_STATUS_SIZE_MISMATCH` and nothing is written), in packed order (component after
/// component, each row-major). A result whose only copy is on the device is copied back
/// first and stays resident; the call waits for the work that writes it. A produced object
/// whose contraction failed has no value: `MEMHC_STATUS_UNINITIALIZED`.
///
/// # Safety
///
/// `out` must point to `len` writable `memhc_complex` that nothing else uses during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memhc_read(
    rt: MemhcRuntime,
    object: MemhcObject,
    out: *mut MemhcComplex,
    len: usize,
) -> MemhcStatus {
    guard(|| {
        if len == 0 {
            // Report the size a zero-length read would need rather than a null pointer.
            let shape = api::shape(rt, object)?;
            return Err(Failure::new(
                MemhcStatus::SizeMismatch,
                format!(
                    "the object has {} elements, the buffer 0",
                    shape.spins() * shape.component_elems()
                ),
            ));
        }
        let buf = slice_mut(out.cast::<Complex64>(), len, "out")?;
        api::read(rt, object, buf)
    })
}

/// Releases an object: its handle becomes stale (a second release, or any later use, is
/// refused with `MEMHC_STATUS_INVALID_HANDLE`) and its device memory returns to the runtime's
/// free pool. Objects must be released by the caller (or all at once by
/// `memhc_runtime_destroy`); results not released stay on the device and count against the
/// budget, though they may be evicted (written back to host memory first).
#[unsafe(no_mangle)]
pub extern "C" fn memhc_release(rt: MemhcRuntime, object: MemhcObject) -> MemhcStatus {
    guard(|| api::release(rt, object))
}
