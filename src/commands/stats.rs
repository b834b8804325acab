//! `memprof stats`: size distributions per entity kind and family.

use anyhow::Result;

use crate::api::{self, Input};
use crate::cli::StatsArgs;
use crate::output::{input_files, Output};
use crate::render::{self, stats::StatsView};

pub fn run(args: StatsArgs) -> Result<()> {
    let output = Output::from_arg(args.output.as_deref());
    output.check_not_input(&input_files([args.common.file.as_path()]))?;
    let options = args.common.options(&args.reading);
    let stats = api::stats(&Input::from_path(&args.common.file), &options, args.kind)?;
    let view = StatsView {
        stats: &stats,
        top: args.top,
    };
    output.write_with(|out| render::write(&view, args.format, out))
}
