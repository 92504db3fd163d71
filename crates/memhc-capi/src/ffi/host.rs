//! Host buffers: a node's values written straight into the backend's host memory
//! (page-locked on a GPU) and registered without a copy; results handed out without a copy.

use super::{check_ptr, guard, put, slice};
use crate::api::host;
use crate::status::MemhcStatus;
use crate::types::{MemhcComplex, MemhcHost, MemhcObject, MemhcRuntime};

/// Allocates host memory of the runtime's backend for a node of `spins` components of
/// dimensions `dims[0] x ... x dims[rank-1]` (page-locked on a GPU: its upload is one DMA,
/// with no staging copy; ordinary memory on the host backend) and stores its handle in
/// `*out`. Fill it through `memhc_host_data`, then register it with `memhc_host_register`.
/// The shape is checked as `memhc_register` checks it (`MEMHC_STATUS_INVALID_ARGUMENT`), and
/// its bytes against the host's memory (`MEMHC_STATUS_OUT_OF_HOST_MEMORY`), before any memory
/// is taken. What the buffer holds before it is written is unspecified.
///
/// Ownership: the caller owns the buffer until `memhc_host_register` takes it or
/// `memhc_host_free` frees it; `memhc_runtime_destroy` frees the runtime's buffers too.
///
/// # Safety
///
/// `dims` must point to `rank` readable `size_t`; `out` to a writable `memhc_host`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memhc_host_alloc(
    rt: MemhcRuntime,
    spins: usize,
    dims: *const usize,
    rank: usize,
    out: *mut MemhcHost,
) -> MemhcStatus {
    guard(|| {
        check_ptr(out.cast_const(), "out")?;
        let dims = slice(dims, rank, "dims")?;
        put(out, host::alloc(rt, spins, dims)?);
        Ok(())
    })
}

/// Stores a pointer to the buffer's values in `*data` and their number of complex elements in
/// `*len` (`spins * dims[0] * ... * dims[rank-1]`, in packed order: component after component,
/// each row-major). The caller may read and write `(*data)[0..*len]` in place.
///
/// Lifetime: the pointer is valid until the buffer is registered (`memhc_host_register`),
/// freed (`memhc_host_free`) or its runtime destroyed (`memhc_runtime_destroy`), whichever
/// comes first; memhc neither moves the memory nor touches it between calls. Do not use it
/// during a call that registers or frees the buffer. On a GPU this call first waits for the
/// copies that use the buffer (a result's read-back), so a taken result reads complete.
///
/// # Safety
///
/// `data` must point to a writable `memhc_complex *`, `len` to a writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memhc_host_data(
    rt: MemhcRuntime,
    buffer: MemhcHost,
    data: *mut *mut MemhcComplex,
    len: *mut usize,
) -> MemhcStatus {
    guard(|| {
        check_ptr(data.cast_const(), "data")?;
        check_ptr(len.cast_const(), "len")?;
        let (ptr, n) = host::data(rt, buffer)?;
        put(data, ptr.cast::<MemhcComplex>());
        put(len, n);
        Ok(())
    })
}

/// Registers a host buffer as an object of its shape, without copying it, and stores the
/// object's handle in `*out`: the buffer becomes the object's host copy, uploaded in one DMA
/// when a contraction first needs it. The buffer's handle, and every pointer
/// `memhc_host_data` gave for it, are dead from then on (the runtime owns the memory; a later
/// use of the handle is `MEMHC_STATUS_INVALID_HANDLE`). A buffer of another runtime is
/// `MEMHC_STATUS_INVALID_HANDLE`, and stays its runtime's.
///
/// # Safety
///
/// `out` must point to a writable `memhc_object`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memhc_host_register(
    rt: MemhcRuntime,
    buffer: MemhcHost,
    out: *mut MemhcObject,
) -> MemhcStatus {
    guard(|| {
        check_ptr(out.cast_const(), "out")?;
        put(out, host::register(rt, buffer)?);
        Ok(())
    })
}

/// Hands an object's values out as a host buffer, stored in `*out`, and releases the object
/// (its handle is stale from then on): a result whose only copy is on the device is read back
/// first. In a runtime whose `memhc_config.host_memory` is `"pinned"`, the buffer is the
/// page-locked memory the read-back landed in, handed over without a copy; otherwise the
/// values are in ordinary memory. Read them through `memhc_host_data`, then free the buffer
/// with `memhc_host_free` (or register it again as an input). If the read fails, the object is
/// left as it was and `*out` unchanged.
///
/// # Safety
///
/// `out` must point to a writable `memhc_host`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memhc_take_host(
    rt: MemhcRuntime,
    object: MemhcObject,
    out: *mut MemhcHost,
) -> MemhcStatus {
    guard(|| {
        check_ptr(out.cast_const(), "out")?;
        put(out, host::take(rt, object)?);
        Ok(())
    })
}

/// Frees a host buffer the caller owns (never registered, or from `memhc_take_host`): its
/// handle and the pointers `memhc_host_data` gave are dead from then on; a second free is
/// `MEMHC_STATUS_INVALID_HANDLE`.
#[unsafe(no_mangle)]
pub extern "C" fn memhc_host_free(rt: MemhcRuntime, buffer: MemhcHost) -> MemhcStatus {
    guard(|| host::free(rt, buffer))
}
