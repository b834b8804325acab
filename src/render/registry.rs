//! `memprof ls` without an input: the images of OMMX's local registry, by
//! name and tag, with their instance layers' file bytes (and, with
//! `--logical`, logical bytes).

use std::io::Write;

use anyhow::Result;
use comfy_table::CellAlignment;

use super::escape_control;
use super::format::Format;
use super::layers::LS;
use super::Document;
use crate::names::Choice;
use crate::profiled::envelope::Envelope;
use crate::profiled::registry::{Layout, ListedImage, Listing};
use crate::render::width::Give;
use crate::units::human;

/// The registry's images (`ls` without an input).
impl Document for Listing {
    const NAME: &'static str = "ls";
    const FORMATS: &'static [Choice<Format>] = LS;

    fn table(&self, out: &mut dyn Write) -> Result<()> {
        render_table(self, out)
    }

    fn data(&self, yaml: bool, out: &mut dyn Write) -> Result<()> {
        Envelope::untooled(self).write(yaml, out)
    }
}

fn render_table(listing: &Listing, out: &mut dyn Write) -> Result<()> {
    let layouts: Vec<String> = listing
        .layouts
        .iter()
        .map(|l| match l {
            Layout::Ommx29 => "OMMX 2.9.3's image directories".to_string(),
            Layout::Ommx30 => "OMMX 3.0's index.sqlite3".to_string(),
        })
        .collect();
    let title = match layouts.is_empty() {
        true => format!(
            "no OMMX local registry at {} (neither 2.9.3's image directories nor 3.0's \
             index.sqlite3)",
            listing.root
        ),
        false => format!(
            "OMMX's local registry at {}: {} ({})",
            listing.root,
            crate::units::count(listing.images.len() as u64, "image", "images"),
            layouts.join(" and ")
        ),
    };
    writeln!(
        out,
        "{}",
        crate::render::width::wrap(&escape_control(&title), "  ")
    )?;
    if listing.images.is_empty() {
        return Ok(());
    }
    let mut table = crate::render::width::table();
    let mut header = vec![
        "image",
        "tag",
        "OMMX",
        "updated",
        "instance layers",
        "file bytes",
    ];
    if listing.logical {
        header.push("logical bytes");
    }
    table.set_header(header.clone());
    table.column_mut(0).expect("a column").give(Give::KeepEnd);
    table.column_mut(1).expect("a column").give(Give::KeepStart);
    for image in &listing.images {
        table.add_row(row(image, listing.logical));
    }
    for col in 4..header.len() {
        if let Some(c) = table.column_mut(col) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    writeln!(out, "{table}")?;
    Ok(())
}

fn row(image: &ListedImage, logical: bool) -> Vec<String> {
    let layers = match image.other_layers {
        0 => image.instances.len().to_string(),
        n => format!("{} (+{n} other)", image.instances.len()),
    };
    // A digest stored as a tag, shortened as `ls` shortens layer digests.
    let tag = match image.tag.starts_with("sha256:") {
        true => image.tag.chars().take(7 + 12).collect::<String>() + "…",
        false => image.tag.clone(),
    };
    let mut cells = vec![
        escape_control(&image.name).into_owned(),
        escape_control(&tag).into_owned(),
        image.layout.name().to_string(),
        image.updated.as_deref().map_or("-".to_string(), |u| {
            escape_control(&to_second(u)).into_owned()
        }),
        layers,
        human(image.file_bytes),
    ];
    if logical {
        cells.push(image.logical_bytes.map_or("-".to_string(), human));
    }
    cells
}

/// An RFC 3339 time to the second, in UTC as `Z` (OMMX 3.0 writes
/// nanoseconds and `+00:00`); any other text as it is.
fn to_second(time: &str) -> String {
    match (
        time.get(..19),
        time.ends_with("+00:00") || time.ends_with('Z'),
    ) {
        (Some(second), true) if time.as_bytes().get(10) == Some(&b'T') => format!("{second}Z"),
        _ => time.to_string(),
    }
}
