//! Byte counts for people, both ways: printed with binary prefixes (1 KiB =
//! 1024 B), and sizes as typed on a command line, in a budget or in Python
//! ([`size`], the one parser of them).
//!
//! One style everywhere people read numbers: thousands separators
//! (`1,492 B`, `12,120,000 terms`), binary prefixes with one decimal, and
//! where both are shown the exact bytes after the rounded ones:
//! `2.3 KiB (2,336 B)` ([`human_exact`]).

pub mod size;

pub use size::{parse_size, Decimal, Size, SizeError};

/// `535 B`, `2.3 KiB`, `44.2 MiB`: rounded to one decimal above 1 KiB.
pub fn human(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if bytes < 1024 {
        return format!("{} B", thousands(bytes));
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// `535 B`, or `2.3 KiB (2,336 B)` where the human form rounds.
pub fn human_exact(bytes: u64) -> String {
    if bytes < 1024 {
        human(bytes)
    } else {
        format!("{} ({} B)", human(bytes), thousands(bytes))
    }
}

/// `1234567` → `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A byte count for people with its exact value where the unit rounds it:
/// `402 B`, `1,005 B`, `1.7 KiB (1,712 B)`.
pub fn exact(bytes: u64) -> String {
    if bytes < 1024 {
        format!("{} B", thousands(bytes))
    } else {
        format!("{} ({} B)", human(bytes), thousands(bytes))
    }
}

/// A byte count with its exact value and its share of `whole`:
/// `683 B (15.9%)`, `12.8 KiB (13,062 B, 9.0%)`.
pub fn exact_share(part: u64, whole: u64) -> String {
    let share = percent(part, whole);
    if part < 1024 {
        format!("{} B ({share})", thousands(part))
    } else {
        format!("{} ({} B, {share})", human(part), thousands(part))
    }
}

/// `1 leaf`, `2,048 leaves`: a count with thousands separators and the
/// noun in the number it needs.
pub fn count(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", thousands(n), if n == 1 { one } else { many })
}

/// A non-negative number with one decimal and thousands separators:
/// `3,269.5`.
fn one_decimal(value: f64) -> String {
    let text = format!("{value:.1}");
    match text.split_once('.') {
        Some((whole, fraction)) => match whole.parse::<u64>() {
            Ok(whole) => format!("{}.{fraction}", thousands(whole)),
            Err(_) => text,
        },
        None => text,
    }
}

/// A share of a total as a percentage with one decimal.
pub fn percent(part: u64, total: u64) -> String {
    if total == 0 {
        return "0.0%".to_string();
    }
    format!("{}%", one_decimal(part as f64 * 100.0 / total as f64))
}

/// A byte difference with its sign: `+212 B`, `-1.2 KiB`, `0 B`.
pub fn signed_human(delta: i64) -> String {
    let size = human(delta.unsigned_abs());
    match delta.signum() {
        1 => format!("+{size}"),
        -1 => format!("-{size}"),
        _ => size,
    }
}

/// A relative change with its sign and one decimal: `+4.9%`, `-100.0%`, `0.0%`.
pub fn signed_percent(percent: f64) -> String {
    let text = format!("{}%", one_decimal(percent.abs()));
    if text == "0.0%" {
        text
    } else if percent > 0.0 {
        format!("+{text}")
    } else {
        format!("-{text}")
    }
}

/// A limit as it would be typed: the largest binary unit that divides it.
pub fn size_text(bytes: u64) -> String {
    for (unit, shift) in [("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)] {
        if bytes != 0 && bytes % (1 << shift) == 0 {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    format!("{bytes} bytes")
}

/// The message of an element over the limit.
pub fn element_too_large(what: &str, len: u64, limit: u64) -> String {
    format!(
        "{what} is {len} bytes, more than {}, the --max-element limit; \
         raise it if the input is trusted",
        size_text(limit)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_prefixes() {
        assert_eq!(human(0), "0 B");
        assert_eq!(human(1023), "1,023 B");
        assert_eq!(human_exact(535), "535 B");
        assert_eq!(human_exact(2336), "2.3 KiB (2,336 B)");
        assert_eq!(human(1024), "1.0 KiB");
        assert_eq!(human(46_360_641), "44.2 MiB");
        assert_eq!(percent(1, 3), "33.3%");
        assert_eq!(signed_human(-2048), "-2.0 KiB");
        assert_eq!(signed_human(0), "0 B");
        assert_eq!(signed_percent(4.94), "+4.9%");
        assert_eq!(signed_percent(-0.01), "0.0%");
        assert_eq!(signed_percent(3269.46), "+3,269.5%");
        assert_eq!(percent(2, 3), "66.7%");
    }
}
