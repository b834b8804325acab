//! `memprof ls`: an input's layers.

use anyhow::Result;

use super::read;
use crate::cli::{Common, LsArgs};
use crate::input::Selection;
use crate::output::{input_files, Output};
use crate::render;

pub fn run(args: LsArgs) -> Result<()> {
    let output = Output::from_arg(args.output.as_deref());
    output.check_not_input(&input_files([args.file.as_path()]))?;
    let common = Common {
        file: args.file,
        layer: None,
        quiet: true,
        limits: args.limits,
    };
    let report = read(&common, Selection::ListOnly)?;
    output.write_with(|out| render::layers::render(&report.document, args.format, out))
}
