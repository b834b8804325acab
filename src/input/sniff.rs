//! What an input holds, decided once, by its structure, for every surface:
//! an instance (archive, directory, raw protobuf, any of them gzip'd), a
//! baseline (`memprof inspect --format json`, where the caller takes one:
//! `diff`, `check`, Python) or folded stacks (`frame;frame COUNT` lines,
//! where the caller takes them: `flamegraph`).
//!
//! Text is recognised from the first bytes and confirmed by a strict parse
//! of the whole: a JSON object (or a byte-order mark, which no protobuf
//! message starts with) may be a baseline, printable lines may be folded
//! stacks. A protobuf message can start like either (a 123-byte
//! description is `0a 7b ...`, `{` being 0x7b), so text that does not parse
//! is read as an instance, and when that fails too, the text's own error
//! is the one reported.
//!
//! Containers are recognised by structure too: gzip by its magic (which no
//! protobuf message can start with), a tar archive by its first header's
//! checksum, and everything else is an instance that only a decode confirms.
//!
//! Every input is read once: a pipe, a FIFO, `<(...)` or stdin is not
//! opened again. Text is read whole into memory (within the limits) and an
//! instance then decoded from those bytes; anything else streams.

use std::fs::File;
use std::io::{self, Cursor, Read};
use std::path::Path;

use anyhow::{Context, Result};

use super::baseline::{self, BaselineError, BaselineInfo, MAX_BASELINE};
use super::folded::{self, FoldedLine, Parsed};
use super::{DecodeError, Input, Limits, ProfiledInput, Selection};
use crate::pass::{Pass, PassError, V2PassError};

/// What an input turned out to hold.
#[derive(Debug)]
pub enum Content {
    /// Instances, profiled now.
    Instance(ProfiledInput),
    /// A profile saved earlier, and what it says of its origin.
    Baseline(ProfiledInput, BaselineInfo),
    /// Folded stacks.
    Folded(Vec<FoldedLine>),
}

/// What a caller takes besides instances.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Accept {
    pub baselines: bool,
    pub folded: bool,
}

/// Everything one read needs besides the input: which layers, within
/// which limits, profiled by which pass, with a progress bar or not.
pub struct Job<'a, 'p> {
    pub selection: Selection,
    pub limits: Limits,
    pub pass: &'a mut Pass<'p>,
    pub quiet: bool,
}

/// Bytes looked at before deciding whether an input may be text.
const SNIFF: usize = 4096;

/// What the first bytes say the input may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Guess {
    Instance,
    /// A byte-order mark: text for certain, since no protobuf message starts
    /// with 0xEF, 0xFE or 0xFF (their low three bits, a first tag's wire
    /// type, would be 7 or 6).
    MarkedText,
    /// `{` after blanks: JSON, or a protobuf message that happens to start
    /// so; only a parse tells.
    Json,
    Folded,
}

fn guess(head: &[u8], complete: bool, accept: Accept) -> Guess {
    if accept.baselines && byte_order_mark(head).is_some() {
        Guess::MarkedText
    } else if accept.baselines && baseline::looks_like_json_object(head) {
        Guess::Json
    } else if accept.folded && folded::plausible(head, complete) {
        Guess::Folded
    } else {
        Guess::Instance
    }
}

/// Reads `input` and tells what it holds, as `accept` allows. Errors name
/// the input.
pub fn read(input: &Input, accept: Accept, job: &mut Job<'_, '_>) -> Result<Content> {
    if accept == Accept::default() {
        return instance(input, job).map(Content::Instance);
    }
    let name = input.display_name();
    match input.path() {
        Some(path) if path.is_dir() => instance(input, job).map(Content::Instance),
        Some(path) => {
            // A file that cannot be opened is reported by the instance
            // reader, in its usual words.
            let Ok(file) = File::open(path) else {
                return instance(input, job).map(Content::Instance);
            };
            if file.metadata().is_ok_and(|m| m.is_file()) {
                from_file(input, path, file, accept, job)
            } else {
                // A pipe (`<(...)`), a FIFO or a device: read once.
                from_stream(file, &name, accept, job)
            }
        }
        None if matches!(input, Input::Artifact { .. } | Input::Image(_)) => {
            instance(input, job).map(Content::Instance)
        }
        None => from_stream(io::stdin(), &name, accept, job),
    }
}

