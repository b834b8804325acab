//! The short header the human formats print above a profile.

use std::io::Write;

use super::style;
use crate::profiled::registry::Origin;
use crate::profiled::{Account, Profile};
use crate::units;

/// One header line: a label, then its text wrapped to the terminal under
/// itself.
fn line(out: &mut dyn Write, label: &str, text: &str) -> std::io::Result<()> {
    let text = format!("{}{text}", style::label(label, 13));
    writeln!(out, "{}", super::width::wrap(&text, &" ".repeat(13)))
}

/// The short header of the human formats.
pub fn write_summary(profile: &Profile<'_>, out: &mut dyn Write) -> std::io::Result<()> {
    let s = profile.summary();
    let doc = &profile.profiled.input;
    writeln!(out, "{}{}", style::label("file:", 13), doc.name)?;
    if let Some(origin) = &doc.registry {
        line(out, "registry:", &registry_line(origin))?;
    }
    writeln!(
        out,
        "{}{}",
        style::label("layer:", 13),
        profile.layer_label()
    )?;
    let entities = format!(
        "{}, {}, {}, {}",
        units::count(s.variables, "variable", "variables"),
        units::count(s.constraints, "constraint", "constraints"),
        units::count(
            s.removed_constraints,
            "removed constraint",
            "removed constraints"
        ),
        units::count(s.terms, "stored term", "stored terms"),
    );
    line(out, "entities:", &entities)?;
    // A stream (stdin, a pipe) has no file size: its instance data is said
    // in the same units.
    let bytes = match doc.file_bytes {
        Some(b) => units::human_exact(b),
        None => format!("{} of instance data", units::human_exact(s.wire_bytes)),
    };
    writeln!(out, "{}{bytes}", style::label("file bytes:", 13))?;
    write_total(profile, out)
}

/// Where an image named by reference was read: which OMMX's local
/// registry, at which root, under which name, from where.
pub fn registry_line(origin: &Origin) -> String {
    let digest = origin
        .manifest_digest
        .as_deref()
        .map_or(String::new(), |d| format!(", manifest {d}"));
    format!(
        "{} at {}: {} ({}{digest})",
        origin.layout.describe(),
        origin.root,
        origin.image,
        origin.path
    )
}

/// The header line naming the total and what it counts.
pub fn write_total(profile: &Profile<'_>, out: &mut dyn Write) -> std::io::Result<()> {
    let (label, what) = match profile.account {
        Account::Memory => ("logical:", profile.estimate()),
        Account::Wire => (
            "wire:",
            "encoded protobuf, the size of the instance data".to_string(),
        ),
    };
    let bytes = profile.total_bytes();
    // The exact bytes beside the rounded ones, once.
    let exact = match bytes < 1024 {
        true => String::new(),
        false => format!("{} B, ", units::thousands(bytes)),
    };
    let total = format!(
        "{} ({exact}{what}; KiB/MiB are 1024-based)",
        units::human(bytes)
    );
    line(out, label, &total)
}

/// The real-memory line: what loading the instances would really take, an
/// estimate apart from the logical count above it. Nothing for the wire
/// account or when no estimate is known (a baseline read back without one).
pub fn write_real_memory(profile: &Profile<'_>, out: &mut dyn Write) -> std::io::Result<()> {
    let (Account::Memory, Some(real)) = (profile.account, profile.real_memory()) else {
        return Ok(());
    };
    let mut text = format!(
        "{} resident, ~{} peak to load in {}, estimated",
        about(real.resident_bytes),
        units::human(real.load_peak_bytes),
        real.runtime
    );
    if real.first_load_extra_bytes > 0 {
        text += &format!(
            "; a fresh process's first load adds ~{}",
            units::human(real.first_load_extra_bytes)
        );
    }
    line(out, "real memory:", &text)
}

/// An estimated figure, `~20.7 KiB`; nothing as it is, `0 B` (the process
/// holds no more once the load has returned than before it), never `~0 B`.
fn about(bytes: u64) -> String {
    match bytes {
        0 => units::human(0),
        _ => format!("~{}", units::human(bytes)),
    }
}
