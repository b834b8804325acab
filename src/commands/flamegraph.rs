//! `memprof flamegraph`: instances and archives as everywhere, plus folded
//! stacks (`memprof inspect --format folded | memprof flamegraph -o g.svg`),
//! told apart by [`crate::input::folded`]'s strict parse.

use std::fs::File;
use std::io::{self, Cursor, Read};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};

use super::{profile_inputs, read_inputs};
use crate::batch::FileRun;
use crate::cli::{FlamegraphArgs, Inputs};
use crate::input::{folded, Input};
use crate::output::{input_files, Output};
use crate::pass::{Pass, ProfileOptions, Reading};
use crate::render::{self, svg::SvgOptions};
use crate::report::Report;

/// Bytes looked at before deciding whether an input may be folded text.
const HEAD: u64 = 4096;

pub(super) fn run(args: FlamegraphArgs) -> Result<()> {
    let output = Output::from_arg(Some(&args.output));
    let files = args.common.expand()?;
    output.check_not_input(&input_files(files.iter().map(PathBuf::as_path)))?;
    let account = args.profile.single_account("a flamegraph")?;
    let options = SvgOptions {
        title: args.title,
        inverted: args.inverted,
        min_width: args.min_width,
    };
    let one = match files.as_slice() {
        [file] => read_one(
            file,
            &args.common,
            args.profile.options(),
            args.profile.reading(),
        )?,
        _ => None,
    };
    let runs = match one {
        Some(Read1::Folded { name, lines }) => {
            if args.profile.options() != ProfileOptions::default() {
                bail!("{name}: holds folded stacks, which --group-by and --view cannot change");
            }
            return output
                .write_with(|out| render::svg::render_folded(&name, &lines, &options, out));
        }
        Some(Read1::Instance(run)) => vec![run],
        None => read_inputs(
            &args.common,
            &files,
            args.profile.options(),
            args.profile.reading(),
        )?,
    };
    let mut combined = None;
    let (profile, _) = profile_inputs(&runs, &mut combined, account);
    output.write_with(|out| render::svg::render(&profile, &options, out))
}

enum Read1 {
    Folded {
        name: String,
        lines: Vec<folded::FoldedLine>,
    },
    Instance(FileRun<Report>),
}

/// Reads a single input that may be folded stacks. `None`: it is not (a
/// regular file or a directory), read it as any other input.
fn read_one(
    file: &Path,
    inputs: &Inputs,
    options: ProfileOptions,
    reading: Reading,
) -> Result<Option<Read1>> {
    let input = Input::from_path(file);
    let name = input.display_name();
    let max = inputs.limits.limits().max_decompressed;
    match &input {
        Input::Path(path) if path.is_dir() => Ok(None),
        Input::Path(path) => {
            let mut opened = File::open(path).with_context(|| name.clone())?;
            let regular = opened.metadata().with_context(|| name.clone())?.is_file();
            if regular {
                let mut head = Vec::new();
                (&mut opened).take(HEAD).read_to_end(&mut head)?;
                let complete = (head.len() as u64) < HEAD;
                if !folded::plausible(&head, complete) {
                    return Ok(None);
                }
                opened.read_to_end(&mut head)?;
                Ok(folded::parse(&head).map(|lines| Read1::Folded { name, lines }))
            } else {
                // A pipe or FIFO: what was read to decide cannot be read again.
                stream(opened, name, inputs, options, reading, max).map(Some)
            }
        }
        Input::Stdin => stream(io::stdin(), name, inputs, options, reading, max).map(Some),
    }
}

/// Reads a stream that cannot be rewound: folded stacks if the text parses
/// as such, else an instance or archive from the same bytes.
fn stream<R: Read + Send>(
    mut reader: R,
    name: String,
    inputs: &Inputs,
    options: ProfileOptions,
    reading: Reading,
    max: u64,
) -> Result<Read1> {
    let started = Instant::now();
    let mut head = Vec::new();
    (&mut reader)
        .take(HEAD)
        .read_to_end(&mut head)
        .with_context(|| name.clone())?;
    let complete = (head.len() as u64) < HEAD;
    let rest: Box<dyn Read + Send + '_> = if folded::plausible(&head, complete) {
        // Text: read all of it (within the limit) and parse it strictly.
        (&mut reader)
            .take(max.saturating_sub(head.len() as u64).saturating_add(1))
            .read_to_end(&mut head)
            .with_context(|| name.clone())?;
        if let Some(lines) = folded::parse(&head) {
            return Ok(Read1::Folded { name, lines });
        }
        Box::new(io::empty())
    } else {
        Box::new(reader)
    };
    let bar = crate::progress::labelled(inputs.quiet, &name);
    let mut nothing = ();
    let limits = inputs.limits.limits();
    let mut pass = Pass {
        options,
        reading,
        threads: None,
        max_element: limits.max_element,
        observer: &mut nothing,
    };
    let report = crate::input::read_stream(
        Cursor::new(head).chain(rest),
        name.clone(),
        super::selection(inputs.layer),
        &limits,
        &mut pass,
        &bar,
    )
    .with_context(|| name.clone());
    bar.finish_and_clear();
    Ok(Read1::Instance(FileRun {
        name,
        value: report?,
        elapsed: started.elapsed(),
    }))
}
