//! The flamegraph, rendered in-process by inferno from the folded lines.

use std::io::Write;

use anyhow::{Context, Result};
use inferno::flamegraph::{self, color::BasicPalette, Direction, Palette};

use super::Profile;

#[derive(Debug, Clone, Default)]
pub struct SvgOptions {
    pub title: Option<String>,
    pub inverted: bool,
    pub min_width: Option<f64>,
}

pub fn render(profile: &Profile<'_>, options: &SvgOptions, out: &mut dyn Write) -> Result<()> {
    let lines: Vec<String> = profile
        .aggregate
        .folded_lines()
        .into_iter()
        .map(|(path, bytes)| format!("{path} {bytes}"))
        .collect();
    let mut opts = flamegraph::Options::default();
    opts.title = options.title.clone().unwrap_or_else(|| {
        format!(
            "memprof: {} ({})",
            profile.report.document.name,
            profile.layer_label()
        )
    });
    let what = match profile.account {
        super::Account::Memory => {
            format!("logical bytes as {} counts them", profile.accounting_name())
        }
        super::Account::Wire => "encoded protobuf bytes".to_string(),
    };
    opts.subtitle = Some(format!("{what}; total {} B", profile.total_bytes()));
    opts.count_name = "bytes".to_string();
    opts.colors = Palette::Basic(BasicPalette::Mem);
    opts.deterministic = true;
    opts.hash = true;
    if options.inverted {
        opts.direction = Direction::Inverted;
    }
    if let Some(w) = options.min_width {
        opts.min_width = w;
    }
    flamegraph::from_lines(&mut opts, lines.iter().map(String::as_str), out)
        .context("flamegraph rendering failed")
}
