//! `memprof explain`: how one path's bytes were computed.

use anyhow::Result;

use super::{read_with, selection};
use crate::cli::ExplainArgs;
use crate::drill::explain::Explainer;
use crate::output::{input_files, Output};
use crate::pass::{Pass, ProfileOptions};
use crate::render::{self, Profile};

pub fn run(args: ExplainArgs) -> Result<()> {
    let output = Output::from_arg(args.output.as_deref());
    output.check_not_input(&input_files([args.common.file.as_path()]))?;
    let paths: Vec<String> = args.paths.iter().map(|p| p.trim().to_string()).collect();
    let mut explainer = Explainer::new(&paths, args.group_by);
    let options = ProfileOptions {
        group_by: args.group_by,
        wire: false,
    };
    let report = read_with(
        &args.common,
        selection(args.common.layer),
        Pass {
            options,
            reading: args.reading.reading(),
            ..Pass::new(&mut explainer)
        },
    )?;
    let profile = Profile::new(&report);
    let explanations =
        explainer.checked_explanations(&profile, &args.common.file.display().to_string())?;
    output.write_with(|out| render::explain::render(&profile, &explanations, args.format, out))
}
