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
