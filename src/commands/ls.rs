//! `memprof ls`: an input's layers.

use anyhow::Result;

use crate::api::{self, Input, Options};
use crate::cli::LsArgs;
use crate::output::{input_files, Output};
use crate::render;

pub fn run(args: LsArgs) -> Result<()> {
    let output = Output::from_arg(args.output.as_deref());
    output.check_not_input(&input_files([args.file.as_path()]))?;
    let options = Options {
        limits: args.limits.limits(),
        ..Options::default()
    };
    let document = api::layers(&Input::from_path(&args.file), &options)?;
    output.write_with(|out| render::layers::render(&document, args.format, out))
}
