//! The raw layer: the C types and constants of the HIP runtime and rocBLAS that this crate
//! uses, the table of the functions it calls (every one listed once, in [`HipApi`] and
//! [`BlasApi`]), and the search that loads both libraries once per process.
//!
//! Nothing here is linked at build time: the libraries are opened with `libloading` the first
//! time a backend is constructed, every symbol is looked up at once, and a missing library or
//! symbol is an error string, never a panic. The loaded libraries are never unloaded (the HIP
//! runtime keeps threads of its own), so the function pointers stay valid for the life of the
//! process.
//!
//! The prototypes follow `hip_runtime_api.h` and `rocblas-functions.h` of ROCm 5 to 7, which
//! agree on every function here. C enums are passed as `c_int` (never as Rust enums, so that an
//! unknown code from a newer library is a number, not undefined behaviour).

use std::ffi::{c_char, c_int, c_uint, c_void};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use libloading::Library;
use num_complex::Complex64;

/// `hipError_t`.
pub(crate) type HipError = c_int;
/// `hipStream_t`: an opaque handle.
pub(crate) type HipStreamT = *mut c_void;
/// `hipEvent_t`: an opaque handle.
pub(crate) type HipEventT = *mut c_void;
/// `rocblas_handle`: an opaque handle.
pub(crate) type RocblasHandle = *mut c_void;
/// `rocblas_status`.
pub(crate) type RocblasStatus = c_int;
/// `rocblas_operation`.
pub(crate) type RocblasOperation = c_int;
/// `rocblas_int` (32 bits in the default, non-ILP64 API).
pub(crate) type RocblasInt = i32;
/// `rocblas_stride`.
pub(crate) type RocblasStride = i64;
/// `rocblas_double_complex`: `{ double x, y; }`, the layout of `Complex64` (`#[repr(C)]`).
pub(crate) type RocblasDoubleComplex = Complex64;

/// `hipPitchedPtr`: linear memory seen as rows of `pitch` bytes, `ysize` rows per slice.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct HipPitchedPtr {
    /// The first byte.
    pub(crate) ptr: *mut c_void,
    /// Bytes between rows.
    pub(crate) pitch: usize,
    /// Bytes of a row that belong to the allocation (the copy's width here).
    pub(crate) xsize: usize,
    /// Rows per slice: slices are `pitch ysize` bytes apart.
    pub(crate) ysize: usize,
}

/// `hipPos` and `hipExtent`: three sizes (x, y, z; width in bytes for linear memory, height,
/// depth).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct HipSize3 {
    /// x, or the width.
    pub(crate) x: usize,
    /// y, or the height.
    pub(crate) y: usize,
    /// z, or the depth.
    pub(crate) z: usize,
}

/// `hipMemcpy3DParms` (ROCm 5 to 7): between linear memories the arrays are null and the
/// positions zero.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct HipMemcpy3DParms {
    /// `hipArray_t`, null.
    pub(crate) src_array: *mut c_void,
    /// Where the copy starts in the source (zero: the pointer says).
    pub(crate) src_pos: HipSize3,
    /// The source.
    pub(crate) src_ptr: HipPitchedPtr,
    /// `hipArray_t`, null.
    pub(crate) dst_array: *mut c_void,
    /// Where the copy starts in the destination (zero: the pointer says).
    pub(crate) dst_pos: HipSize3,
    /// The destination.
    pub(crate) dst_ptr: HipPitchedPtr,
    /// Width in bytes, rows per slice, slices.
    pub(crate) extent: HipSize3,
    /// `hipMemcpyKind`.
    pub(crate) kind: c_int,
}

