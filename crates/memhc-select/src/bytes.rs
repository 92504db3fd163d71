//! Byte counts as people write them: one grammar for every command line, manifest, C struct
//! and Python keyword.
//!
//! ```text
//! bytes = space* digits space* unit? space*
//! unit  = "B" | prefix | prefix "B" | prefix "iB"       (letters in any case)
//! prefix = "K" | "M" | "G" | "T"
//! ```
//!
//! Every prefix is a power of 1024, with or without the `i`: `1K` = `1KB` = `1KiB` = 1024
//! bytes, `2G` = `2GB` = `2GiB` = 2^31 bytes. memhc sizes device and host memory, which come in
//! powers of two; this is what `memhc-synth --budget`, `memhc run --budget`, campaign
//! manifests, `memhc_config.budget` in C and `budget=` in Python have always meant (`8G` is
//! 8 GiB everywhere), and the `iB` spellings are accepted everywhere too.
//!
//! Refused, each with a one-line message that quotes what was given: the empty string, a sign
//! (`-1`, `+1`), a fraction (`1.5G`), digits separated by anything, an unknown unit (`8X`,
//! `8KiBB`), zero (`0`, `0G`: no budget holds nothing), and counts of 2^64 bytes or more.

/// Why a text is not a byte count.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "'{text}' is not a positive number of bytes: {reason} (digits, then K, M, G or T, powers \
     of 1024, with an optional B or iB: 512M, 8GiB)"
)]
pub struct BytesError {
    /// The text given.
    pub text: String,
    /// What is wrong with it.
    pub reason: BytesProblem,
}

/// What is wrong with a byte count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BytesProblem {
    /// Nothing but spaces.
    #[error("it is empty")]
    Empty,
    /// A `-` or `+` sign.
    #[error("a count has no sign")]
    Signed,
    /// No digits where the number should be, or something that is not a digit among them.
    #[error("not a whole number")]
    NotDigits,
    /// The unit is none of the known ones.
    #[error("unknown unit")]
    UnknownUnit,
    /// Zero bytes.
    #[error("zero")]
    Zero,
    /// 2^64 bytes or more.
    #[error("too large")]
    TooLarge,
}

/// The power of 1024 a unit stands for, or `None` for an unknown unit. `""` and `"B"` are
/// bytes.
fn unit_shift(unit: &str) -> Option<u32> {
    let unit = unit.to_ascii_uppercase();
    let prefix = unit
        .strip_suffix("IB")
        .or_else(|| unit.strip_suffix('B'))
        .unwrap_or(&unit);
    let shift = match prefix {
        "" if !unit.ends_with("IB") => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        _ => return None,
    };
    Some(shift)
}

/// Reads a byte count in the grammar of this module: `"1048576"`, `"512M"`, `"8GiB"`,
/// `" 4 kb "`. The count is positive and below 2^64.
pub fn parse_bytes(text: &str) -> Result<u64, BytesError> {
    let fail = |reason| BytesError {
        text: text.to_owned(),
        reason,
    };
    let t = text.trim();
    if t.is_empty() {
        return Err(fail(BytesProblem::Empty));
    }
    if t.starts_with(['-', '+']) {
        return Err(fail(BytesProblem::Signed));
    }
    let end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, rest) = t.split_at(end);
    if digits.is_empty() || rest.starts_with(['.', ',', '_']) {
        return Err(fail(BytesProblem::NotDigits));
    }
    let shift = unit_shift(rest.trim_start()).ok_or_else(|| fail(BytesProblem::UnknownUnit))?;
    // Digits that overflow u64 are too large whatever the unit.
    let n: u64 = digits.parse().map_err(|_| fail(BytesProblem::TooLarge))?;
    if n == 0 {
        return Err(fail(BytesProblem::Zero));
    }
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| fail(BytesProblem::TooLarge))
}

