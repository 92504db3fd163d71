//! Host memory admission, shared by every entry point (the C ABI, Python, `memhc`,
//! `memhc-synth`, campaigns): a size that comes from a caller or a file is worked out with
//! checked arithmetic and compared with what the host has *before* any memory is taken, because
//! a failed allocation aborts a Rust process and cannot be caught.
//!
//! What the host has ([`host_memory`]): the environment variable [`HOST_MEMORY_VAR`]
//! (`MEMHC_HOST_MEMORY`: bytes with an optional K, M, G or T suffix, or `off` for no check)
//! when set, else on Linux `MemAvailable` of `/proc/meminfo` lowered to the room under a
//! cgroup memory limit ([`available_host_memory`]); elsewhere nothing is known and nothing is
//! refused. [`admit_host`] refuses a request larger than that with
//! [`HadronError::OutOfHostMemory`]; requests below [`SMALL_BYTES`] are admitted without
//! reading anything (they cannot kill a process, and the check stays off hot paths).

pub use crate::error::human_bytes;
use crate::error::{HadronError, Result};

/// The environment variable that sets the host memory available (bytes, with an optional K,
/// M, G or T suffix, powers of 1024), instead of what the system says; `off` skips the check.
pub const HOST_MEMORY_VAR: &str = "MEMHC_HOST_MEMORY";

/// The most streams a runtime is given from input (`--streams`, `memhc_config.streams`,
/// Python's `streams=`): the host backend runs a worker thread per stream, and thousands of
/// threads exhaust the process (30000 aborted with "failed to set up alternative stack guard
/// page"). A contraction goes to stream `i mod streams`, so more streams than contractions
/// per vector add nothing.
pub const MAX_STREAMS: usize = 1024;

/// Requests below this many bytes (16 MiB) are admitted without looking at the host.
pub const SMALL_BYTES: u64 = 16 << 20;

/// A byte count: digits with an optional `K`, `M`, `G` or `T` suffix (powers of 1024, either
/// case). Zero, other suffixes, and counts beyond `u64::MAX` are refused with a message.
pub fn parse_byte_count(s: &str) -> std::result::Result<u64, String> {
    let t = s.trim();
    let (digits, shift) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let shift = match c.to_ascii_uppercase() {
                'K' => 10,
                'M' => 20,
                'G' => 30,
                'T' => 40,
                _ => return Err(format!("\"{s}\": the suffix must be K, M, G or T")),
            };
            (&t[..i], shift)
        }
        _ => (t, 0),
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("\"{s}\" is not a byte count (like 512M or 8G)"))?;
    if n == 0 {
        return Err(format!("\"{s}\": a byte count must be positive"));
    }
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| format!("\"{s}\" is more bytes than a 64-bit count holds"))
}

/// The host memory available, in bytes: [`HOST_MEMORY_VAR`] when set (`off`: unknown), else
/// [`available_host_memory`]. A value of the variable that does not parse is an error.
pub fn host_memory() -> Result<Option<u64>> {
    match std::env::var(HOST_MEMORY_VAR) {
        Ok(v) if v.trim() == "off" => Ok(None),
        Ok(v) => parse_byte_count(&v)
            .map(Some)
            .map_err(|e| HadronError::TooLarge(format!("{HOST_MEMORY_VAR}: {e}"))),
        Err(_) => Ok(available_host_memory()),
    }
}

/// Refuses `needed` bytes of host memory for `what` (for the message: "node x's values") when
/// more than the host has ([`host_memory`]). Requests below [`SMALL_BYTES`] are admitted
/// without a look.
pub fn admit_host(what: &str, needed: u64) -> Result<()> {
    if needed < SMALL_BYTES {
        return Ok(());
    }
    admit_host_within(what, needed, host_memory()?)
}

/// [`admit_host`] against a known `available` (`None`: unknown, admitted).
pub fn admit_host_within(what: &str, needed: u64, available: Option<u64>) -> Result<()> {
    match available {
        Some(available) if needed > available => Err(HadronError::OutOfHostMemory {
            what: what.to_owned(),
            needed,
            available,
        }),
        _ => Ok(()),
    }
}