/// `hipSuccess`.
pub(crate) const HIP_SUCCESS: HipError = 0;
/// `hipErrorOutOfMemory` (also `hipErrorMemoryAllocation`).
pub(crate) const HIP_ERROR_OUT_OF_MEMORY: HipError = 2;
/// `hipErrorNoDevice`.
pub(crate) const HIP_ERROR_NO_DEVICE: HipError = 100;
/// `hipErrorNotReady`: what `hipEventQuery` returns for work still running.
pub(crate) const HIP_ERROR_NOT_READY: HipError = 600;
/// `hipMemcpyHostToDevice`.
pub(crate) const HIP_MEMCPY_HOST_TO_DEVICE: c_int = 1;
/// `hipMemcpyDeviceToHost`.
pub(crate) const HIP_MEMCPY_DEVICE_TO_HOST: c_int = 2;
/// `hipStreamNonBlocking`: no implicit synchronisation with the null stream.
pub(crate) const HIP_STREAM_NON_BLOCKING: c_uint = 0x1;
/// `hipEventDisableTiming`.
pub(crate) const HIP_EVENT_DISABLE_TIMING: c_uint = 0x2;
/// `hipEventDefault`: an event that records time.
pub(crate) const HIP_EVENT_DEFAULT: c_uint = 0x0;
/// `hipEventBlockingSync`: a thread waiting for the event sleeps.
pub(crate) const HIP_EVENT_BLOCKING_SYNC: c_uint = 0x1;
/// `hipDeviceScheduleSpin`.
pub(crate) const HIP_DEVICE_SCHEDULE_SPIN: c_uint = 0x1;
/// `hipDeviceScheduleYield`.
pub(crate) const HIP_DEVICE_SCHEDULE_YIELD: c_uint = 0x2;
/// `hipDeviceScheduleBlockingSync`.
pub(crate) const HIP_DEVICE_SCHEDULE_BLOCKING_SYNC: c_uint = 0x4;
/// `hipHostMallocDefault`: pinned, cached, not write-combined (good both ways).
pub(crate) const HIP_HOST_MALLOC_DEFAULT: c_uint = 0x0;

/// `rocblas_status_success`.
pub(crate) const ROCBLAS_STATUS_SUCCESS: RocblasStatus = 0;
/// `rocblas_operation_none`.
pub(crate) const ROCBLAS_OPERATION_NONE: RocblasOperation = 111;
/// `rocblas_operation_transpose`.
pub(crate) const ROCBLAS_OPERATION_TRANSPOSE: RocblasOperation = 112;
/// `rocblas_operation_conjugate_transpose`.
pub(crate) const ROCBLAS_OPERATION_CONJUGATE_TRANSPOSE: RocblasOperation = 113;
/// `rocblas_pointer_mode_host`: alpha and beta are host pointers, read at the call.
pub(crate) const ROCBLAS_POINTER_MODE_HOST: c_int = 0;

