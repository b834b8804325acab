//! Where the profiles that `diff` and `check` compare come from: an instance
//! (archive, directory, raw bytes, gzip, stdin) decoded now, or a baseline
//! saved earlier with `memprof inspect --format json`. The kind is decided
//! by structure: text that parses as JSON is a baseline, anything else
//! goes to [`crate::input`] (a protobuf message may start with `{`).
//!
//! [`LoadOptions`] carries everything that shapes a profile, so that
//! every source of one command is profiled the same way.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use anyhow::{Context, Result};

use super::baseline::{self, BaselineError, BaselineInfo};
use super::{DecodeError, Input, Limits, Report, Selection};
use crate::pass::{self, Pass, Reading};
use crate::report::{Account, Profile};

/// How each input of a command is profiled.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadOptions {
    /// What the pass collects: family frames (`--group-by name`), and the
    /// wire view, which is then the one compared (`--view wire`).
    pub profile: pass::ProfileOptions,
    /// Only the N-th instance layer, without a root frame.
    pub layer: Option<usize>,
    /// No progress bar.
    pub quiet: bool,
    /// What an input may make memprof read (`--max-decompressed`).
    pub limits: Limits,
    /// Which schema raw input is and whose accounting counts v1 input.
    pub reading: Reading,
    /// The most threads one input decodes with (`None`: no cap).
    pub threads: Option<usize>,
}

impl LoadOptions {
    /// Which bytes are compared: encoded when the wire view is collected.
    pub fn account(&self) -> Account {
        if self.profile.wire {
            Account::Wire
        } else {
            Account::Memory
        }
    }

    fn selection(&self) -> Selection {
        self.layer.map_or(Selection::All, Selection::Layer)
    }
}

/// A loaded profile and what it was loaded from.
#[derive(Debug, Clone)]
pub struct Source {
    pub report: Report,
    /// Which of the report's accounts is compared.
    pub account: Account,
    /// Set when the input was a baseline.
    pub baseline: Option<BaselineInfo>,
}

impl Source {
    pub fn profile(&self) -> Profile<'_> {
        Profile::of(&self.report, self.account)
    }

    /// The file as given on the command line.
    pub fn name(&self) -> &str {
        &self.report.document.name
    }

    /// "baseline of X" or the instance's layer label.
    pub fn describe(&self) -> String {
        let layers = self.profile().layer_label();
        match &self.baseline {
            Some(info) => format!(
                "baseline of {}, {layers}",
                crate::report::escape_control(&info.input)
            ),
            None => layers,
        }
    }
}

/// Bytes read to decide whether a file is JSON.
const SNIFF: u64 = 4096;

/// How a file's first bytes say it could be a baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TextStart {
    /// A byte-order mark (UTF-8 or UTF-16): text for certain, since no
    /// protobuf message starts with 0xEF, 0xFE or 0xFF (their low three bits,
    /// a first tag's wire type, would be 7 or 6).
    Marked,
    /// `{` after blanks: JSON, or a protobuf message that happens to start
    /// so (a 123-byte description is `0a 7b …`); only a parse tells.
    Brace,
}

