//! `memprof advise`: recommendations with measured savings.

use std::path::PathBuf;

use anyhow::Result;

use super::{read_with, selection};
use crate::advise::Advisors;
use crate::cli::AdviseArgs;
use crate::output::{input_files, Output};
use crate::pass::Pass;
use crate::render::{self, advice::AdviceView, Profile};

pub fn run(args: AdviseArgs) -> Result<()> {
    let output = Output::from_arg(args.output.as_deref());
    let files = args.common.expand()?;
    output.check_not_input(&input_files(files.iter().map(PathBuf::as_path)))?;
    // Each input is read with its own advisors, several at a time,
    // under one bar counting the files.
    let several = files.len() > 1;
    let progress = crate::progress::files(args.common.quiet || !several, files.len());
    let runs = crate::batch::run_all(&files, |file, threads| {
        let common = args.common.for_file(file, several);
        let mut advisors = Advisors::default();
        let pass = Pass {
            threads,
            reading: args.reading.reading(),
            ..Pass::new(&mut advisors)
        };
        let report = read_with(&common, selection(common.layer), pass)?;
        let layers = advisors.advise(&report);
        progress.set_message(file.display().to_string());
        progress.inc(1);
        Ok((report, layers))
    })?;
    progress.finish_and_clear();
    let profiles: Vec<Profile<'_>> = runs.iter().map(|r| Profile::new(&r.value.0)).collect();
    let views: Vec<AdviceView<'_>> = profiles
        .iter()
        .zip(&runs)
        .map(|(profile, run)| AdviceView {
            profile,
            layers: &run.value.1,
            min_severity: args.min_severity,
        })
        .collect();
    output.write_with(|out| render::advice::render_many(&views, args.format, out))
}