/// Declares a table of C functions: a struct with one typed function pointer per entry, the
/// list of symbol names, and a loader that looks every one of them up.
macro_rules! api {
    (
        $(#[$meta:meta])*
        struct $name:ident from $lib:literal {
            $( fn $f:ident ( $( $arg:ident : $ty:ty ),* $(,)? ) -> $ret:ty; )*
        }
    ) => {
        $(#[$meta])*
        #[allow(non_snake_case)]
        pub(crate) struct $name {
            $( pub(crate) $f: unsafe extern "C" fn($($arg: $ty),*) -> $ret, )*
        }

        impl $name {
            /// The library these functions come from.
            pub(crate) const LIBRARY: &'static str = $lib;
            /// Every symbol of the table, in declaration order.
            pub(crate) const SYMBOLS: &'static [&'static str] = &[$(stringify!($f)),*];

            /// Looks up every symbol in `lib`; lists all the missing ones if any is.
            fn load(lib: &Library, path: &str) -> Result<Self, String> {
                let missing: Vec<&str> = Self::SYMBOLS
                    .iter()
                    .copied()
                    // SAFETY: looking a symbol up only reads the library's symbol table; the
                    // pointer type asked for is never called.
                    .filter(|s| unsafe { lib.get::<*const c_void>(s.as_bytes()) }.is_err())
                    .collect();
                if !missing.is_empty() {
                    return Err(format!(
                        "{path} lacks {} of the {} functions this backend calls ({}): not a \
                         supported ROCm (5 to 7)",
                        missing.len(),
                        Self::SYMBOLS.len(),
                        missing.join(", ")
                    ));
                }
                Ok($name {
                    $( $f: {
                        // SAFETY: the symbol exists (checked above) and is the C function of
                        // that name in the ROCm headers, whose prototype is the one declared
                        // here; the library is never unloaded, so the pointer stays valid.
                        let symbol = unsafe {
                            lib.get::<unsafe extern "C" fn($($arg: $ty),*) -> $ret>(
                                stringify!($f).as_bytes(),
                            )
                        }
                        .map_err(|e| format!("{path}: {}: {e}", stringify!($f)))?;
                        *symbol
                    }, )*
                })
            }
        }
    };
}

api! {
    /// The HIP runtime functions this backend calls.
    struct HipApi from "libamdhip64" {
        fn hipGetDeviceCount(count: *mut c_int) -> HipError;
        fn hipSetDevice(device: c_int) -> HipError;
        fn hipSetDeviceFlags(flags: c_uint) -> HipError;
        fn hipDeviceGet(device: *mut c_int, ordinal: c_int) -> HipError;
        fn hipDeviceGetName(name: *mut c_char, len: c_int, device: c_int) -> HipError;
        fn hipRuntimeGetVersion(version: *mut c_int) -> HipError;
        fn hipGetErrorName(error: HipError) -> *const c_char;
        fn hipGetErrorString(error: HipError) -> *const c_char;
        fn hipMemGetInfo(free: *mut usize, total: *mut usize) -> HipError;
        fn hipMalloc(ptr: *mut *mut c_void, size: usize) -> HipError;
        fn hipFree(ptr: *mut c_void) -> HipError;
        fn hipHostMalloc(ptr: *mut *mut c_void, size: usize, flags: c_uint) -> HipError;
        fn hipHostFree(ptr: *mut c_void) -> HipError;
        fn hipHostRegister(ptr: *mut c_void, size: usize, flags: c_uint) -> HipError;
        fn hipHostUnregister(ptr: *mut c_void) -> HipError;
        fn hipMemcpyAsync(
            dst: *mut c_void,
            src: *const c_void,
            bytes: usize,
            kind: c_int,
            stream: HipStreamT,
        ) -> HipError;
        fn hipMemcpy2DAsync(
            dst: *mut c_void,
            dpitch: usize,
            src: *const c_void,
            spitch: usize,
            width: usize,
            height: usize,
            kind: c_int,
            stream: HipStreamT,
        ) -> HipError;
        fn hipMemcpy3DAsync(parms: *const HipMemcpy3DParms, stream: HipStreamT) -> HipError;
        fn hipStreamCreateWithFlags(stream: *mut HipStreamT, flags: c_uint) -> HipError;
        fn hipStreamDestroy(stream: HipStreamT) -> HipError;
        fn hipStreamSynchronize(stream: HipStreamT) -> HipError;
        fn hipStreamWaitEvent(stream: HipStreamT, event: HipEventT, flags: c_uint) -> HipError;
        fn hipEventCreateWithFlags(event: *mut HipEventT, flags: c_uint) -> HipError;
        fn hipEventDestroy(event: HipEventT) -> HipError;
        fn hipEventRecord(event: HipEventT, stream: HipStreamT) -> HipError;
        fn hipEventQuery(event: HipEventT) -> HipError;
        fn hipEventSynchronize(event: HipEventT) -> HipError;
        fn hipEventElapsedTime(ms: *mut f32, start: HipEventT, stop: HipEventT) -> HipError;
        fn hipDeviceSynchronize() -> HipError;
    }
}

api! {
    /// The rocBLAS functions this backend calls.
    struct BlasApi from "librocblas" {
        fn rocblas_create_handle(handle: *mut RocblasHandle) -> RocblasStatus;
        fn rocblas_destroy_handle(handle: RocblasHandle) -> RocblasStatus;
        fn rocblas_set_stream(handle: RocblasHandle, stream: HipStreamT) -> RocblasStatus;
        fn rocblas_set_pointer_mode(handle: RocblasHandle, mode: c_int) -> RocblasStatus;
        fn rocblas_status_to_string(status: RocblasStatus) -> *const c_char;
        fn rocblas_get_version_string(buf: *mut c_char, len: usize) -> RocblasStatus;
        fn rocblas_zgemm_batched(
            handle: RocblasHandle,
            trans_a: RocblasOperation,
            trans_b: RocblasOperation,
            m: RocblasInt,
            n: RocblasInt,
            k: RocblasInt,
            alpha: *const RocblasDoubleComplex,
            a: *const *const RocblasDoubleComplex,
            lda: RocblasInt,
            b: *const *const RocblasDoubleComplex,
            ldb: RocblasInt,
            beta: *const RocblasDoubleComplex,
            c: *const *mut RocblasDoubleComplex,
            ldc: RocblasInt,
            batch_count: RocblasInt,
        ) -> RocblasStatus;
        fn rocblas_zgemm_strided_batched(
            handle: RocblasHandle,
            trans_a: RocblasOperation,
            trans_b: RocblasOperation,
            m: RocblasInt,
            n: RocblasInt,
            k: RocblasInt,
            alpha: *const RocblasDoubleComplex,
            a: *const RocblasDoubleComplex,
            lda: RocblasInt,
            stride_a: RocblasStride,
            b: *const RocblasDoubleComplex,
            ldb: RocblasInt,
            stride_b: RocblasStride,
            beta: *const RocblasDoubleComplex,
            c: *mut RocblasDoubleComplex,
            ldc: RocblasInt,
            stride_c: RocblasStride,
            batch_count: RocblasInt,
        ) -> RocblasStatus;
        fn rocblas_zgeam(
            handle: RocblasHandle,
            trans_a: RocblasOperation,
            trans_b: RocblasOperation,
            m: RocblasInt,
            n: RocblasInt,
            alpha: *const RocblasDoubleComplex,
            a: *const RocblasDoubleComplex,
            lda: RocblasInt,
            beta: *const RocblasDoubleComplex,
            b: *const RocblasDoubleComplex,
            ldb: RocblasInt,
            c: *mut RocblasDoubleComplex,
            ldc: RocblasInt,
        ) -> RocblasStatus;
    }
}

/// Both libraries, loaded, with every function looked up.
pub(crate) struct Libraries {
    /// The HIP runtime.
    pub(crate) hip: HipApi,
    /// rocBLAS.
    pub(crate) blas: BlasApi,
    /// The name the HIP runtime was opened by (a path, or a soname the loader resolved).
    pub(crate) hip_opened: String,
    /// The name rocBLAS was opened by.
    pub(crate) blas_opened: String,
}

impl fmt::Debug for Libraries {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Libraries")
            .field("hip", &self.hip_opened)
            .field("rocblas", &self.blas_opened)
            .finish()
    }
}

