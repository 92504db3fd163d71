//! Checked calls into the CUDA driver: each function makes one driver call (through cudarc's
//! `result` layer where it has one, its `sys` layer where not) and turns its status into a
//! [`BackendError`]. Every `unsafe` block of the driver side of this crate is here; the owning
//! types above it ([`crate::handles`]: memory, page-locked host memory, streams and events;
//! [`crate::context`]) keep the handles they pass valid.
//!
//! Call [`crate::probe()`] (which opens the driver) before any of these: cudarc panics on a missing library.

use std::ffi::{CStr, c_int};

use cudarc::driver::result::{self, DriverError};
use cudarc::driver::sys::{self, CUcontext, CUdevice, CUevent, CUresult, CUstream};
use memhc_backend::BackendError;

/// A device address.
pub type DevicePtr = sys::CUdeviceptr;

/// The driver's name and description of an error, for messages.
pub fn describe(e: DriverError) -> String {
    let name = e
        .error_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|_| format!("{:?}", e.0));
    match e.error_string() {
        Ok(s) => format!("{name}: {}", s.to_string_lossy()),
        Err(_) => name,
    }
}

/// `BackendError::Driver` for a failed call.
pub fn fail(call: &'static str, e: DriverError) -> BackendError {
    BackendError::Driver {
        call,
        message: describe(e),
    }
}

fn check(call: &'static str, status: CUresult) -> Result<(), BackendError> {
    status.result().map_err(|e| fail(call, e))
}

/// `cuInit(0)`.
pub fn init() -> Result<(), BackendError> {
    result::init().map_err(|e| fail("cuInit", e))
}

/// The driver's CUDA version, as `1000 * major + 10 * minor`.
pub fn driver_version() -> Result<i32, BackendError> {
    let mut v: c_int = 0;
    // SAFETY: the driver writes one int through a valid pointer.
    check("cuDriverGetVersion", unsafe {
        sys::cuDriverGetVersion(&mut v)
    })?;
    Ok(v)
}

/// The number of CUDA devices.
pub fn device_count() -> Result<i32, BackendError> {
    result::device::get_count().map_err(|e| fail("cuDeviceGetCount", e))
}

/// The device of an ordinal.
pub fn device(ordinal: i32) -> Result<CUdevice, BackendError> {
    result::device::get(ordinal).map_err(|e| fail("cuDeviceGet", e))
}

/// The device's name.
pub fn device_name(dev: CUdevice) -> Result<String, BackendError> {
    let mut buf = [0u8; 256];
    // SAFETY: the driver writes at most `buf.len()` bytes, NUL-terminated, into `buf`.
    check("cuDeviceGetName", unsafe {
        sys::cuDeviceGetName(buf.as_mut_ptr().cast(), buf.len() as c_int, dev)
    })?;
    Ok(CStr::from_bytes_until_nul(&buf)
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| String::from_utf8_lossy(&buf).into_owned()))
}

/// An integer attribute of the device.
pub fn device_attribute(dev: CUdevice, attr: sys::CUdevice_attribute) -> Result<i32, BackendError> {
    // SAFETY: `dev` came from `cuDeviceGet`; the driver writes one int.
    unsafe { result::device::get_attribute(dev, attr) }.map_err(|e| fail("cuDeviceGetAttribute", e))
}

/// Retains the device's primary context.
pub fn primary_ctx_retain(dev: CUdevice) -> Result<CUcontext, BackendError> {
    // SAFETY: `dev` came from `cuDeviceGet`.
    unsafe { result::primary_ctx::retain(dev) }.map_err(|e| fail("cuDevicePrimaryCtxRetain", e))
}

/// Sets the flags of the device's primary context (`CU_CTX_SCHED_*`: how host threads wait),
/// before it is retained; allowed while it is active too (CUDA 11 and later).
pub fn primary_ctx_set_flags(dev: CUdevice, flags: u32) -> Result<(), BackendError> {
    // SAFETY: `dev` came from `cuDeviceGet`; the call reads only its arguments.
    check("cuDevicePrimaryCtxSetFlags", unsafe {
        sys::cuDevicePrimaryCtxSetFlags_v2(dev, flags)
    })
}

