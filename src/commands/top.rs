//! `memprof top`: the largest single entities.

use anyhow::Result;

use crate::api::{self, Input};
use crate::cli::TopArgs;
use crate::output::{input_files, Output};
use crate::render;

pub fn run(args: TopArgs) -> Result<()> {
    let output = Output::from_arg(args.output.as_deref());
    output.check_not_input(&input_files([args.common.file.as_path()]))?;
    let options = args.common.options(&args.reading);
    let top = api::top(
        &Input::from_path(&args.common.file),
        &options,
        args.n,
        args.kind,
    )?;
    output.write_with(|out| render::write(&top, args.format, out))
}