/// One library to find: the stem of its file name and the major versions of its soname to try
/// after the unversioned name, newest first.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Wanted {
    /// `libamdhip64`, `librocblas`.
    pub(crate) stem: &'static str,
    /// Soname major versions.
    pub(crate) versions: &'static [&'static str],
}

/// The HIP runtime: `libamdhip64.so.7` in ROCm 7, `.6` in ROCm 6, `.5` in ROCm 5.
pub(crate) const HIP: Wanted = Wanted {
    stem: HipApi::LIBRARY,
    versions: &["7", "6", "5"],
};

/// rocBLAS: `librocblas.so.5` in ROCm 7, `.4` in ROCm 6, `.3` and `.0` in ROCm 5.
pub(crate) const ROCBLAS: Wanted = Wanted {
    stem: BlasApi::LIBRARY,
    versions: &["5", "4", "3", "0"],
};

/// Where ROCm is installed when `ROCM_PATH` does not say.
pub(crate) const DEFAULT_ROCM: &str = "/opt/rocm";

/// The names to try for `w`, in order: in `first_dir` (for rocBLAS, the directory the HIP
/// runtime came from, so that both come from one installation), in `$ROCM_PATH/lib`, then bare
/// sonames for the dynamic loader (`LD_LIBRARY_PATH`, the `ldconfig` cache, the system
/// directories), then in `/opt/rocm/lib`. The unversioned name comes first in each place, then
/// the versioned sonames, newest first. No name appears twice.
pub(crate) fn candidates(
    w: &Wanted,
    first_dir: Option<&Path>,
    rocm_path: Option<&str>,
) -> Vec<String> {
    let names: Vec<String> = std::iter::once(format!("{}.so", w.stem))
        .chain(w.versions.iter().map(|v| format!("{}.so.{v}", w.stem)))
        .collect();
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(d) = first_dir {
        dirs.push(d.to_path_buf());
    }
    if let Some(r) = rocm_path.filter(|r| !r.trim().is_empty()) {
        dirs.push(Path::new(r).join("lib"));
    }
    let in_dir = |d: &Path| -> Vec<String> {
        names
            .iter()
            .map(|n| d.join(n).display().to_string())
            .collect()
    };
    let mut out: Vec<String> = dirs.iter().flat_map(|d| in_dir(d)).collect();
    out.extend(names.iter().cloned());
    out.extend(in_dir(&Path::new(DEFAULT_ROCM).join("lib")));
    let mut seen = std::collections::HashSet::new();
    out.retain(|c| seen.insert(c.clone()));
    out
}

