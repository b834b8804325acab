//! Byte sizes as people type them, one grammar everywhere: the command
//! line's limits (`--max-decompressed 512MiB`), a budget file's limits
//! (`max: 1.5 MiB`) and the Python wheel's budgets (`"64 MiB"`, or an int).
//!
//! A size is a number, decimals allowed, with an optional unit after it (a
//! space between them allowed): `B`; `kB`, `MB`, `GB`, `TB` (1000-based);
//! `KiB`, `MiB`, `GiB`, `TiB` (1024-based); units in any case (`kb` is
//! `kB`, `mib` is `MiB`). A number alone is bytes. It is kept as the exact
//! decimal written, so a budget holds exactly at its value (`0.5 B` per
//! term is half a byte); a limit counted in whole bytes refuses a fraction
//! of one rather than rounding it.

/// The forms a size takes, as errors name them.
pub const FORMS: &str = "a number of bytes with an optional unit: B; kB, MB, GB, TB \
    (1000-based); KiB, MiB, GiB, TiB (1024-based); any case, decimals allowed \
    (1048576, 200 B, 1.5 MiB, 64GiB)";

const UNIT_HELP: &str =
    "use B, kB, MB, GB, TB (1000-based) or KiB, MiB, GiB, TiB (1024-based), in any case";

/// Most digits after a size's point: a byte count times the power of ten
/// it was written with stays within `u128` (`u64::MAX × 10^19 < 2^128`).
const MAX_DECIMALS: u32 = 19;

/// Most digits a size's number may have in all: any more make a number
/// past `u128`, and so past the largest size.
const MAX_DIGITS: usize = 38;

const UNITS: [(&str, u128); 9] = [
    ("b", 1),
    ("kb", 1000),
    ("mb", 1_000_000),
    ("gb", 1_000_000_000),
    ("tb", 1_000_000_000_000),
    ("kib", 1 << 10),
    ("mib", 1 << 20),
    ("gib", 1 << 30),
    ("tib", 1 << 40),
];

/// Why a text is not a size. Each message names the text and what was
/// wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SizeError {
    #[error("{0:?} is not a size: expected {FORMS}")]
    NotASize(String),
    #[error("unknown unit {unit:?} in {text:?} ({UNIT_HELP})")]
    UnknownUnit { unit: String, text: String },
    #[error("{0:?} is too large: a size is at most {max} bytes (16 EiB)", max = u64::MAX)]
    TooLarge(String),
    #[error("{0:?} has more than {MAX_DECIMALS} digits after the point")]
    TooPrecise(String),
    #[error("{0:?} is not a whole number of bytes, as this limit counts them")]
    NotWhole(String),
}

/// A decimal number `mantissa / 10^scale`, as written: digits, then
/// optionally a point and more digits (`1.5`, `200`; not `.5`, `1.`, `-1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decimal {
    pub mantissa: u128,
    pub scale: u32,
}

impl Decimal {
    /// The number in `text`, or `None` where it is not one or has more
    /// than `max_digits` digits.
    pub fn parse(text: &str, max_digits: usize) -> Option<Self> {
        let (int, frac) = match text.split_once('.') {
            Some((i, f)) => (i, f),
            None => (text, ""),
        };
        if int.is_empty()
            || int.len() + frac.len() > max_digits
            || !int.bytes().all(|b| b.is_ascii_digit())
            || !frac.bytes().all(|b| b.is_ascii_digit())
            || (text.contains('.') && frac.is_empty())
        {
            return None;
        }
        let mantissa = format!("{int}{frac}").parse().ok()?;
        Some(Self {
            mantissa,
            scale: frac.len() as u32,
        })
    }

    fn pow(self) -> u128 {
        10u128.pow(self.scale)
    }
}

/// A byte size: `scaled / 10^scale` bytes, exactly, at most `u64::MAX`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Size {
    /// Bytes times 10^scale.
    scaled: u128,
    scale: u32,
    /// As written (trimmed), with ` B` after a number written alone, for
    /// reports to repeat.
    pub text: String,
}

impl Size {
    pub fn parse(text: &str) -> Result<Self, SizeError> {
        let trimmed = text.trim();
        let split = trimmed
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(trimmed.len());
        let (number, unit) = (&trimmed[..split], trimmed[split..].trim_start());
        let decimal = match Decimal::parse(number, MAX_DIGITS) {
            Some(decimal) if decimal.scale > MAX_DECIMALS => {
                return Err(SizeError::TooPrecise(text.into()))
            }
            Some(decimal) => decimal,
            None if number.len() > MAX_DIGITS => return Err(SizeError::TooLarge(text.into())),
            None => return Err(SizeError::NotASize(text.into())),
        };
        let factor = match unit.to_ascii_lowercase() {
            lower if lower.is_empty() => 1,
            lower => UNITS
                .iter()
                .find(|(name, _)| *name == lower)
                .map(|(_, f)| *f)
                .ok_or_else(|| SizeError::UnknownUnit {
                    unit: unit.into(),
                    text: text.into(),
                })?,
        };
        let scaled = decimal
            .mantissa
            .checked_mul(factor)
            .filter(|scaled| scaled / decimal.pow() <= u128::from(u64::MAX))
            .ok_or_else(|| SizeError::TooLarge(text.into()))?;
        Ok(Self {
            scaled,
            scale: decimal.scale,
            text: match unit.is_empty() {
                true => format!("{trimmed} B"),
                false => trimmed.to_string(),
            },
        })
    }