/// Releases a primary context retained by [`primary_ctx_retain`].
///
/// # Safety
/// Called once per successful retain, after every object of the context is destroyed.
pub unsafe fn primary_ctx_release(dev: CUdevice) -> Result<(), BackendError> {
    // SAFETY: the caller pairs this with a retain.
    unsafe { result::primary_ctx::release(dev) }.map_err(|e| fail("cuDevicePrimaryCtxRelease", e))
}

/// Makes `ctx` current on the calling thread.
///
/// # Safety
/// `ctx` is a live context.
pub unsafe fn set_current(ctx: CUcontext) -> Result<(), BackendError> {
    // SAFETY: the caller keeps `ctx` alive.
    unsafe { result::ctx::set_current(ctx) }.map_err(|e| fail("cuCtxSetCurrent", e))
}

/// Waits for all work of the current context.
pub fn ctx_synchronize() -> Result<(), BackendError> {
    result::ctx::synchronize().map_err(|e| fail("cuCtxSynchronize", e))
}

/// Free and total device memory of the current context's device.
pub fn mem_get_info() -> Result<(usize, usize), BackendError> {
    result::mem_get_info().map_err(|e| fail("cuMemGetInfo", e))
}

fn oom_or(call: &'static str, bytes: usize, e: DriverError) -> BackendError {
    if e.0 == CUresult::CUDA_ERROR_OUT_OF_MEMORY {
        BackendError::OutOfMemory {
            requested: bytes,
            free: mem_get_info().map_or(0, |(free, _)| free),
        }
    } else {
        fail(call, e)
    }
}

/// `cuMemAlloc`: synchronous device memory, not the stream-ordered pool.
pub fn mem_alloc(bytes: usize) -> Result<DevicePtr, BackendError> {
    // SAFETY: the memory is handed out uninitialised as bytes, which any value is.
    unsafe { result::malloc_sync(bytes) }.map_err(|e| oom_or("cuMemAlloc", bytes, e))
}

/// `cuMemAllocManaged` with global attachment.
pub fn mem_alloc_managed(bytes: usize) -> Result<DevicePtr, BackendError> {
    // SAFETY: as for `mem_alloc`.
    unsafe { result::malloc_managed(bytes, sys::CUmemAttach_flags::CU_MEM_ATTACH_GLOBAL) }
        .map_err(|e| oom_or("cuMemAllocManaged", bytes, e))
}

/// `cuMemFree`, for device and managed memory.
///
/// # Safety
/// `ptr` came from [`mem_alloc`] or [`mem_alloc_managed`], is freed once, and no queued work
/// uses it.
pub unsafe fn mem_free(ptr: DevicePtr) -> Result<(), BackendError> {
    // SAFETY: the caller's contract.
    unsafe { result::free_sync(ptr) }.map_err(|e| fail("cuMemFree", e))
}

/// `cuMemHostAlloc` with no flags: page-locked, cached (not write-combined, so that the host
/// reads device-to-host results at full speed), usable by the context it was made in.
pub fn host_alloc(bytes: usize) -> Result<*mut u8, BackendError> {
    // SAFETY: the memory is handed out as raw bytes.
    unsafe { result::malloc_host(bytes, 0) }
        .map(|p| p.cast::<u8>())
        .map_err(|e| oom_or("cuMemHostAlloc", bytes, e))
}

/// `cuMemFreeHost`.
///
/// # Safety
/// `ptr` came from [`host_alloc`], is freed once, and no queued copy uses it.
pub unsafe fn host_free(ptr: *mut u8) -> Result<(), BackendError> {
    // SAFETY: the caller's contract.
    unsafe { result::free_host(ptr.cast()) }.map_err(|e| fail("cuMemFreeHost", e))
}

/// `cuMemHostRegister` with no flags: page-locks `bytes` of the caller's memory from `ptr` in
/// place, for the current context.
///
/// # Safety
/// `ptr` is valid for `bytes` and stays allocated until [`host_unregister`] (the caller owns it
/// and does not free it before).
pub unsafe fn host_register(ptr: *mut u8, bytes: usize) -> Result<(), BackendError> {
    // SAFETY: the caller's contract.
    check("cuMemHostRegister", unsafe {
        sys::cuMemHostRegister_v2(ptr.cast(), bytes, 0)
    })
}

