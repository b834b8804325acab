//! `memprof explain`: how one path's bytes were computed.

use anyhow::Result;

use crate::api::{self, Input};
use crate::cli::ExplainArgs;
use crate::output::{input_files, Output};
use crate::render;

pub fn run(args: ExplainArgs) -> Result<()> {
    let output = Output::from_arg(args.output.as_deref());
    output.check_not_input(&input_files([args.common.file.as_path()]))?;
    let mut options = args.common.options(&args.reading);
    options.group_by = args.group_by;
    let input = Input::from_path(&args.common.file);
    let explained = api::explain(&input, &options, &args.paths)?;
    output.write_with(|out| render::write(&explained, args.format, out))
}