/// Text on one line: line breaks become spaces.
pub(crate) fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Opens the first of `tried` that loads. A name that exists but fails to load (a missing
/// dependency, the wrong architecture) is reported as such; otherwise the error says the
/// library was not found and lists where it was looked for.
/// An error and its sources, `: `-separated (libloading 0.9 keeps `dlerror`'s text in the
/// source: `"dlopen failed: <path>: cannot open shared object file: ..."`).
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

pub(crate) fn open_first(
    w: &Wanted,
    tried: &[String],
    first_dir: Option<&Path>,
    rocm_path: Option<&str>,
) -> Result<(Library, String), String> {
    let mut broken: Option<String> = None;
    for name in tried {
        // SAFETY: opening a shared library runs its initialisers. The names are those of AMD's
        // ROCm libraries (or what the user pointed ROCM_PATH at), which are made to be loaded
        // into any process that uses the GPU; nothing else is run.
        match unsafe { Library::new(name) } {
            Ok(lib) => return Ok((lib, name.clone())),
            Err(e) => {
                let text = one_line(&error_chain(&e));
                if broken.is_none() && !text.contains("No such file or directory") {
                    broken = Some(text);
                }
            }
        }
    }
    if let Some(text) = broken {
        return Err(format!(
            "{} was found but could not be loaded: {text}",
            w.stem
        ));
    }
    let sonames: Vec<String> = std::iter::once(format!("{}.so", w.stem))
        .chain(w.versions.iter().map(|v| format!("{}.so.{v}", w.stem)))
        .collect();
    let mut places = Vec::new();
    if let Some(d) = first_dir {
        places.push(format!("in {}", d.display()));
    }
    if let Some(r) = rocm_path.filter(|r| !r.trim().is_empty()) {
        places.push(format!("in {}", Path::new(r).join("lib").display()));
    }
    places.push("through the dynamic loader".to_owned());
    places.push(format!("in {DEFAULT_ROCM}/lib"));
    places.dedup();
    Err(format!(
        "{} not found (tried {} {}); install ROCm or set ROCM_PATH to its directory",
        w.stem,
        sonames.join(", "),
        places.join(", ")
    ))
}

/// Opens one library and looks up its table. The library is never unloaded, whatever happens:
/// unloading the HIP runtime once it has started is not safe.
fn load_table<T>(
    w: &Wanted,
    first_dir: Option<&Path>,
    rocm_path: Option<&str>,
    table: impl FnOnce(&Library, &str) -> Result<T, String>,
) -> Result<(T, String), String> {
    let tried = candidates(w, first_dir, rocm_path);
    let (lib, opened) = open_first(w, &tried, first_dir, rocm_path)?;
    let result = table(&lib, &opened);
    std::mem::forget(lib);
    result.map(|t| (t, opened))
}

/// Loads the HIP runtime and then rocBLAS (from the HIP runtime's directory first).
fn load_all() -> Result<Libraries, String> {
    let rocm_path = std::env::var("ROCM_PATH").ok();
    let rocm_path = rocm_path.as_deref();
    let (hip, hip_opened) =
        load_table(&HIP, None, rocm_path, HipApi::load).map_err(|e| format!("HIP runtime: {e}"))?;
    let hip_dir =
        memhc_gpu::loaded_library(HIP.stem).and_then(|p| p.parent().map(Path::to_path_buf));
    let (blas, blas_opened) = load_table(&ROCBLAS, hip_dir.as_deref(), rocm_path, BlasApi::load)
        .map_err(|e| format!("rocBLAS: {e}"))?;
    Ok(Libraries {
        hip,
        blas,
        hip_opened,
        blas_opened,
    })
}

/// Both libraries, loaded on the first call (the outcome, success or error, is kept for the
/// life of the process).
pub(crate) fn libraries() -> Result<&'static Libraries, String> {
    static LIBRARIES: OnceLock<Result<Libraries, String>> = OnceLock::new();
    LIBRARIES
        .get_or_init(load_all)
        .as_ref()
        .map_err(Clone::clone)
}

