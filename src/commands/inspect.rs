//! `memprof inspect`: the profile of one or more inputs in one format.

use anyhow::Result;

use crate::api::{self, Account};
use crate::cli::InspectArgs;
use crate::output::{input_files, Output};
use crate::render::{self, Format, ProfileView, View, ViewOptions};

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
    let wire = both.then(|| profiled.profile(Account::Wire));
    let shown = ProfileView {
        wire: wire.as_ref(),
        files: per_file.as_deref(),
        ..ProfileView::new(&profile, view)
    };
    output.write_with(|out| render::write(&shown, format, out))
}