/// `count` items of `item_bytes` bytes each, or [`HadronError::TooLarge`] naming `what` when
/// the product overflows 64 bits.
pub fn bytes_of(what: &str, count: u64, item_bytes: u64) -> Result<u64> {
    count.checked_mul(item_bytes).ok_or_else(|| {
        HadronError::TooLarge(format!(
            "{what}: {count} items of {item_bytes} bytes exceed the address space"
        ))
    })
}

/// Reads exactly `len` complex128 values (16 bytes each: the real part then the imaginary,
/// little-endian, or big-endian when `big_endian`) from `reader`, which must then be at its
/// end: the data of a `.npy` file whose header gave `len`.
///
/// `len` comes from a file, so the values' memory is reserved fallibly
/// ([`Vec::try_reserve_exact`]) before anything is read: a count whose bytes overflow or that
/// the allocator refuses is an error, not an abort. The data are read in pieces of 64 KiB.
/// The error is one line: `cannot reserve ...` or `unreadable data: ...` (short data, trailing
/// bytes, an I/O error).
pub fn read_complex128(
    reader: &mut impl std::io::Read,
    big_endian: bool,
    len: usize,
) -> std::result::Result<Vec<num_complex::Complex64>, String> {
    const PIECE: usize = 4096;
    let bytes = bytes_of("complex128 values", len as u64, 16).map_err(|e| e.to_string())?;
    let mut values: Vec<num_complex::Complex64> = Vec::new();
    values.try_reserve_exact(len).map_err(|e| {
        format!(
            "cannot reserve {} for {len} complex128 values: {e}",
            human_bytes(bytes)
        )
    })?;
    let word = |b: &[u8]| {
        let mut w = [0u8; 8];
        w.copy_from_slice(b);
        if big_endian {
            f64::from_be_bytes(w)
        } else {
            f64::from_le_bytes(w)
        }
    };
    let mut buf = vec![0u8; PIECE * 16];
    let mut left = len;
    while left > 0 {
        let n = left.min(PIECE);
        let piece = &mut buf[..n * 16];
        reader
            .read_exact(piece)
            .map_err(|e| format!("unreadable data: {e} after {} of {len} values", len - left))?;
        values.extend(
            piece
                .chunks_exact(16)
                .map(|c| num_complex::Complex64::new(word(&c[..8]), word(&c[8..]))),
        );
        left -= n;
    }
    let mut extra = [0u8; 1];
    loop {
        match reader.read(&mut extra) {
            Ok(0) => return Ok(values),
            Ok(_) => return Err("unreadable data: bytes after the last value".to_owned()),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("unreadable data: {e}")),
        }
    }
}

/// The text of the JSON file at `path`, read without ever holding more than `limit` bytes:
/// a regular file larger than that is refused before it is read, and anything else (a device
/// like `/dev/zero`, a pipe) is read in pieces and refused (an [`std::io::Error`] of kind
/// `InvalidData`) as soon as it passes the limit or as soon as its first non-blank byte is not
/// `{` or `[` (it is not JSON). Text that is not UTF-8 is refused too.
pub fn read_text_bounded(path: &std::path::Path, limit: u64) -> std::io::Result<String> {
    use std::io::Read;
    let invalid = |m: String| std::io::Error::new(std::io::ErrorKind::InvalidData, m);
    let too_large = || {
        invalid(format!(
            "larger than {}: not a file this reads",
            human_bytes(limit)
        ))
    };
    let mut file = std::fs::File::open(path)?;
    let meta = file.metadata()?;
    if meta.is_file() && meta.len() > limit {
        return Err(too_large());
    }
    let mut text = Vec::new();
    let mut piece = vec![0u8; 64 << 10];
    // A regular file's size is known and its content is the parser's to judge.
    let mut checked = meta.is_file();
    loop {
        let n = match file.read(&mut piece) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if (text.len() + n) as u64 > limit {
            return Err(too_large());
        }
        text.extend_from_slice(&piece[..n]);
        let first = text.iter().find(|b| !b.is_ascii_whitespace());
        if let (false, Some(&first)) = (checked, first) {
            if first != b'{' && first != b'[' {
                return Err(invalid(format!(
                    "not a JSON text: it starts with the byte 0x{first:02x}"
                )));
            }
            checked = true;
        }
    }
    String::from_utf8(text).map_err(|_| invalid("not UTF-8 text".into()))
}

