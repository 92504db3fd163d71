//! The checked layer: one function per HIP or rocBLAS call this crate makes, each returning
//! `Result<_, BackendError>`. A failed call becomes [`BackendError::Driver`] naming the
//! function, with the library's own words (`hipGetErrorString`, `rocblas_status_to_string`);
//! `hipErrorOutOfMemory` from an allocation becomes [`BackendError::OutOfMemory`].
//!
//! Functions that only pass handles or plain values are safe; those that take addresses the
//! device or the host will read or write are `unsafe fn`, with what the caller must guarantee
//! under `# Safety`.

use std::ffi::{CStr, c_char, c_int, c_uint, c_void};

use memhc_backend::BackendError;

use crate::ffi::{
    HIP_ERROR_NOT_READY, HIP_ERROR_OUT_OF_MEMORY, HIP_EVENT_BLOCKING_SYNC, HIP_EVENT_DEFAULT,
    HIP_EVENT_DISABLE_TIMING, HIP_HOST_MALLOC_DEFAULT, HIP_STREAM_NON_BLOCKING, HIP_SUCCESS,
    HipError, HipEventT, HipMemcpy3DParms, HipPitchedPtr, HipSize3, HipStreamT, Libraries,
    ROCBLAS_STATUS_SUCCESS, RocblasStatus,
};

mod blas;
pub(crate) use blas::*;

/// The loaded libraries, as every owning type keeps them.
pub(crate) type Libs = &'static Libraries;

/// Copies a C string the library owns into a `String` (`None` for a null pointer).
fn c_text(p: *const c_char) -> Option<String> {
    if p.is_null() {
        return None;
    }
    // SAFETY: the pointer is not null, and the HIP and rocBLAS functions whose results come
    // here return pointers to static, NUL-terminated strings that live as long as the library.
    let text = unsafe { CStr::from_ptr(p) };
    Some(text.to_string_lossy().into_owned())
}

/// `hipGetErrorString (hipGetErrorName, code N)`.
pub(crate) fn hip_error_text(libs: Libs, code: HipError) -> String {
    // SAFETY: both functions take any error code by value and return a pointer to a static
    // string (or null), which `c_text` handles.
    let (string, name) = unsafe {
        (
            c_text((libs.hip.hipGetErrorString)(code)),
            c_text((libs.hip.hipGetErrorName)(code)),
        )
    };
    match (string, name) {
        // Older HIP runtimes (5.2, say) give the name as the description.
        (Some(s), Some(n)) if s != n => format!("{s} ({n}, code {code})"),
        (Some(s), _) | (None, Some(s)) => format!("{s} (code {code})"),
        (None, None) => format!("unknown HIP error (code {code})"),
    }
}

/// `Ok` for `hipSuccess`, else the call's failure.
pub(crate) fn hip(libs: Libs, call: &'static str, code: HipError) -> Result<(), BackendError> {
    if code == HIP_SUCCESS {
        Ok(())
    } else {
        Err(BackendError::Driver {
            call,
            message: hip_error_text(libs, code),
        })
    }
}

/// `Ok` for `rocblas_status_success`, else the call's failure.
pub(crate) fn blas(
    libs: Libs,
    call: &'static str,
    status: RocblasStatus,
) -> Result<(), BackendError> {
    if status == ROCBLAS_STATUS_SUCCESS {
        return Ok(());
    }
    // SAFETY: takes any status by value and returns a static string (or null).
    let text = c_text(unsafe { (libs.blas.rocblas_status_to_string)(status) });
    Err(BackendError::Driver {
        call,
        message: format!(
            "{} (rocblas_status {status})",
            text.unwrap_or_else(|| "unknown status".into())
        ),
    })
}

/// Number of devices the HIP runtime sees (`hipErrorNoDevice` is an error here; the caller
/// decides what it means).
pub(crate) fn device_count(libs: Libs) -> Result<usize, (HipError, BackendError)> {
    let mut count: c_int = 0;
    // SAFETY: writes one int through a valid pointer.
    let code = unsafe { (libs.hip.hipGetDeviceCount)(&mut count) };
    hip(libs, "hipGetDeviceCount", code).map_err(|e| (code, e))?;
    Ok(usize::try_from(count).unwrap_or(0))
}