/// `cuMemHostUnregister`.
///
/// # Safety
/// `ptr` was registered by [`host_register`] and not unregistered since; no queued copy uses it.
pub unsafe fn host_unregister(ptr: *mut u8) -> Result<(), BackendError> {
    // SAFETY: the caller's contract.
    check("cuMemHostUnregister", unsafe {
        sys::cuMemHostUnregister(ptr.cast())
    })
}

/// Enqueues a copy of `bytes` from host `src` to device `dst`.
///
/// # Safety
/// `src` is page-locked, valid for `bytes` and left untouched until the copy completes; `dst`
/// is valid for `bytes`; `stream` is live.
pub unsafe fn memcpy_htod_async(
    dst: DevicePtr,
    src: *const u8,
    bytes: usize,
    stream: CUstream,
) -> Result<(), BackendError> {
    // SAFETY: the caller's contract.
    check("cuMemcpyHtoDAsync", unsafe {
        sys::cuMemcpyHtoDAsync_v2(dst, src.cast(), bytes, stream)
    })
}

/// Enqueues a copy of `bytes` from device `src` to host `dst`.
///
/// # Safety
/// `dst` is page-locked, valid for `bytes` and not accessed until the copy completes; `src` is
/// valid for `bytes`; `stream` is live.
pub unsafe fn memcpy_dtoh_async(
    dst: *mut u8,
    src: DevicePtr,
    bytes: usize,
    stream: CUstream,
) -> Result<(), BackendError> {
    // SAFETY: the caller's contract.
    check("cuMemcpyDtoHAsync", unsafe {
        sys::cuMemcpyDtoHAsync_v2(dst.cast(), src, bytes, stream)
    })
}

/// Which way a 2D or 3D copy goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// From page-locked host memory to the device.
    HostToDevice,
    /// From the device to page-locked host memory.
    DeviceToHost,
}

/// Enqueues a 2D copy (`cuMemcpy2DAsync`): `height` rows of `width` bytes, from `host` (rows
/// `host_pitch` apart) to `device` (rows `device_pitch` apart) or back, as `direction` says.
///
/// # Safety
/// `host` is page-locked and valid for `(height - 1) host_pitch + width` bytes, `device` for
/// `(height - 1) device_pitch + width` bytes; the host side is left untouched until the copy
/// completes; `stream` is live.
pub unsafe fn memcpy_2d_async(
    direction: Direction,
    (host, host_pitch): (*mut u8, usize),
    (device, device_pitch): (DevicePtr, usize),
    (width, height): (usize, usize),
    stream: CUstream,
) -> Result<(), BackendError> {
    let (host_type, device_type) = (
        sys::CUmemorytype::CU_MEMORYTYPE_HOST,
        sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
    );
    let mut copy = sys::CUDA_MEMCPY2D {
        srcXInBytes: 0,
        srcY: 0,
        srcMemoryType: host_type,
        srcHost: std::ptr::null(),
        srcDevice: 0,
        srcArray: std::ptr::null_mut(),
        srcPitch: 0,
        dstXInBytes: 0,
        dstY: 0,
        dstMemoryType: device_type,
        dstHost: std::ptr::null_mut(),
        dstDevice: 0,
        dstArray: std::ptr::null_mut(),
        dstPitch: 0,
        WidthInBytes: width,
        Height: height,
    };
    match direction {
        Direction::HostToDevice => {
            (copy.srcHost, copy.srcPitch) = (host.cast_const().cast(), host_pitch);
            (copy.dstDevice, copy.dstPitch) = (device, device_pitch);
        }
        Direction::DeviceToHost => {
            (copy.srcMemoryType, copy.dstMemoryType) = (device_type, host_type);
            (copy.srcDevice, copy.srcPitch) = (device, device_pitch);
            (copy.dstHost, copy.dstPitch) = (host.cast(), host_pitch);
        }
    }
    // SAFETY: the caller's contract; `copy` is a complete descriptor that lives through the
    // call (the driver reads it before returning).
    check("cuMemcpy2DAsync", unsafe {
        sys::cuMemcpy2DAsync_v2(&copy, stream)
    })
}