/// A regular file: its head decides, and text is read from the start again.
fn from_file(
    input: &Input,
    path: &Path,
    mut file: File,
    accept: Accept,
    job: &mut Job<'_, '_>,
) -> Result<Content> {
    let name = input.display_name();
    let mut head = Vec::new();
    (&mut file)
        .take(SNIFF as u64)
        .read_to_end(&mut head)
        .map_err(DecodeError::Io)
        .with_context(|| name.clone())?;
    let complete = head.len() < SNIFF;
    let text = match guess(&head, complete, accept) {
        Guess::Instance => return instance(input, job).map(Content::Instance),
        text => text,
    };
    let stated = file
        .metadata()
        .map_err(DecodeError::Io)
        .with_context(|| name.clone())?
        .len();
    // A file's stated size is refused before any more of it is read.
    if text != Guess::Folded {
        text_size(stated, job.limits).with_context(|| name.clone())?;
    }
    let bytes = read_all(File::open(path), text_cap(text, job.limits))
        .map_err(DecodeError::Io)
        .with_context(|| name.clone())?;
    from_text(&bytes, text, &name, job, |job| instance(input, job))
}

/// A stream read once: its head decides; text is read whole into memory,
/// and an instance decoded from the bytes read so far and the rest.
fn from_stream(
    mut reader: impl Read + Send,
    name: &str,
    accept: Accept,
    job: &mut Job<'_, '_>,
) -> Result<Content> {
    let mut head = Vec::new();
    (&mut reader)
        .take(SNIFF as u64)
        .read_to_end(&mut head)
        .map_err(DecodeError::Io)
        .with_context(|| name.to_string())?;
    let complete = head.len() < SNIFF;
    let text = guess(&head, complete, accept);
    if text == Guess::Instance {
        let rest = Cursor::new(head).chain(reader);
        return streamed(rest, name, job).map(Content::Instance);
    }
    // Within the limit on streams: one byte more says it is longer.
    let limit = job.limits.max_decompressed;
    (&mut reader)
        .take((limit + 1).saturating_sub(head.len() as u64))
        .read_to_end(&mut head)
        .map_err(DecodeError::Io)
        .with_context(|| name.to_string())?;
    if head.len() as u64 > limit {
        return Err(DecodeError::StreamTooLong(limit)).context(name.to_string());
    }
    from_text(&head, text, name, job, |job| {
        streamed(Cursor::new(&head[..]), name, job)
    })
}

/// Text the head took for a baseline or folded stacks: parsed whole, and
/// read as an instance (`instance`) when it is not what it looked like.
fn from_text(
    bytes: &[u8],
    text: Guess,
    name: &str,
    job: &mut Job<'_, '_>,
    instance: impl FnOnce(&mut Job<'_, '_>) -> Result<ProfiledInput>,
) -> Result<Content> {
    match text {
        Guess::Folded => match folded::parse(bytes) {
            Parsed::Lines(lines) => Ok(Content::Folded(lines)),
            Parsed::NotFolded => instance(job).map(Content::Instance),
            // Perhaps an instance whose bytes read as text; if it is not one
            // either, the count is what is wrong.
            Parsed::Bad(error) => instance(job)
                .map(Content::Instance)
                .map_err(|_| anyhow::Error::new(error).context(name.to_string())),
        },
        Guess::MarkedText => from_baseline(bytes, name, job),
        Guess::Json => match from_baseline(bytes, name, job) {
            Err(json) if is_not_json(&json) => {
                // Not JSON after all: perhaps an instance whose bytes start
                // like it. If it is not one either, the JSON error says more
                // of text; of bytes that are no UTF-8 text (which JSON is),
                // the instance's.
                let text = is_utf8(bytes);
                instance(job)
                    .map(Content::Instance)
                    .map_err(|instance| if text { json } else { instance })
            }
            read => read,
        },
        Guess::Instance => unreachable!("instances are not text"),
    }
}

fn from_baseline(bytes: &[u8], name: &str, job: &Job<'_, '_>) -> Result<Content> {
    text_size(bytes.len() as u64, job.limits).with_context(|| name.to_string())?;
    if job.pass.options.wire {
        anyhow::bail!(
            "{name}: a baseline holds the in-memory view only; the wire view (--view wire, both) needs the instance itself"
        );
    }
    let bytes = without_bom(bytes).with_context(|| name.to_string())?;
    let (profiled, info) = baseline::parse(&bytes, name.to_string(), job.selection)
        .with_context(|| name.to_string())?;
    Ok(Content::Baseline(profiled, info))
}

