//! `memprof report`: one HTML page holding the profile, the largest
//! entities, the families, the distributions and the advice, from one pass
//! over the input; with two inputs, the diff of the first (an instance or a
//! baseline) and the second.

use std::path::Path;

use anyhow::Result;

use crate::api::{self, Input};
use crate::cli::report::ReportArgs;
use crate::output::{input_files, Output};
use crate::render::html::Page;
use crate::render::{self, Format};

pub fn run(args: ReportArgs) -> Result<()> {
    let (old, new): (Option<&Path>, &Path) = match &args.file2 {
        Some(new) => (Some(&args.file), new),
        None => (None, &args.file),
    };
    let output = Output::from_arg(Some(&args.output));
    output.check_not_input(&input_files(old.into_iter().chain([new])))?;
    let reported = api::report(
        &Input::from_path(new),
        old.map(Input::from_path).as_ref(),
        &args.options(),
        args.top,
    )?;
    output.write_with(|out| render::write(&Page::of(&reported), Format::Html, out))
}
