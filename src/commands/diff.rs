//! `memprof diff`: two profiles (instances or baselines) compared path by
//! path, or one instance under OMMX 2.9.3's and 3.0's accounting.

use std::path::Path;

use anyhow::{bail, Result};

use crate::api::{self, Input};
use crate::cli::compare::DiffArgs;
use crate::cli::AccountingArg;
use crate::output::{input_files, Output};
use crate::render::diff::svg::{DiffGraph, Widths};
use crate::render::diff::{DiffView, DiffViewOptions};
use crate::render::{self, Format};

pub fn run(args: DiffArgs) -> Result<()> {
    let migration = args.common.profile.reading.accounting == Some(AccountingArg::Both);
    let new_arg: &Path = match (&args.new, migration) {
        (Some(new), false) => new.as_path(),
        (None, true) => args.old.as_path(),
        (Some(_), true) => bail!(
            "--accounting 2.9,3.0 compares one input with itself (OMMX 2.9.3's count against OMMX 3.0's): give one file"
        ),
        (None, false) => bail!("diff needs OLD and NEW (or one file with --accounting 2.9,3.0)"),
    };
    let old_input = Input::from_path(&args.old);
    let inputs = input_files([args.old.as_path(), new_arg]);
    let output = Output::from_arg(args.output.as_deref());
    output.check_not_input(&inputs)?;
    let graphs = match &args.flamegraph {
        None => None,
        Some(path) if path.as_os_str() == "-" => {
            bail!("--flamegraph needs a file name: it writes two graphs (FILE and FILE.old.svg)")
        }
        Some(path) => {
            let old_path = render::diff::svg::old_graph_path(path);
            let new_graph = Output::File(path.to_path_buf());
            let old_graph = Output::File(old_path.clone());
            new_graph.check_not_input(&inputs)?;
            old_graph.check_not_input(&inputs)?;
            Some((new_graph, old_graph, old_path))
        }
    };
    let mut options = args.common.options()?;
    // A diff does not show the real-memory estimate.
    options.real_memory = api::Effort::ClosedForm;
    let (old, new) = if migration {
        api::migration(&old_input, &options)?
    } else {
        api::diff(&old_input, &Input::from_path(new_arg), &options)?
    };
    let view_options = DiffViewOptions {
        top: args.top,
        depth: args.depth,
    };
    let view = DiffView::new(&old, &new, view_options);
    // Render the graphs before writing anything, so a failure leaves no file.
    let rendered = match &graphs {
        None => None,
        Some((_, _, old_path)) => {
            let new_name = args.flamegraph.as_ref().expect("set").display().to_string();
            let old_name = old_path.display().to_string();
            let graph = |widths, companion| -> Result<Vec<u8>> {
                let mut svg = Vec::new();
                let graph = DiffGraph {
                    view: &view,
                    widths,
                    companion,
                };
                render::write(&graph, Format::Svg, &mut svg)?;
                Ok(svg)
            };
            Some((
                graph(Widths::New, &old_name)?,
                graph(Widths::Old, &new_name)?,
            ))
        }
    };
    output.write_with(|out| render::write(&view, args.format, out))?;
    if let (Some((new_graph, old_graph, _)), Some((new_svg, old_svg))) = (graphs, rendered) {
        new_graph.write_with(|out| Ok(out.write_all(&new_svg)?))?;
        old_graph.write_with(|out| Ok(out.write_all(&old_svg)?))?;
    }
    Ok(())
}