/// Makes `device` the calling thread's current device.
pub(crate) fn set_device(libs: Libs, device: c_int) -> Result<(), BackendError> {
    // SAFETY: takes a device index by value; an invalid one is reported as an error.
    hip(libs, "hipSetDevice", unsafe {
        (libs.hip.hipSetDevice)(device)
    })
}

/// Sets how host threads wait for the current device (`hipSetDeviceFlags`, a
/// `hipDeviceSchedule*` flag), right after [`set_device`] and before anything else uses it.
pub(crate) fn set_device_flags(libs: Libs, flags: c_uint) -> Result<(), BackendError> {
    // SAFETY: takes the flags by value; a value the runtime refuses is reported as an error.
    hip(libs, "hipSetDeviceFlags", unsafe {
        (libs.hip.hipSetDeviceFlags)(flags)
    })
}

/// The device's marketing name (`hipDeviceGetName`).
pub(crate) fn device_name(libs: Libs, ordinal: c_int) -> Result<String, BackendError> {
    let mut device: c_int = 0;
    // SAFETY: writes one device handle (an int) through a valid pointer.
    hip(libs, "hipDeviceGet", unsafe {
        (libs.hip.hipDeviceGet)(&mut device, ordinal)
    })?;
    let mut buf = [0 as c_char; 256];
    // SAFETY: the buffer is valid for `len` bytes; HIP writes a NUL-terminated name into it,
    // truncated to fit.
    hip(libs, "hipDeviceGetName", unsafe {
        (libs.hip.hipDeviceGetName)(buf.as_mut_ptr(), (buf.len() - 1) as c_int, device)
    })?;
    // The last byte is never written: the buffer holds a NUL whatever HIP did.
    Ok(c_text(buf.as_ptr()).unwrap_or_default())
}

/// `hipRuntimeGetVersion` as `major.minor.patch` (HIP encodes it as
/// `major * 10_000_000 + minor * 100_000 + patch`).
pub(crate) fn runtime_version(libs: Libs) -> Result<String, BackendError> {
    let mut v: c_int = 0;
    // SAFETY: writes one int through a valid pointer.
    hip(libs, "hipRuntimeGetVersion", unsafe {
        (libs.hip.hipRuntimeGetVersion)(&mut v)
    })?;
    Ok(format_hip_version(v))
}

/// HIP's encoded version as `major.minor.patch`.
pub(crate) fn format_hip_version(v: c_int) -> String {
    format!("{}.{}.{}", v / 10_000_000, (v / 100_000) % 100, v % 100_000)
}

/// rocBLAS's version string.
pub(crate) fn blas_version(libs: Libs) -> Result<String, BackendError> {
    let mut buf = [0 as c_char; 128];
    // SAFETY: the buffer is valid for `len` bytes; rocBLAS writes a NUL-terminated string or
    // reports that it does not fit.
    blas(libs, "rocblas_get_version_string", unsafe {
        (libs.blas.rocblas_get_version_string)(buf.as_mut_ptr(), buf.len() - 1)
    })?;
    Ok(c_text(buf.as_ptr()).unwrap_or_default())
}

/// Free and total bytes of the current device.
pub(crate) fn mem_get_info(libs: Libs) -> Result<(usize, usize), BackendError> {
    let (mut free, mut total) = (0usize, 0usize);
    // SAFETY: writes two size_t through valid pointers.
    hip(libs, "hipMemGetInfo", unsafe {
        (libs.hip.hipMemGetInfo)(&mut free, &mut total)
    })?;
    Ok((free, total))
}

/// Allocates `bytes` of device memory on the current device; returns its address.
/// `hipErrorOutOfMemory` is [`BackendError::OutOfMemory`] with the device's free bytes.
pub(crate) fn malloc(libs: Libs, bytes: usize) -> Result<u64, BackendError> {
    let mut ptr: *mut c_void = std::ptr::null_mut();
    // SAFETY: writes one pointer through a valid pointer.
    let code = unsafe { (libs.hip.hipMalloc)(&mut ptr, bytes) };
    if code == HIP_ERROR_OUT_OF_MEMORY {
        return Err(BackendError::OutOfMemory {
            requested: bytes,
            free: mem_get_info(libs).map(|(f, _)| f).unwrap_or(0),
        });
    }
    hip(libs, "hipMalloc", code)?;
    if ptr.is_null() {
        return Err(BackendError::Driver {
            call: "hipMalloc",
            message: format!("returned success and a null pointer for {bytes} bytes"),
        });
    }
    Ok(ptr as u64)
}

