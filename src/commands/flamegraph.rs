//! `memprof flamegraph`: instances and archives as everywhere, plus folded
//! stacks (`memprof inspect --format folded | memprof flamegraph -o g.svg`).

use anyhow::Result;

use crate::api::{self, Graph};
use crate::cli::FlamegraphArgs;
use crate::output::{input_files, Output};
use crate::render::{self, svg::SvgOptions};

pub(super) fn run(args: FlamegraphArgs) -> Result<()> {
    let output = Output::from_arg(Some(&args.output));
    let files = args.common.expand()?;
    output.check_not_input(&input_files(files.iter().map(|f| f.as_path())))?;
    let account = args.profile.single_account("a flamegraph")?;
    let svg = SvgOptions {
        title: args.title,
        inverted: args.inverted,
        reverse: args.reverse,
        min_width: args.min_width,
    };
    let mut options = args.common.options(&args.profile.reading);
    args.profile.apply(&mut options);
    match api::flamegraph(&api::inputs(&files), &options)? {
        Graph::Folded { name, lines } => {
            output.write_with(|out| render::svg::render_folded(&name, &lines, &svg, out))
        }
        Graph::Profile(profiled) => {
            let profile = profiled.profile(account);
            output.write_with(|out| render::svg::render(&profile, &svg, out))
        }
    }
}