/// Whether `bytes` are UTF-8 text (a character cut at the end allowed).
fn is_utf8(bytes: &[u8]) -> bool {
    match std::str::from_utf8(bytes) {
        Ok(_) => true,
        Err(e) => e.error_len().is_none(),
    }
}

fn is_not_json(err: &anyhow::Error) -> bool {
    matches!(
        err.downcast_ref::<BaselineError>(),
        Some(BaselineError::Syntax(_))
    )
}

/// A baseline's size against `--max-decompressed` and memprof's own cap.
fn text_size(len: u64, limits: Limits) -> Result<(), BaselineError> {
    match len {
        len if len > limits.max_decompressed => {
            Err(BaselineError::TooLarge(limits.max_decompressed))
        }
        len if len > MAX_BASELINE => Err(BaselineError::TooBig),
        _ => Ok(()),
    }
}

/// The most bytes of text read before its size is refused: one more than
/// the limit, so that a longer one is known to be.
fn text_cap(text: Guess, limits: Limits) -> u64 {
    match text {
        Guess::Folded => u64::MAX,
        _ => limits.max_decompressed.min(MAX_BASELINE).saturating_add(1),
    }
}

fn read_all(file: io::Result<File>, cap: u64) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    file?.take(cap).read_to_end(&mut bytes)?;
    Ok(bytes)
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
fn without_bom(bytes: &[u8]) -> Result<std::borrow::Cow<'_, [u8]>, BaselineError> {
    let utf16 = |be: bool| {
        let units: Vec<u16> = bytes[2..]
            .chunks(2)
            .map(|pair| match (pair, be) {
                ([hi, lo], true) | ([lo, hi], false) => u16::from_be_bytes([*hi, *lo]),
                _ => 0xfffd,
            })
            .collect();
        String::from_utf16(&units)
            .map(|text| text.into_bytes().into())
            .map_err(|_| BaselineError::Malformed("the file is not valid UTF-16 text".into()))
    };
    match byte_order_mark(bytes) {
        None => Ok(bytes.into()),
        Some(Bom::Utf8) => Ok(bytes[3..].into()),
        Some(Bom::Utf16Le) => utf16(false),
        Some(Bom::Utf16Be) => utf16(true),
    }
}

/// An instance that failed to decode (as v1, v2 or both) and starts like a
/// known other format is reported as that format.
pub(super) fn hint(err: DecodeError, head: &[u8]) -> DecodeError {
    use PassError::{Instance, Neither, V2};
    let rejected = |e: &V2PassError| matches!(e, V2PassError::Rejected(_));
    match (&err, looks_like(head)) {
        (DecodeError::Pass(Instance { .. } | Neither { .. }), Some(kind)) => {
            DecodeError::WrongKind(kind)
        }
        (DecodeError::Pass(V2 { source, .. }), Some(kind)) if rejected(source) => {
            DecodeError::WrongKind(kind)
        }
        _ => err,
    }
}

/// Magic numbers of formats people mistake for instances, for a helpful message.
pub(super) fn looks_like(head: &[u8]) -> Option<&'static str> {
    let trimmed = head
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .map(|i| &head[i..]);
    Some(match head {
        [0x89, b'P', b'N', b'G', ..] => "a PNG image",
        [0xff, 0xd8, 0xff, ..] => "a JPEG image",
        [b'%', b'P', b'D', b'F', ..] => "a PDF document",
        [b'P', b'K', 3, 4, ..] => "a zip archive",
        [0x28, 0xb5, 0x2f, 0xfd, ..] => "zstd-compressed data (decompress it first)",
        [b'B', b'Z', b'h', ..] => "bzip2-compressed data (decompress it first)",
        [0xfd, b'7', b'z', b'X', b'Z', 0, ..] => "xz-compressed data (decompress it first)",
        _ => match trimmed {
            Some(text) if json_start(text) => "JSON text",
            Some(text @ [b'<', ..]) => markup(text),
            _ => return super::text_formats::describe(head),
        },
    })
}