/// Frees device memory.
///
/// # Safety
/// `addr` came from [`malloc`] and is freed once; no queued work uses it (HIP also waits for
/// the device before freeing).
pub(crate) unsafe fn free(libs: Libs, addr: u64) -> Result<(), BackendError> {
    let ptr = std::ptr::without_provenance_mut::<c_void>(addr as usize);
    // SAFETY: the caller guarantees the address is a live allocation freed once.
    hip(libs, "hipFree", unsafe { (libs.hip.hipFree)(ptr) })
}

/// Allocates `bytes` of page-locked host memory (default flags: cached, not write-combined,
/// usable for copies in both directions).
pub(crate) fn host_malloc(libs: Libs, bytes: usize) -> Result<std::ptr::NonNull<u8>, BackendError> {
    let mut ptr: *mut c_void = std::ptr::null_mut();
    // SAFETY: writes one pointer through a valid pointer.
    hip(libs, "hipHostMalloc", unsafe {
        (libs.hip.hipHostMalloc)(&mut ptr, bytes, HIP_HOST_MALLOC_DEFAULT)
    })?;
    std::ptr::NonNull::new(ptr.cast::<u8>()).ok_or_else(|| BackendError::Driver {
        call: "hipHostMalloc",
        message: format!("returned success and a null pointer for {bytes} bytes"),
    })
}

/// Frees page-locked host memory (HIP synchronises the device first).
///
/// # Safety
/// `ptr` came from [`host_malloc`] and is freed once; no queued copy uses it.
pub(crate) unsafe fn host_free(libs: Libs, ptr: *mut u8) -> Result<(), BackendError> {
    // SAFETY: the caller guarantees the pointer is a live pinned allocation freed once.
    hip(libs, "hipHostFree", unsafe {
        (libs.hip.hipHostFree)(ptr.cast())
    })
}

/// `hipHostRegister` (default flags) of `bytes` of the caller's memory from `ptr`, in place.
///
/// # Safety
/// `ptr` is valid for `bytes` and stays allocated until [`host_unregister`].
pub(crate) unsafe fn host_register(
    libs: Libs,
    ptr: *mut u8,
    bytes: usize,
) -> Result<(), BackendError> {
    // SAFETY: the caller's contract.
    hip(libs, "hipHostRegister", unsafe {
        (libs.hip.hipHostRegister)(ptr.cast(), bytes, 0)
    })
}

/// `hipHostUnregister`.
///
/// # Safety
/// `ptr` was registered by [`host_register`], once; no queued copy uses it.
pub(crate) unsafe fn host_unregister(libs: Libs, ptr: *mut u8) -> Result<(), BackendError> {
    // SAFETY: the caller's contract.
    hip(libs, "hipHostUnregister", unsafe {
        (libs.hip.hipHostUnregister)(ptr.cast())
    })
}

/// Enqueues a copy of `bytes` bytes on `stream`.
///
/// # Safety
/// `dst` and `src` are valid for `bytes` bytes of the direction `kind` names (device memory
/// from [`malloc`], host memory from [`host_malloc`]) until the copy completes in stream order,
/// and `stream` is a live stream.
pub(crate) unsafe fn memcpy_async(
    libs: Libs,
    dst: *mut c_void,
    src: *const c_void,
    bytes: usize,
    kind: c_int,
    stream: HipStreamT,
) -> Result<(), BackendError> {
    // SAFETY: the caller guarantees both ranges and the stream.
    hip(libs, "hipMemcpyAsync", unsafe {
        (libs.hip.hipMemcpyAsync)(dst, src, bytes, kind, stream)
    })
}