/// Enqueues a 3D copy (`cuMemcpy3DAsync`): `depth` slices of `height` rows of `width` bytes,
/// from `host` (rows `host_pitch` apart, slices `host_pitch host_height` apart) to `device`
/// (rows `device_pitch` apart, slices `device_pitch device_height` apart) or back, as
/// `direction` says.
///
/// # Safety
/// `host` is page-locked and valid for `(depth - 1) host_height host_pitch + (height - 1)
/// host_pitch + width` bytes, `device` likewise with its pitch and rows per slice; the host
/// side is left untouched until the copy completes; `stream` is live.
pub unsafe fn memcpy_3d_async(
    direction: Direction,
    (host, host_pitch, host_height): (*mut u8, usize, usize),
    (device, device_pitch, device_height): (DevicePtr, usize, usize),
    (width, height, depth): (usize, usize, usize),
    stream: CUstream,
) -> Result<(), BackendError> {
    let (host_type, device_type) = (
        sys::CUmemorytype::CU_MEMORYTYPE_HOST,
        sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
    );
    let mut copy = sys::CUDA_MEMCPY3D {
        srcXInBytes: 0,
        srcY: 0,
        srcZ: 0,
        srcLOD: 0,
        srcMemoryType: host_type,
        srcHost: std::ptr::null(),
        srcDevice: 0,
        srcArray: std::ptr::null_mut(),
        reserved0: std::ptr::null_mut(),
        srcPitch: 0,
        srcHeight: 0,
        dstXInBytes: 0,
        dstY: 0,
        dstZ: 0,
        dstLOD: 0,
        dstMemoryType: device_type,
        dstHost: std::ptr::null_mut(),
        dstDevice: 0,
        dstArray: std::ptr::null_mut(),
        reserved1: std::ptr::null_mut(),
        dstPitch: 0,
        dstHeight: 0,
        WidthInBytes: width,
        Height: height,
        Depth: depth,
    };
    match direction {
        Direction::HostToDevice => {
            (copy.srcHost, copy.srcPitch, copy.srcHeight) =
                (host.cast_const().cast(), host_pitch, host_height);
            (copy.dstDevice, copy.dstPitch, copy.dstHeight) = (device, device_pitch, device_height);
        }
        Direction::DeviceToHost => {
            (copy.srcMemoryType, copy.dstMemoryType) = (device_type, host_type);
            (copy.srcDevice, copy.srcPitch, copy.srcHeight) = (device, device_pitch, device_height);
            (copy.dstHost, copy.dstPitch, copy.dstHeight) = (host.cast(), host_pitch, host_height);
        }
    }
    // SAFETY: the caller's contract; `copy` is a complete descriptor (reserved fields null, no
    // arrays) that lives through the call (the driver reads it before returning).
    check("cuMemcpy3DAsync", unsafe {
        sys::cuMemcpy3DAsync_v2(&copy, stream)
    })
}

fn location(device: Option<i32>) -> sys::CUmemLocation {
    match device {
        Some(id) => sys::CUmemLocation {
            type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
            id,
        },
        None => sys::CUmemLocation {
            type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_HOST,
            id: 0,
        },
    }
}

/// Advises that managed range `[ptr, ptr + bytes)` is mostly read.
///
/// # Safety
/// The range is one whole managed allocation.
pub unsafe fn advise_read_mostly(
    ptr: DevicePtr,
    bytes: usize,
    device: i32,
) -> Result<(), BackendError> {
    // SAFETY: the caller's contract.
    unsafe {
        result::mem_advise(
            ptr,
            bytes,
            sys::CUmem_advise::CU_MEM_ADVISE_SET_READ_MOSTLY,
            location(Some(device)),
        )
    }
    .map_err(|e| fail("cuMemAdvise", e))
}

/// Enqueues a migration of managed range `[ptr, ptr + bytes)` to `device` (or the host for
/// `None`).
///
/// # Safety
/// The range is one whole managed allocation; `stream` is live.
pub unsafe fn prefetch_async(
    ptr: DevicePtr,
    bytes: usize,
    device: Option<i32>,
    stream: CUstream,
) -> Result<(), BackendError> {
    // SAFETY: the caller's contract.
    unsafe { result::mem_prefetch_async(ptr, bytes, location(device), stream) }
        .map_err(|e| fail("cuMemPrefetchAsync", e))
}

/// A non-blocking stream (no implicit synchronisation with the legacy default stream).
pub fn stream_create() -> Result<CUstream, BackendError> {
    result::stream::create(result::stream::StreamKind::NonBlocking)
        .map_err(|e| fail("cuStreamCreate", e))
}

