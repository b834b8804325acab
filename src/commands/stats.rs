//! `memprof stats`: size distributions per entity kind and family.

use anyhow::Result;

use super::{read_with, selection};
use crate::cli::StatsArgs;
use crate::drill::stats::StatsCollector;
use crate::output::{input_files, Output};
use crate::pass::Pass;
use crate::render::{self, Profile};

pub fn run(args: StatsArgs) -> Result<()> {
    let output = Output::from_arg(args.output.as_deref());
    output.check_not_input(&input_files([args.common.file.as_path()]))?;
    let mut stats = StatsCollector::new(args.kind);
    let report = read_with(
        &args.common,
        selection(args.common.layer),
        Pass {
            reading: args.reading.reading(),
            ..Pass::new(&mut stats)
        },
    )?;
    let profile = Profile::new(&report);
    let (kinds, families) = stats.report();
    output.write_with(|out| {
        render::stats::render(&profile, &kinds, &families, args.top, args.format, out)
    })
}
