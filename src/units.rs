//! Human-readable byte counts with binary prefixes (1 KiB = 1024 B).

pub fn human(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
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

/// `1 leaf`, `2,048 leaves`: a count with thousands separators and the
/// noun in the number it needs.
pub fn count(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", thousands(n), if n == 1 { one } else { many })
}

/// A share of a total as a percentage with one decimal.
pub fn percent(part: u64, total: u64) -> String {
    if total == 0 {
        return "0.0%".to_string();
    }
    format!("{:.1}%", part as f64 * 100.0 / total as f64)
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
    let text = format!("{:.1}%", percent.abs());
    if text == "0.0%" {
        text
    } else if percent > 0.0 {
        format!("+{text}")
    } else {
        format!("-{text}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_prefixes() {
        assert_eq!(human(0), "0 B");
        assert_eq!(human(1023), "1023 B");
        assert_eq!(human(1024), "1.0 KiB");
        assert_eq!(human(46_360_641), "44.2 MiB");
        assert_eq!(percent(1, 3), "33.3%");
        assert_eq!(signed_human(-2048), "-2.0 KiB");
        assert_eq!(signed_human(0), "0 B");
        assert_eq!(signed_percent(4.94), "+4.9%");
        assert_eq!(signed_percent(-0.01), "0.0%");
    }
}
