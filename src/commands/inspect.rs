//! `memprof inspect`: the profile of one or more inputs in one format.

use std::path::PathBuf;

use anyhow::Result;

use super::{profile_inputs, read_inputs};
use crate::cli::InspectArgs;
use crate::output::{input_files, Output};
use crate::render::{self, Account, Format, View, ViewOptions};

/// The tree's default cut: levels shown, and the share under which siblings
/// fold into "(N others)".
const DEFAULT_DEPTH: usize = 3;
const DEFAULT_MIN_PERCENT: f64 = 2.0;

pub fn run(args: InspectArgs) -> Result<()> {
    let output = Output::from_arg(args.output.as_deref());
    let files = args.common.expand()?;
    output.check_not_input(&input_files(files.iter().map(PathBuf::as_path)))?;
    let view = ViewOptions {
        // A screenful by default (about 60 lines for the bundled fixtures).
        depth: args.depth.or((!args.all).then_some(DEFAULT_DEPTH)),
        min_percent: args
            .min_percent
            .unwrap_or(if args.all { 0.0 } else { DEFAULT_MIN_PERCENT }),
        top: args.top,
    };
    let both = args.profile.view == View::Both;
    let format = args
        .format
        .unwrap_or(if both { Format::Table } else { Format::Tree });
    let account = if both && format == Format::Table {
        Account::Memory
    } else {
        args.profile
            .single_account(&format!("--format {}", format.name()))?
    };
    let runs = read_inputs(
        &args.common,
        &files,
        args.profile.options(),
        args.profile.reading(),
    )?;
    let mut combined = None;
    let (profile, per_file) = profile_inputs(&runs, &mut combined, account);
    if both {
        let mut combined = None;
        let (wire, _) = profile_inputs(&runs, &mut combined, Account::Wire);
        return output.write_with(|out| {
            render::side_by_side::render(&profile, &wire, &view, out)?;
            if let Some(files) = &per_file {
                writeln!(out)?;
                render::files::render_table(files, out)?;
            }
            Ok(())
        });
    }
    output.write_with(|out| render::profile(&profile, per_file.as_deref(), &view, format, out))
}
