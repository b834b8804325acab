//! `memprof top`: the largest single entities.

use anyhow::Result;

use super::{read_with, selection};
use crate::cli::TopArgs;
use crate::drill::top::Top;
use crate::output::{input_files, Output};
use crate::pass::Pass;
use crate::render::{self, Profile};

pub fn run(args: TopArgs) -> Result<()> {
    let output = Output::from_arg(args.output.as_deref());
    output.check_not_input(&input_files([args.common.file.as_path()]))?;
    let mut top = Top::new(args.n, args.kind);
    let report = read_with(
        &args.common,
        selection(args.common.layer),
        Pass {
            reading: args.reading.reading(),
            ..Pass::new(&mut top)
        },
    )?;
    let profile = Profile::new(&report);
    let entities = top.into_sorted();
    let top_report = render::top::TopReport {
        profile: &profile,
        kind: args.kind.name(),
        n: args.n,
        entities: &entities,
    };
    output.write_with(|out| render::top::render(&top_report, args.format, out))
}