fn text_start(path: &Path) -> io::Result<Option<TextStart>> {
    let mut head = Vec::new();
    File::open(path)?.take(SNIFF).read_to_end(&mut head)?;
    Ok(if byte_order_mark(&head).is_some() {
        Some(TextStart::Marked)
    } else if baseline::looks_like_json_object(&head) {
        Some(TextStart::Brace)
    } else {
        None
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bom {
    Utf8,
    Utf16Le,
    Utf16Be,
}

fn byte_order_mark(bytes: &[u8]) -> Option<Bom> {
    match bytes {
        [0xef, 0xbb, 0xbf, ..] => Some(Bom::Utf8),
        [0xff, 0xfe, ..] => Some(Bom::Utf16Le),
        [0xfe, 0xff, ..] => Some(Bom::Utf16Be),
        _ => None,
    }
}

/// The text as UTF-8 without a byte-order mark: baselines saved by tools that
/// add one (PowerShell's `>` writes UTF-16) read like any other.
fn without_bom(bytes: Vec<u8>) -> Result<Vec<u8>, BaselineError> {
    let utf16 = |be: bool| {
        let units: Vec<u16> = bytes[2..]
            .chunks(2)
            .map(|pair| match (pair, be) {
                ([hi, lo], true) | ([lo, hi], false) => u16::from_be_bytes([*hi, *lo]),
                _ => 0xfffd,
            })
            .collect();
        String::from_utf16(&units)
            .map(String::into_bytes)
            .map_err(|_| BaselineError::Malformed("the file is not valid UTF-16 text".into()))
    };
    match byte_order_mark(&bytes) {
        None => Ok(bytes),
        Some(Bom::Utf8) => Ok(bytes[3..].to_vec()),
        Some(Bom::Utf16Le) => utf16(false),
        Some(Bom::Utf16Be) => utf16(true),
    }
}

fn load_baseline(path: &Path, name: &str, options: &LoadOptions) -> Result<Source> {
    let limit = options.limits.max_decompressed;
    let read = limit.min(baseline::MAX_BASELINE);
    let too_large = |len: u64| match len {
        len if len > limit => Err(BaselineError::TooLarge(limit)),
        len if len > baseline::MAX_BASELINE => Err(BaselineError::TooBig),
        _ => Ok(()),
    };
    let mut bytes = Vec::new();
    let stated = File::open(path)
        .and_then(|file| {
            // A file's stated size is refused before any of it is read.
            let stated = file.metadata()?.len();
            if too_large(stated).is_ok() {
                file.take(read.saturating_add(1)).read_to_end(&mut bytes)?;
            }
            Ok(stated)
        })
        .map_err(DecodeError::Io)
        .with_context(|| name.to_string())?;
    too_large(stated.max(bytes.len() as u64)).with_context(|| name.to_string())?;
    if options.account() == Account::Wire {
        anyhow::bail!(
            "{name}: a baseline holds the in-memory view only; compare wire views of instances"
        );
    }
    let bytes = without_bom(bytes).with_context(|| name.to_string())?;
    let (report, info) = baseline::parse(&bytes, name.to_string(), options.selection())
        .with_context(|| name.to_string())?;
    Ok(Source {
        report,
        account: options.account(),
        baseline: Some(info),
    })
}

fn load_instance(input: &Input, options: &LoadOptions) -> Result<Report> {
    let bar = crate::progress::labelled(options.quiet, &input.display_name());
    let mut nothing = ();
    let mut pass = Pass {
        options: options.profile,
        reading: options.reading,
        threads: options.threads,
        max_element: options.limits.max_element,
        observer: &mut nothing,
    };
    let report = super::read_with(input, options.selection(), &options.limits, &mut pass, &bar)
        .with_context(|| input.display_name());
    bar.finish_and_clear();
    report
}

fn instance_source(input: &Input, options: &LoadOptions) -> Result<Source> {
    Ok(Source {
        report: load_instance(input, options)?,
        account: options.account(),
        baseline: None,
    })
}

/// Loads a file (not a directory) as a baseline or an instance, decided by
/// structure: text that parses as JSON is a baseline; anything else goes to
/// the decoder, which decides by structure in turn. `name` names the file
/// in baseline errors.
fn load_file(path: &Path, name: &str, options: &LoadOptions) -> Result<Source> {
    let input = Input::Path(path.to_path_buf());
    // A missing or unreadable file falls through to the decoder, which
    // reports it in the usual words.
    match text_start(path).unwrap_or(None) {
        None => instance_source(&input, options),
        Some(TextStart::Marked) => load_baseline(path, name, options),
        Some(TextStart::Brace) => match load_baseline(path, name, options) {
            Err(baseline_error) if is_not_json(&baseline_error) => {
                // Not JSON after all: perhaps an instance whose bytes start
                // like it. If it is not one either, the JSON error says more.
                instance_source(&input, options).map_err(|_| baseline_error)
            }
            loaded => loaded,
        },
    }
}

fn is_not_json(err: &anyhow::Error) -> bool {
    matches!(
        err.downcast_ref::<BaselineError>(),
        Some(BaselineError::Syntax(_))
    )
}

/// Loads `arg` (a path, or `-` for stdin) as an instance or a baseline.
pub fn load(arg: &Path, options: &LoadOptions) -> Result<Source> {
    let input = Input::from_path(arg);
    match &input {
        Input::Path(path) if path.is_dir() => instance_source(&input, options),
        Input::Path(path) => load_file(path, &arg.display().to_string(), options),
        Input::Stdin => {
            // Deciding needs the content twice: spool it, to a file without
            // a name where the system has them (nothing is left behind,
            // however the process ends), reopened by its descriptor's path.
            let mut spool =
                tempfile::tempfile().context("<stdin>: cannot create a temporary file")?;
            let limit = options.limits.max_decompressed;
            let copied = io::copy(
                &mut io::stdin().lock().take(limit.saturating_add(1)),
                &mut spool,
            )
            .context("<stdin>: cannot read")?;
            if copied > limit {
                return Err(DecodeError::StreamTooLong(limit)).context("<stdin>");
            }
            let path = crate::output::descriptor_path(&spool);
            let mut source =
                load_file(&path, "<stdin>", options).map_err(|e| rename_stdin(e, &path))?;
            if source.baseline.is_none() {
                source.report.document.file_bytes = None;
            }
            source.report.document.name = "<stdin>".to_string();
            Ok(source)
        }
    }
}

/// Errors about the spool file name it as stdin.
fn rename_stdin(err: anyhow::Error, spool: &Path) -> anyhow::Error {
    let spool = spool.display().to_string();
    anyhow::anyhow!(crate::errors::joined(&err).replace(&spool, "<stdin>"))
}