/// Tries to load `path` as the HIP runtime and look up its table: for tests of the loader
/// against a library that is not one.
#[cfg(test)]
pub(crate) fn try_hip_table(path: &str) -> Result<(), String> {
    let tried = vec![path.to_owned()];
    let (lib, opened) = open_first(&HIP, &tried, None, None)?;
    let result = HipApi::load(&lib, &opened).map(drop);
    std::mem::forget(lib);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_in_order_without_duplicates() {
        let c = candidates(&HIP, None, None);
        assert_eq!(
            c,
            vec![
                "libamdhip64.so",
                "libamdhip64.so.7",
                "libamdhip64.so.6",
                "libamdhip64.so.5",
                "/opt/rocm/lib/libamdhip64.so",
                "/opt/rocm/lib/libamdhip64.so.7",
                "/opt/rocm/lib/libamdhip64.so.6",
                "/opt/rocm/lib/libamdhip64.so.5",
            ]
        );
        let c = candidates(
            &ROCBLAS,
            Some(Path::new("/opt/rocm-6.4.3/lib")),
            Some("/opt/rocm"),
        );
        assert_eq!(c[0], "/opt/rocm-6.4.3/lib/librocblas.so");
        assert_eq!(c[4], "/opt/rocm-6.4.3/lib/librocblas.so.0");
        assert_eq!(c[5], "/opt/rocm/lib/librocblas.so");
        assert_eq!(c[10], "librocblas.so");
        // /opt/rocm/lib came first through ROCM_PATH and is not repeated at the end.
        assert_eq!(c.len(), 15);
        assert_eq!(c.last().map(String::as_str), Some("librocblas.so.0"));
    }

    #[test]
    fn a_missing_library_is_one_line_naming_it() {
        let tried = vec!["/nonexistent/libamdhip64.so.6".to_owned()];
        let e = open_first(&HIP, &tried, None, Some("/somewhere"))
            .err()
            .unwrap_or_default();
        assert!(
            e.starts_with("libamdhip64 not found (tried libamdhip64.so, "),
            "{e}"
        );
        assert!(
            e.contains("in /somewhere/lib, through the dynamic loader"),
            "{e}"
        );
        assert!(!e.contains('\n'));
        let e = open_first(
            &ROCBLAS,
            &tried,
            Some(Path::new("/opt/rocm-6.4.3/lib")),
            None,
        )
        .err()
        .unwrap_or_default();
        assert!(
            e.contains("in /opt/rocm-6.4.3/lib, through the dynamic loader, in /opt/rocm/lib)"),
            "{e}"
        );
    }

    #[test]
    fn a_library_without_the_symbols_is_refused_without_panicking() {
        // Any library that loads but is not the HIP runtime: the C library every Rust
        // program on Linux already maps.
        let Some(libc) =
            memhc_gpu::loaded_library("libc.so").or_else(|| memhc_gpu::loaded_library("libc-"))
        else {
            eprintln!("SKIPPED: no libc found in /proc/self/maps");
            return;
        };
        let e = try_hip_table(&libc.display().to_string())
            .err()
            .unwrap_or_default();
        assert!(
            e.contains(&format!(
                "lacks {} of the {}",
                HipApi::SYMBOLS.len(),
                HipApi::SYMBOLS.len()
            )),
            "{e}"
        );
        assert!(e.contains("hipMalloc, hipFree"), "{e}");
        assert!(!e.contains('\n'));
    }

    #[test]
    fn a_file_that_is_not_a_library_is_reported_as_such() {
        let path =
            std::env::temp_dir().join(format!("memhc-hip-not-a-library-{}.so", std::process::id()));
        if std::fs::write(&path, b"not an ELF file").is_err() {
            eprintln!("SKIPPED: cannot write {}", path.display());
            return;
        }
        let e = try_hip_table(&path.display().to_string())
            .err()
            .unwrap_or_default();
        let _ = std::fs::remove_file(&path);
        assert!(
            e.starts_with("libamdhip64 was found but could not be loaded: "),
            "{e}"
        );
        assert!(!e.contains('\n'));
    }

    #[test]
    fn tables_list_every_symbol_once() {
        // 27 since hipHostRegister, hipHostUnregister (issue 29) and hipMemcpy2DAsync (issue 30);
        // 28 since hipSetDeviceFlags (MEMHC_GPU_WAIT); 29 since hipMemcpy3DAsync (tiled copies
        // per block column).
        assert_eq!(HipApi::SYMBOLS.len(), 29);
        assert_eq!(BlasApi::SYMBOLS.len(), 9);
        let mut all: Vec<&str> = HipApi::SYMBOLS
            .iter()
            .chain(BlasApi::SYMBOLS)
            .copied()
            .collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 38);
    }
}