/// The most bytes of a text file (a correlator file, a workload file, a campaign manifest)
/// read into memory: 1 GiB.
pub const MAX_TEXT_FILE_BYTES: u64 = 1 << 30;

/// The host memory available to this process, in bytes, where the system says: on Linux,
/// `MemAvailable` from `/proc/meminfo`, lowered to the room under a cgroup memory limit (its
/// limit minus its usage, reclaimable file cache counted as room). `None` elsewhere.
pub fn available_host_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let mut available = meminfo_available(&meminfo)?;
    if let Some(room) = cgroup_room() {
        available = available.min(room);
    }
    Some(available)
}

/// `MemAvailable` of a `/proc/meminfo` text, in bytes.
pub fn meminfo_available(meminfo: &str) -> Option<u64> {
    let kib = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))?
        .trim()
        .strip_suffix("kB")?
        .trim()
        .parse::<u64>()
        .ok()?;
    Some(kib.saturating_mul(1024))
}

/// Room left under this process's cgroup memory limit, if it has one (v2, else v1).
fn cgroup_room() -> Option<u64> {
    let read = |path: &str| std::fs::read_to_string(path).ok();
    let number = |path: &str| read(path)?.trim().parse::<u64>().ok();
    let stat = |path: &str, key: &str| {
        read(path)?.lines().find_map(|l| {
            let (k, v) = l.split_once(' ')?;
            (k == key).then(|| v.trim().parse::<u64>().ok()).flatten()
        })
    };
    let room = |limit: u64, usage: u64, reclaimable: Option<u64>| {
        limit.saturating_sub(usage.saturating_sub(reclaimable.unwrap_or(0)))
    };
    // cgroup v2: "max" (no limit) does not parse as a number.
    if let (Some(limit), Some(usage)) = (
        number("/sys/fs/cgroup/memory.max"),
        number("/sys/fs/cgroup/memory.current"),
    ) {
        let reclaimable = stat("/sys/fs/cgroup/memory.stat", "inactive_file");
        return Some(room(limit, usage, reclaimable));
    }
    // cgroup v1: no limit reads as a huge number, which the minimum then ignores.
    let v1 = "/sys/fs/cgroup/memory";
    let limit = number(&format!("{v1}/memory.limit_in_bytes"))?;
    let usage = number(&format!("{v1}/memory.usage_in_bytes"))?;
    let reclaimable = stat(&format!("{v1}/memory.stat"), "total_inactive_file");
    Some(room(limit, usage, reclaimable))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_counts_parse_with_suffixes() {
        assert_eq!(parse_byte_count("512M"), Ok(512 << 20));
        assert_eq!(parse_byte_count("2g"), Ok(2 << 30));
        assert_eq!(parse_byte_count(" 3T "), Ok(3 << 40));
        assert_eq!(parse_byte_count("1000"), Ok(1000));
        assert!(parse_byte_count("0").is_err());
        assert!(parse_byte_count("12X").is_err());
        assert!(parse_byte_count("-5").is_err());
        assert!(parse_byte_count("").is_err());
        assert!(parse_byte_count("99999999999T").is_err());
        assert!(parse_byte_count("é").is_err());
    }

    #[test]
    fn meminfo_parses() {
        let text = "MemTotal:       24684084 kB\nMemFree: 1 kB\nMemAvailable:   24214064 kB\n";
        assert_eq!(meminfo_available(text), Some(24214064 * 1024));
        assert_eq!(meminfo_available("MemTotal: 5 kB\n"), None);
    }

    #[test]
    fn admission_refuses_more_than_available() {
        assert!(admit_host_within("x", 10, Some(10)).is_ok());
        assert!(admit_host_within("x", u64::MAX, None).is_ok());
        let e = admit_host_within("node a's values", 11 << 30, Some(1 << 30));
        assert_eq!(
            e,
            Err(HadronError::OutOfHostMemory {
                what: "node a's values".into(),
                needed: 11 << 30,
                available: 1 << 30
            })
        );
        let text = e.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            text.contains("11.0 GiB") && text.contains("1.0 GiB"),
            "{text}"
        );
        // Small requests never look.
        assert!(admit_host("x", SMALL_BYTES - 1).is_ok());
        assert!(matches!(
            bytes_of("dims", u64::MAX, 16),
            Err(HadronError::TooLarge(_))
        ));
        assert_eq!(bytes_of("dims", 4, 16), Ok(64));
        assert_eq!(human_bytes(1023), "1023 B");
        assert_eq!(human_bytes(3 << 20), "3.0 MiB");
    }

    #[test]
    fn complex128_values_are_read_in_either_byte_order() {
        let mut le = Vec::new();
        let mut be = Vec::new();
        for x in [1.5f64, -2.0, 0.25, 8.0] {
            le.extend_from_slice(&x.to_le_bytes());
            be.extend_from_slice(&x.to_be_bytes());
        }
        let want = vec![
            num_complex::Complex64::new(1.5, -2.0),
            num_complex::Complex64::new(0.25, 8.0),
        ];
        assert_eq!(read_complex128(&mut &le[..], false, 2), Ok(want.clone()));
        assert_eq!(read_complex128(&mut &be[..], true, 2), Ok(want));
        assert_eq!(read_complex128(&mut &le[..0], false, 0), Ok(Vec::new()));
        // Short data and trailing bytes are errors.
        let e = read_complex128(&mut &le[..], false, 3).unwrap_err();
        assert!(
            e.starts_with("unreadable data: ") && e.contains("after 0 of 3"),
            "{e}"
        );
        let e = read_complex128(&mut &le[..], false, 1).unwrap_err();
        assert_eq!(e, "unreadable data: bytes after the last value");
    }

    #[test]
    fn an_enormous_count_of_values_is_refused_before_anything_is_read() {
        // Bytes that overflow 64 bits, and a count the allocator cannot give (8 EiB,
        // past what `Vec` may hold): errors, not aborts, and nothing is read.
        let e = read_complex128(&mut std::io::repeat(0), false, usize::MAX).unwrap_err();
        assert!(e.contains("exceed the address space"), "{e}");
        let e = read_complex128(&mut std::io::repeat(0), false, usize::MAX / 32).unwrap_err();
        assert!(e.starts_with("cannot reserve 8192.0 PiB"), "{e}");
    }

    #[test]
    fn endless_files_are_not_read_whole() {
        // /dev/zero never ends: the read stops after the limit.
        let e = read_text_bounded(std::path::Path::new("/dev/zero"), 1000);
        assert!(e.is_err());
        let e = read_text_bounded(std::path::Path::new("/dev/zero"), 1 << 30);
        assert!(e.is_err_and(|e| e.to_string().contains("0x00")));
        let file = std::env::temp_dir().join(format!("hadron-bounded-{}", std::process::id()));
        std::fs::write(&file, " {\"a\": 1}").unwrap();
        assert_eq!(read_text_bounded(&file, 9).unwrap(), " {\"a\": 1}");
        assert_eq!(
            read_text_bounded(&file, 8).map_err(|e| e.kind()),
            Err(std::io::ErrorKind::InvalidData)
        );
        // A regular file that is not JSON is read: the parser says what is wrong.
        std::fs::write(&file, "abcd").unwrap();
        assert_eq!(read_text_bounded(&file, 100).unwrap(), "abcd");
        std::fs::write(&file, b"[\xff]").unwrap();
        assert!(read_text_bounded(&file, 100).is_err());
        let _ = std::fs::remove_file(&file);
    }
}