    fn pow(&self) -> u128 {
        10u128.pow(self.scale)
    }

    /// Whether `bytes` is at most this size.
    pub fn holds(&self, bytes: u64) -> bool {
        u128::from(bytes) * self.pow() <= self.scaled
    }

    /// Whether `bytes / count` is at most this size (`count` > 0).
    pub fn holds_per(&self, bytes: u64, count: u64) -> bool {
        u128::from(bytes) * self.pow() <= self.scaled.saturating_mul(count.into())
    }

    /// Whether `bytes` reaches this size.
    pub fn reached_by(&self, bytes: u64) -> bool {
        u128::from(bytes) * self.pow() >= self.scaled
    }

    /// The size in bytes, rounded down, for display.
    pub fn bytes(&self) -> u64 {
        u64::try_from(self.scaled / self.pow()).expect("parse keeps a size within u64")
    }

    /// The size as a whole number of bytes, for a limit that counts them.
    pub fn whole_bytes(&self) -> Result<u64, SizeError> {
        match self.scaled % self.pow() {
            0 => Ok(self.bytes()),
            _ => Err(SizeError::NotWhole(self.text.clone())),
        }
    }
}

/// A size in whole bytes: the command line's limits (`--max-decompressed`,
/// `--max-element`).
pub fn parse_size(text: &str) -> Result<u64, SizeError> {
    Size::parse(text)?.whole_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(text: &str) -> u64 {
        Size::parse(text).unwrap().bytes()
    }

    fn error(text: &str) -> String {
        Size::parse(text).unwrap_err().to_string()
    }

    #[test]
    fn units_of_both_families_in_any_case() {
        assert_eq!(bytes("64GiB"), 64 << 30);
        assert_eq!(bytes("64 gib"), 64 << 30);
        assert_eq!(bytes(" 50 MiB "), 50 << 20);
        assert_eq!(bytes("500MB"), 500_000_000);
        assert_eq!(bytes("5 KB"), 5_000);
        assert_eq!(bytes("5 kB"), 5_000);
        assert_eq!(bytes("2 TiB"), 2 << 40);
        assert_eq!(bytes("3b"), 3);
        assert_eq!(bytes("200 B"), 200);
    }

    #[test]
    fn a_number_alone_is_bytes() {
        assert_eq!(bytes("1048576"), 1 << 20);
        assert_eq!(parse_size("1048576"), Ok(1 << 20));
        let size = Size::parse("5").unwrap();
        assert_eq!(size.text, "5 B", "reports say what the number counts");
        assert_eq!(Size::parse("5 kB").unwrap().text, "5 kB");
    }

    #[test]
    fn decimals_are_exact() {
        assert_eq!(bytes("1.5kB"), 1500);
        assert_eq!(parse_size("1.5GiB"), Ok(3 << 29));
        let half = Size::parse("0.5 B").unwrap();
        assert!(half.holds_per(1, 2) && !half.holds_per(2, 3));
        let limit = Size::parse("1.5 KiB").unwrap();
        assert!(limit.holds(1536) && !limit.holds(1537) && limit.reached_by(1536));
        assert_eq!(
            parse_size("1.3KiB").unwrap_err().to_string(),
            "\"1.3KiB\" is not a whole number of bytes, as this limit counts them"
        );
        assert_eq!(
            parse_size("0.5 B"),
            Err(SizeError::NotWhole("0.5 B".into()))
        );
    }

    #[test]
    fn errors_name_the_text_and_the_accepted_forms() {
        for text in ["lots", "GiB", "-1", "1. B", ".5 MiB", ""] {
            let err = error(text);
            assert!(
                err.starts_with(&format!(
                    "{text:?} is not a size: expected a number of bytes"
                )),
                "{err}"
            );
            assert!(err.contains("KiB, MiB, GiB, TiB (1024-based)"), "{err}");
        }
        assert_eq!(
            error("5 kilobytes"),
            "unknown unit \"kilobytes\" in \"5 kilobytes\" (use B, kB, MB, GB, TB \
             (1000-based) or KiB, MiB, GiB, TiB (1024-based), in any case)"
        );
        assert!(error("1e6").contains("unknown unit \"e6\""));
        assert!(error("20000000TiB").contains("is too large"));
        assert!(error("18446744073709551616").contains("is too large"));
        assert!(error(&"9".repeat(60)).contains("is too large"));
        assert_eq!(parse_size("18446744073709551615"), Ok(u64::MAX));
        assert!(error("1.00000000000000000000 B").contains("more than 19 digits after the point"));
        assert!(error("16 EiB").contains("unknown unit \"EiB\""));
        assert_eq!(bytes("18446744073 B"), 18_446_744_073);
        for text in ["4GiB", "64MiB", "3KiB", "1000 bytes"] {
            let typed = text.trim_end_matches("ytes");
            assert_eq!(crate::units::size_text(parse_size(typed).unwrap()), text);
        }
        assert_eq!(
            bytes("16777215.99 TiB"),
            16_777_215 * (1 << 40) + (99 << 40) / 100
        );
    }
}
