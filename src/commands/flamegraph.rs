//! `memprof flamegraph`: instances and archives as everywhere, plus folded
//! stacks (`memprof inspect --format folded | memprof flamegraph -o g.svg`).

use anyhow::Result;

use crate::api::{self, Graph};
use crate::cli::FlamegraphArgs;
use crate::output::{input_files, Output};
use crate::render::svg::{Flamegraph, Stacks, SvgOptions};
use crate::render::{self, Format};

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
    let graph = api::flamegraph(&api::inputs(&files), &options)?;
    let profile;
    let stacks = match &graph {
        Graph::Folded { name, lines } => Stacks::Folded { name, lines },
        Graph::Profile(profiled) => {
            profile = profiled.profile(account);
            Stacks::Profile(&profile)
        }
    };
    let flamegraph = Flamegraph {
        stacks,
        options: svg,
    };
    output.write_with(|out| render::write(&flamegraph, Format::Svg, out))
}