/// Enqueues a 2D copy (`hipMemcpy2DAsync`): `height` rows of `width` bytes from `src` (rows
/// `spitch` apart) to `dst` (rows `dpitch` apart).
///
/// # Safety
/// As [`memcpy_async`], for the spans `(height - 1) pitch + width` of each side.
pub(crate) unsafe fn memcpy_2d_async(
    libs: Libs,
    (dst, dpitch): (*mut c_void, usize),
    (src, spitch): (*const c_void, usize),
    (width, height): (usize, usize),
    kind: c_int,
    stream: HipStreamT,
) -> Result<(), BackendError> {
    // SAFETY: the caller guarantees both spans and the stream.
    hip(libs, "hipMemcpy2DAsync", unsafe {
        (libs.hip.hipMemcpy2DAsync)(dst, dpitch, src, spitch, width, height, kind, stream)
    })
}

/// Enqueues a 3D copy (`hipMemcpy3DAsync`) between linear memories: `depth` slices of
/// `height` rows of `width` bytes from `src` (rows `spitch` apart, slices `spitch sheight`
/// apart) to `dst` (rows `dpitch` apart, slices `dpitch dheight` apart).
///
/// # Safety
/// As [`memcpy_async`], for the spans `(depth - 1) rows pitch + (height - 1) pitch + width`
/// of each side.
pub(crate) unsafe fn memcpy_3d_async(
    libs: Libs,
    (dst, dpitch, dheight): (*mut c_void, usize, usize),
    (src, spitch, sheight): (*const c_void, usize, usize),
    (width, height, depth): (usize, usize, usize),
    kind: c_int,
    stream: HipStreamT,
) -> Result<(), BackendError> {
    let parms = HipMemcpy3DParms {
        src_array: std::ptr::null_mut(),
        src_pos: HipSize3::default(),
        src_ptr: HipPitchedPtr {
            ptr: src.cast_mut(),
            pitch: spitch,
            xsize: width,
            ysize: sheight,
        },
        dst_array: std::ptr::null_mut(),
        dst_pos: HipSize3::default(),
        dst_ptr: HipPitchedPtr {
            ptr: dst,
            pitch: dpitch,
            xsize: width,
            ysize: dheight,
        },
        extent: HipSize3 {
            x: width,
            y: height,
            z: depth,
        },
        kind,
    };
    // SAFETY: the caller guarantees both spans and the stream; `parms` is a complete
    // descriptor (no arrays) that lives through the call (HIP reads it before returning).
    hip(libs, "hipMemcpy3DAsync", unsafe {
        (libs.hip.hipMemcpy3DAsync)(&parms, stream)
    })
}

/// A device address as the pointer type HIP and rocBLAS take. The address is never
/// dereferenced on the host, so it carries no provenance.
pub(crate) fn device_ptr<T>(addr: u64) -> *mut T {
    std::ptr::without_provenance_mut(addr as usize)
}

/// Creates a non-blocking stream on the current device.
pub(crate) fn stream_create(libs: Libs) -> Result<HipStreamT, BackendError> {
    let mut s: HipStreamT = std::ptr::null_mut();
    // SAFETY: writes one handle through a valid pointer.
    hip(libs, "hipStreamCreateWithFlags", unsafe {
        (libs.hip.hipStreamCreateWithFlags)(&mut s, HIP_STREAM_NON_BLOCKING)
    })?;
    Ok(s)
}

/// Destroys a stream.
///
/// # Safety
/// `stream` came from [`stream_create`] and is destroyed once.
pub(crate) unsafe fn stream_destroy(libs: Libs, stream: HipStreamT) -> Result<(), BackendError> {
    // SAFETY: the caller guarantees the handle is live and destroyed once.
    hip(libs, "hipStreamDestroy", unsafe {
        (libs.hip.hipStreamDestroy)(stream)
    })
}

/// Waits for all work on `stream`.
///
/// # Safety
/// `stream` is a live stream.
pub(crate) unsafe fn stream_synchronize(
    libs: Libs,
    stream: HipStreamT,
) -> Result<(), BackendError> {
    // SAFETY: the caller guarantees the handle is live.
    hip(libs, "hipStreamSynchronize", unsafe {
        (libs.hip.hipStreamSynchronize)(stream)
    })
}

/// Makes later work on `stream` wait for the most recent record of `event`.
///
/// # Safety
/// Both handles are live.
pub(crate) unsafe fn stream_wait_event(
    libs: Libs,
    stream: HipStreamT,
    event: HipEventT,
) -> Result<(), BackendError> {
    // SAFETY: the caller guarantees both handles are live.
    hip(libs, "hipStreamWaitEvent", unsafe {
        (libs.hip.hipStreamWaitEvent)(stream, event, 0)
    })
}