/// `{`, or `[` opening a JSON array (not a Markdown link `[![`, a TOML
/// table `[tool]` or `[[package]]`).
fn json_start(text: &[u8]) -> bool {
    match text.first() {
        Some(b'{') => true,
        Some(b'[') => {
            let start = text
                .iter()
                .position(|b| !b.is_ascii_whitespace() && *b != b'[');
            let Some(value) = start.map(|i| &text[i..]) else {
                return true;
            };
            let word = |w: &[u8]| {
                value.starts_with(w)
                    && value
                        .get(w.len())
                        .is_none_or(|b| !b.is_ascii_alphanumeric())
            };
            matches!(value[0], b'"' | b'-' | b'0'..=b'9' | b'{' | b']')
                || word(b"true")
                || word(b"false")
                || word(b"null")
        }
        _ => false,
    }
}

/// Text starting with `<`: an SVG image (memprof's flame graphs), HTML
/// (its report), other XML.
fn markup(text: &[u8]) -> &'static str {
    let lower = text.to_ascii_lowercase();
    let has = |tag: &[u8]| lower.windows(tag.len()).any(|w| w == tag);
    if has(b"<svg") {
        "an SVG image (XML text)"
    } else if has(b"<!doctype html") || has(b"<html") {
        "HTML text"
    } else if lower.starts_with(b"<?xml") {
        "XML text"
    } else {
        "XML or HTML text"
    }
}

/// Gzip's magic number. Safe to go by: no protobuf message starts with
/// 0x1f (its low three bits, a first tag's wire type, would be 7), and a
/// stream that starts so but does not inflate is reported as corrupt gzip.
pub(super) fn is_gzip(head: &[u8]) -> bool {
    head.starts_with(&[0x1f, 0x8b])
}

/// A tar archive is one whose first 512-byte header carries a valid
/// checksum: the octal number at offset 148 equals the sum of the header's
/// bytes with that field read as spaces (unsigned, or signed as some old
/// writers summed). "ustar" at offset 257 proves nothing: a protobuf string
/// can hold it there.
pub(super) fn is_tar(head: &[u8]) -> bool {
    let Some(header) = head.get(..512) else {
        return false;
    };
    let field = &header[148..156];
    let digits = field
        .iter()
        .copied()
        .skip_while(|&b| b == b' ')
        .take_while(|b| (b'0'..=b'7').contains(b))
        .collect::<Vec<u8>>();
    let rest_is_padding = field
        .iter()
        .skip_while(|&&b| b == b' ')
        .skip(digits.len())
        .all(|&b| b == b' ' || b == 0);
    if digits.is_empty() || !rest_is_padding {
        return false;
    }
    let Ok(stored) = u32::from_str_radix(std::str::from_utf8(&digits).unwrap_or(""), 8) else {
        return false;
    };
    let outside = header[..148].iter().chain(&header[156..]);
    let unsigned: u32 = outside.clone().map(|&b| u32::from(b)).sum::<u32>() + 8 * u32::from(b' ');
    let signed: i32 = outside.map(|&b| i32::from(b as i8)).sum::<i32>() + 8 * i32::from(b' ');
    stored == unsigned || i64::from(stored) == i64::from(signed)
}

/// An archive with no entries: tar's end-of-archive marker, a block of
/// zeros, comes first. (No protobuf message starts with a zero byte: field
/// number 0 does not exist.)
pub(super) fn is_empty_tar(head: &[u8]) -> bool {
    head.len() >= 512 && head[..512].iter().all(|&b| b == 0)
}

/// Profiles the instances of `input` (a path, a directory or bytes), under
/// a progress bar naming it unless `job.quiet`.
pub fn instance(input: &Input, job: &mut Job<'_, '_>) -> Result<ProfiledInput> {
    let name = input.display_name();
    let bar = crate::progress::labelled(job.quiet, &name);
    let profiled = super::read_with(input, job.selection, &job.limits, job.pass, &bar)
        .with_context(|| name.clone());
    bar.finish_and_clear();
    profiled
}

/// Profiles the instances of a stream that cannot be read again.
fn streamed(reader: impl Read + Send, name: &str, job: &mut Job<'_, '_>) -> Result<ProfiledInput> {
    let bar = crate::progress::labelled(job.quiet, name);
    let profiled = super::read_stream(
        reader,
        name.to_string(),
        job.selection,
        &job.limits,
        job.pass,
        &bar,
    )
    .with_context(|| name.to_string());
    bar.finish_and_clear();
    profiled
}
