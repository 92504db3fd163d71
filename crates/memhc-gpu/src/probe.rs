//! What both GPU backends report before opening a device: the libraries they loaded and how
//! many devices the driver sees.

use std::path::PathBuf;

/// What a machine offers a GPU backend, found without opening a device: each backend crate's
/// `probe()` returns it, or [`BackendError::Unavailable`](memhc_backend::BackendError::Unavailable)
/// with a one-line reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Probe {
    /// The driver or runtime library file this process mapped (`libcuda`, `libamdhip64`), or
    /// the name it was opened by where the platform does not say.
    pub runtime_library: String,
    /// The BLAS library file this process mapped (`libcublas`, `librocblas`), or the name it
    /// was opened by.
    pub blas_library: String,
    /// Devices the driver sees (at least one).
    pub devices: usize,
}

/// The path of the shared library, among those this process has mapped, whose file name
/// starts with `prefix` (`"libcublas."`, say); `None` if none is mapped or the platform does
/// not say (only Linux's `/proc/self/maps` is read).
pub fn loaded_library(prefix: &str) -> Option<PathBuf> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines()
        .filter_map(|line| line.split_whitespace().nth(5))
        .map(PathBuf::from)
        .find(|p| {
            p.file_name()
                .and_then(|f| f.to_str())
                .is_some_and(|f| f.starts_with(prefix))
        })
}

/// The file [`loaded_library`] finds for `prefix`, else `opened` (the name the library was
/// opened by), as text for a message.
pub fn library_path(prefix: &str, opened: &str) -> String {
    loaded_library(prefix).map_or_else(|| opened.to_owned(), |p| p.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_maps_its_c_library() {
        // Every Linux process running Rust's std maps libc; elsewhere nothing is reported.
        if cfg!(target_os = "linux") {
            let libc = loaded_library("libc.").or_else(|| loaded_library("libc-"));
            assert!(libc.is_some_and(|p| p.is_absolute()));
        }
        assert!(loaded_library("libnot-a-library-anywhere").is_none());
        assert_eq!(library_path("libnot-a-library", "libx.so"), "libx.so");
    }
}
