//! `memprof advise`: recommendations with measured savings.

use anyhow::Result;

use crate::api;
use crate::cli::AdviseArgs;
use crate::output::{input_files, Output};
use crate::render::{self, advice::AdviceView};

pub fn run(args: AdviseArgs) -> Result<()> {
    let output = Output::from_arg(args.output.as_deref());
    let files = args.common.expand()?;
    output.check_not_input(&input_files(files.iter().map(|f| f.as_path())))?;
    let options = args.common.options(&args.reading);
    let advice = api::advise(&api::inputs(&files), &options)?;
    let view = AdviceView {
        advice: &advice,
        min_severity: args.min_severity,
    };
    output.write_with(|out| render::write(&view, args.format, out))
}