/// Creates an event without timing.
pub(crate) fn event_create(libs: Libs, blocking: bool) -> Result<HipEventT, BackendError> {
    let mut e: HipEventT = std::ptr::null_mut();
    let flags = HIP_EVENT_DISABLE_TIMING | if blocking { HIP_EVENT_BLOCKING_SYNC } else { 0 };
    // SAFETY: writes one handle through a valid pointer.
    hip(libs, "hipEventCreateWithFlags", unsafe {
        (libs.hip.hipEventCreateWithFlags)(&mut e, flags)
    })?;
    Ok(e)
}

/// Creates an event that records time (`hipEventDefault`), for [`event_elapsed_ms`].
pub(crate) fn timing_event_create(libs: Libs, blocking: bool) -> Result<HipEventT, BackendError> {
    let mut e: HipEventT = std::ptr::null_mut();
    let flags = HIP_EVENT_DEFAULT | if blocking { HIP_EVENT_BLOCKING_SYNC } else { 0 };
    // SAFETY: writes one handle through a valid pointer.
    hip(libs, "hipEventCreateWithFlags", unsafe {
        (libs.hip.hipEventCreateWithFlags)(&mut e, flags)
    })?;
    Ok(e)
}

/// Milliseconds between the completed records of two timing events.
///
/// # Safety
/// Both handles are live.
pub(crate) unsafe fn event_elapsed_ms(
    libs: Libs,
    start: HipEventT,
    end: HipEventT,
) -> Result<f32, BackendError> {
    let mut ms: f32 = 0.0;
    // SAFETY: the caller guarantees both handles are live; HIP writes one float through a
    // valid pointer.
    hip(libs, "hipEventElapsedTime", unsafe {
        (libs.hip.hipEventElapsedTime)(&mut ms, start, end)
    })?;
    Ok(ms)
}

/// Destroys an event (a pending record still completes).
///
/// # Safety
/// `event` came from [`event_create`] or [`timing_event_create`] and is destroyed once.
pub(crate) unsafe fn event_destroy(libs: Libs, event: HipEventT) -> Result<(), BackendError> {
    // SAFETY: the caller guarantees the handle is live and destroyed once.
    hip(libs, "hipEventDestroy", unsafe {
        (libs.hip.hipEventDestroy)(event)
    })
}

/// Records `event` on `stream`.
///
/// # Safety
/// Both handles are live.
pub(crate) unsafe fn event_record(
    libs: Libs,
    event: HipEventT,
    stream: HipStreamT,
) -> Result<(), BackendError> {
    // SAFETY: the caller guarantees both handles are live.
    hip(libs, "hipEventRecord", unsafe {
        (libs.hip.hipEventRecord)(event, stream)
    })
}

/// Whether the most recent record of `event` has completed (`hipErrorNotReady` is `false`).
///
/// # Safety
/// `event` is live.
pub(crate) unsafe fn event_query(libs: Libs, event: HipEventT) -> Result<bool, BackendError> {
    // SAFETY: the caller guarantees the handle is live.
    let code = unsafe { (libs.hip.hipEventQuery)(event) };
    if code == HIP_ERROR_NOT_READY {
        return Ok(false);
    }
    hip(libs, "hipEventQuery", code).map(|()| true)
}

/// Waits for the most recent record of `event`.
///
/// # Safety
/// `event` is live.
pub(crate) unsafe fn event_synchronize(libs: Libs, event: HipEventT) -> Result<(), BackendError> {
    // SAFETY: the caller guarantees the handle is live.
    hip(libs, "hipEventSynchronize", unsafe {
        (libs.hip.hipEventSynchronize)(event)
    })
}

/// Waits for all work on the current device.
pub(crate) fn device_synchronize(libs: Libs) -> Result<(), BackendError> {
    // SAFETY: takes no arguments.
    hip(libs, "hipDeviceSynchronize", unsafe {
        (libs.hip.hipDeviceSynchronize)()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hip_versions_decode() {
        assert_eq!(format_hip_version(60_443_483), "6.4.43483");
        assert_eq!(format_hip_version(70_051_831), "7.0.51831");
        assert_eq!(format_hip_version(50_422_804), "5.4.22804");
    }
}
