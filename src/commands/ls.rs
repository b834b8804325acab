//! `memprof ls`: an input's layers, or the local registry's images.

use anyhow::Result;

use crate::api::{self, Input, Options};
use crate::cli::LsArgs;
use crate::output::{input_files, Output};
use crate::render;

pub fn run(args: LsArgs) -> Result<()> {
    let output = Output::from_arg(args.output.as_deref());
    output.check_not_input(&input_files(args.file.as_deref()))?;
    let options = Options {
        limits: args.limits.limits(),
        registry: args.registry.registry,
        ..Options::default()
    };
    let Some(file) = &args.file else {
        let listing = api::registry(&options, args.logical)?;
        return output.write_with(|out| render::write(&listing, args.format, out));
    };
    let document = api::layers(&Input::from_path(file), &options)?;
    output.write_with(|out| render::write(&document, args.format, out))
}
