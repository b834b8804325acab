//! `memprof inspect`: the profile of one or more inputs in one format.

use anyhow::Result;

use crate::api::{self, Account};
use crate::cli::InspectArgs;
use crate::output::{input_files, Output};
use crate::render::{self, Format, View, ViewOptions};

pub fn run(args: InspectArgs) -> Result<()> {
    let output = Output::from_arg(args.output.as_deref());
    let files = args.common.expand()?;
    output.check_not_input(&input_files(files.iter().map(|f| f.as_path())))?;
    let view = ViewOptions::asked(args.depth, args.min_percent, args.all, args.top);
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
    let mut options = args.common.options(&args.profile.reading);
    args.profile.apply(&mut options);
    if !format.shows_real_memory() || account == Account::Wire {
        options.real_memory = api::Effort::ClosedForm;
    }
    let profiled = api::profile(&api::inputs(&files), &options)?;
    let profile = profiled.profile(account);
    let per_file = profiled.files();
    if both {
        let wire = profiled.profile(Account::Wire);
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
