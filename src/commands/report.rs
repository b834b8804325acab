//! `memprof report`: one HTML page holding the profile, the largest
//! entities, the families, the distributions and the advice, from one pass
//! over the input (the analyses ride on it together); with two inputs, the
//! diff of the first (an instance or a baseline) and the second.

use std::path::Path;

use anyhow::Result;

use super::{read_with, selection};
use crate::cli::report::ReportArgs;
use crate::cli::Common;
use crate::output::{input_files, Output};
use crate::pass::{Pass, ProfileOptions};
use crate::render::html::{self, Page, PageAnalyses};
use crate::report::Account;
use crate::source::{self, LoadOptions, Source};

pub fn run(args: ReportArgs) -> Result<()> {
    let (old_arg, new_arg): (Option<&Path>, &Path) = match &args.file2 {
        Some(new) => (Some(&args.file), new),
        None => (None, &args.file),
    };
    super::diff::one_stdin(old_arg.into_iter().chain([new_arg]))?;
    let output = Output::from_arg(Some(&args.output));
    output.check_not_input(&input_files(old_arg.into_iter().chain([new_arg])))?;
    let old = match old_arg {
        None => None,
        Some(path) => Some(source::load(path, &old_options(&args))?),
    };
    let common = Common {
        file: new_arg.to_path_buf(),
        layer: args.layer,
        quiet: args.quiet,
        limits: args.limits,
    };
    let mut analyses = PageAnalyses::new(args.top);
    let mut observer = analyses.observer();
    let pass = Pass {
        options: ProfileOptions {
            group_by: args.group_by,
            wire: true,
        },
        reading: args.reading.reading(),
        ..Pass::new(&mut observer)
    };
    let report = read_with(&common, selection(args.layer), pass)?;
    drop(observer);
    let found = analyses.finish(&report);
    let subject = Source {
        report,
        account: Account::Memory,
        baseline: None,
    };
    let page = Page::build(&subject, old.as_ref(), &found.analyses());
    output.write_with(|out| html::render(&page, out))
}

/// The old side is compared in logical bytes, the one view a baseline holds.
fn old_options(args: &ReportArgs) -> LoadOptions {
    LoadOptions {
        profile: ProfileOptions {
            group_by: args.group_by,
            wire: false,
        },
        layer: args.layer,
        quiet: args.quiet,
        limits: args.limits.limits(),
        reading: args.reading.reading(),
        threads: None,
    }
}