/// Destroys a stream.
///
/// # Safety
/// `stream` is live and destroyed once.
pub unsafe fn stream_destroy(stream: CUstream) -> Result<(), BackendError> {
    // SAFETY: the caller's contract.
    unsafe { result::stream::destroy(stream) }.map_err(|e| fail("cuStreamDestroy", e))
}

/// Waits for all work on a stream.
///
/// # Safety
/// `stream` is live.
pub unsafe fn stream_synchronize(stream: CUstream) -> Result<(), BackendError> {
    // SAFETY: the caller's contract.
    unsafe { result::stream::synchronize(stream) }.map_err(|e| fail("cuStreamSynchronize", e))
}

/// Makes `stream` wait for the most recent record of `event`.
///
/// # Safety
/// Both are live.
pub unsafe fn stream_wait_event(stream: CUstream, event: CUevent) -> Result<(), BackendError> {
    // SAFETY: the caller's contract.
    check("cuStreamWaitEvent", unsafe {
        sys::cuStreamWaitEvent(stream, event, 0)
    })
}

/// An event without timing (the cheapest kind: it only orders); with `blocking`, a thread that
/// waits for it sleeps (`CU_EVENT_BLOCKING_SYNC`) rather than spinning.
pub fn event_create(blocking: bool) -> Result<CUevent, BackendError> {
    event_with_flags(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32, blocking)
}

/// An event that records time (`CU_EVENT_DEFAULT`), for [`event_elapsed_ms`]; `blocking` as in
/// [`event_create`].
pub fn timing_event_create(blocking: bool) -> Result<CUevent, BackendError> {
    event_with_flags(sys::CUevent_flags::CU_EVENT_DEFAULT as u32, blocking)
}

fn event_with_flags(flags: u32, blocking: bool) -> Result<CUevent, BackendError> {
    let blocking_flag = sys::CUevent_flags::CU_EVENT_BLOCKING_SYNC as u32;
    let flags = if blocking {
        flags | blocking_flag
    } else {
        flags
    };
    let mut event = std::mem::MaybeUninit::uninit();
    // SAFETY: the driver writes one event handle into `event` when it returns success.
    check("cuEventCreate", unsafe {
        sys::cuEventCreate(event.as_mut_ptr(), flags)
    })?;
    // SAFETY: initialised by the successful call above.
    Ok(unsafe { event.assume_init() })
}

/// Milliseconds between the completed records of two timing events.
///
/// # Safety
/// Both are live events of the current context.
pub unsafe fn event_elapsed_ms(start: CUevent, end: CUevent) -> Result<f32, BackendError> {
    // SAFETY: the caller keeps both events live; the driver checks that they were created with
    // timing and that their records completed.
    unsafe { result::event::elapsed(start, end) }.map_err(|e| fail("cuEventElapsedTime", e))
}

/// Records `event` on `stream`.
///
/// # Safety
/// Both are live.
pub unsafe fn event_record(event: CUevent, stream: CUstream) -> Result<(), BackendError> {
    // SAFETY: the caller's contract.
    unsafe { result::event::record(event, stream) }.map_err(|e| fail("cuEventRecord", e))
}

/// Whether the most recent record of `event` has completed.
///
/// # Safety
/// `event` is live.
pub unsafe fn event_query(event: CUevent) -> Result<bool, BackendError> {
    // SAFETY: the caller's contract.
    match unsafe { result::event::query(event) } {
        Ok(()) => Ok(true),
        Err(e) if e.0 == CUresult::CUDA_ERROR_NOT_READY => Ok(false),
        Err(e) => Err(fail("cuEventQuery", e)),
    }
}

/// Waits for the most recent record of `event`.
///
/// # Safety
/// `event` is live.
pub unsafe fn event_synchronize(event: CUevent) -> Result<(), BackendError> {
    // SAFETY: the caller's contract.
    unsafe { result::event::synchronize(event) }.map_err(|e| fail("cuEventSynchronize", e))
}

/// Destroys an event (allowed before it completes: the driver releases it at completion).
///
/// # Safety
/// `event` is live and destroyed once.
pub unsafe fn event_destroy(event: CUevent) -> Result<(), BackendError> {
    // SAFETY: the caller's contract.
    unsafe { result::event::destroy(event) }.map_err(|e| fail("cuEventDestroy", e))
}