/// [`parse_bytes`], as a `usize` (a budget in this address space).
pub fn parse_bytes_usize(text: &str) -> Result<usize, BytesError> {
    let n = parse_bytes(text)?;
    usize::try_from(n).map_err(|_| BytesError {
        text: text.to_owned(),
        reason: BytesProblem::TooLarge,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_grammar_by_example() {
        let good: &[(&str, u64)] = &[
            ("1", 1),
            ("1000", 1000),
            ("1048576", 1_048_576),
            ("100B", 100),
            ("100b", 100),
            ("4k", 4096),
            (" 4k ", 4096),
            ("4 K", 4096),
            ("400K", 409_600),
            ("64K", 65_536),
            ("1KB", 1024),
            ("1KiB", 1024),
            ("1kib", 1024),
            ("512M", 536_870_912),
            ("512MB", 536_870_912),
            ("512MiB", 536_870_912),
            ("512 MiB", 536_870_912),
            ("2G", 2_147_483_648),
            ("2g", 2_147_483_648),
            ("8G", 8_589_934_592),
            ("8GB", 8_589_934_592),
            ("8GiB", 8_589_934_592),
            ("8gib", 8_589_934_592),
            ("1T", 1_099_511_627_776),
            ("3T", 3_298_534_883_328),
            ("1TiB", 1_099_511_627_776),
            ("16777215T", 18_446_742_974_197_923_840),
            ("18446744073709551615", u64::MAX),
        ];
        for &(text, want) in good {
            assert_eq!(parse_bytes(text), Ok(want), "{text}");
        }
    }

    #[test]
    fn what_is_refused_and_why() {
        use BytesProblem::*;
        let bad: &[(&str, BytesProblem)] = &[
            ("", Empty),
            ("   ", Empty),
            ("-1", Signed),
            ("+1", Signed),
            ("-1G", Signed),
            ("G", NotDigits),
            ("lots", NotDigits),
            ("abc", NotDigits),
            ("1.5G", NotDigits),
            ("1,000", NotDigits),
            ("1_000", NotDigits),
            ("8X", UnknownUnit),
            ("12X", UnknownUnit),
            ("8KiBB", UnknownUnit),
            ("8iB", UnknownUnit),
            ("8 G B", UnknownUnit),
            ("8P", UnknownUnit),
            ("1G2", UnknownUnit),
            ("0", Zero),
            ("0G", Zero),
            ("000", Zero),
            ("16777216T", TooLarge),
            ("99999999999T", TooLarge),
            ("99999999999999999999T", TooLarge),
            ("18446744073709551616", TooLarge),
        ];
        for &(text, why) in bad {
            let e = parse_bytes(text).err();
            assert_eq!(e.as_ref().map(|e| e.reason), Some(why), "{text:?}");
            let line = e.map(|e| e.to_string()).unwrap_or_default();
            assert!(
                line.contains(&format!("'{text}'")) && !line.contains('\n'),
                "{line}"
            );
        }
    }

    #[test]
    fn the_message_says_what_the_grammar_is() {
        let e = parse_bytes("8X").err().map(|e| e.to_string());
        assert_eq!(
            e.as_deref(),
            Some(
                "'8X' is not a positive number of bytes: unknown unit (digits, then K, M, G or \
                 T, powers of 1024, with an optional B or iB: 512M, 8GiB)"
            )
        );
    }

    proptest! {
        /// Every spelling of a count in every unit reads back as the count times its power.
        #[test]
        fn spellings_of_one_count_agree(
            n in 1u64..(1 << 23),
            unit in 0usize..5,
            form in 0usize..4,
        ) {
            let prefix = ["", "K", "M", "G", "T"][unit];
            let suffix = match (unit, form) {
                (0, 0 | 1) => "",
                (0, _) => "B",
                (_, 0) => "",
                (_, 1) => "B",
                (_, 2) => "iB",
                _ => "ib",
            };
            let text = format!("{n}{prefix}{suffix}");
            prop_assert_eq!(parse_bytes(&text), Ok(n << (10 * unit as u32)));
            prop_assert_eq!(parse_bytes(&text.to_lowercase()), Ok(n << (10 * unit as u32)));
        }

        /// Whatever the text, reading it ends in a count or a one-line error, never a panic.
        #[test]
        fn any_text_reads_or_is_refused_in_one_line(text in "\\PC{0,12}") {
            if let Err(e) = parse_bytes(&text) {
                prop_assert!(!e.to_string().contains('\n') || text.contains('\n'));
            }
        }
    }
}
